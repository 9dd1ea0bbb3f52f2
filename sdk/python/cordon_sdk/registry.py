"""The tools a component exports, and how one call runs.

`tool` registers a typed function under its full name (`BUNDLE.tool`). Its
input schema comes from the parameters' annotations, its description and the
parameters' descriptions from the docstring. `run` turns the host's JSON
arguments into the declared types, calls the function, and maps what it
returned or raised to a tool output or a tool error.
"""

import dataclasses
import json
import re
import traceback
import typing

from . import docstring, schema
from .convert import from_json, to_json
from .errors import Failed, InvalidInput, StateError, ToolError

# The host's rule for tool names, with the bundle's name before the first dot.
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}\.[a-z0-9_.-]+$")


@dataclasses.dataclass(frozen=True)
class Annotations:
    """Hints the permission policy and the resume logic rely on."""

    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False


@dataclasses.dataclass(frozen=True)
class Registered:
    """One exported tool."""

    name: str
    description: str
    function: typing.Callable
    hints: dict
    input_schema: dict
    output_schema: typing.Optional[dict]
    annotations: Annotations


REGISTRY = {}


def tool(name, *, description=None, read_only=False, destructive=False, idempotent=False, open_world=False):
    """Export the decorated function as the tool `name` (`BUNDLE.tool`).

    The function is returned unchanged, so it can still be called and tested
    as plain Python.
    """
    if not isinstance(name, str) or len(name) > 128 or not _NAME.match(name):
        raise ValueError(
            f"tool name {name!r} must be `bundle.tool`: lowercase letters, digits, `-`, `_` and `.`, "
            "starting with the bundle's name and a dot, at most 128 characters"
        )
    if name in REGISTRY:
        raise ValueError(f"tool {name!r} is exported twice")

    def register(function):
        summary, parameters = docstring.parse(function)
        text = description or summary
        if not text:
            raise ValueError(f"tool {name!r} needs a description: give `description=` or a docstring")
        REGISTRY[name] = Registered(
            name=name,
            description=text,
            function=function,
            hints=typing.get_type_hints(function, include_extras=True),
            input_schema=schema.input_schema(function, parameters),
            output_schema=schema.output_schema(function),
            annotations=Annotations(read_only, destructive, idempotent, open_world),
        )
        return function

    return register


def run(name, args_json):
    """Run the tool `name` on the JSON text `args_json`.

    Returns `("ok", json_text)` or `(kind, message)` for a tool error.
    """
    registered = REGISTRY.get(name)
    if registered is None:
        return InvalidInput.kind, f"unknown tool {name}"
    try:
        args = json.loads(args_json)
    except ValueError as error:
        return InvalidInput.kind, f"arguments for {name} are not JSON: {error}"
    if not isinstance(args, dict):
        return InvalidInput.kind, f"arguments for {name} must be a JSON object"
    try:
        typed = {key: from_json(registered.hints.get(key, typing.Any), value) for key, value in args.items()}
    except (TypeError, ValueError, KeyError) as error:
        return InvalidInput.kind, f"arguments for {name} do not fit: {error}"
    try:
        output = registered.function(**typed)
    except ToolError as error:
        return error.kind, error.message
    except StateError as error:
        converted = error.as_tool_error()
        return converted.kind, converted.message
    except TypeError as error:
        if _raised_by_the_call(error):
            return InvalidInput.kind, f"arguments for {name} do not fit: {error}"
        return Failed.kind, _describe(error)
    except Exception as error:  # a bug in the tool: report it, do not crash the instance
        return Failed.kind, _describe(error)
    try:
        return "ok", json.dumps(to_json(output))
    except (TypeError, ValueError) as error:
        return Failed.kind, f"output of {name} is not JSON: {error}"


def _raised_by_the_call(error):
    """Whether a TypeError came from binding the arguments, not from the body."""
    frames = traceback.extract_tb(error.__traceback__)
    return len(frames) == 1


def _describe(error):
    frame = traceback.extract_tb(error.__traceback__)[-1]
    return f"{type(error).__name__}: {error} (at {frame.filename}:{frame.lineno})"
