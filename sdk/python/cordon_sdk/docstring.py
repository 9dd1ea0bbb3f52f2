"""A tool's description and its parameters' descriptions, from its docstring.

The first paragraph describes the tool. An `Args:` section (Google style)
describes the parameters: `name: text`, continued on more-indented lines.
"""

import inspect


def parse(function):
    """`(description, {parameter: description})` of `function`."""
    text = inspect.getdoc(function) or ""
    paragraphs = text.split("\n\n")
    description = " ".join(paragraphs[0].split()) if text else ""
    parameters = {}
    current = None
    in_args = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped in ("Args:", "Arguments:", "Parameters:"):
            in_args = True
            current = None
            continue
        if not in_args:
            continue
        if not stripped:
            current = None
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            in_args = False
            continue
        name, colon, rest = stripped.partition(":")
        if colon and name.isidentifier() and (current is None or indent <= current[1]):
            current = (name, indent)
            parameters[name] = rest.strip()
        elif current is not None:
            parameters[current[0]] = f"{parameters[current[0]]} {stripped}".strip()
    return description, parameters
