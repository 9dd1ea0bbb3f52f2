"""The `{{name}}` bundle's tools.

Import every module you use at the top of this file: componentize-py keeps
what is imported while it builds, and nothing else.
"""

from cordon_sdk import InvalidInput, Tool, state, tool  # noqa: F401  (Tool is the component's export)


@tool("{{name}}.greet", read_only=False)
def greet(name: str, excited: bool = False) -> str:
    """Greet someone by name, and count the greetings.

    Args:
        name: Who to greet.
        excited: End with an exclamation mark.
    """
    if not name.strip():
        raise InvalidInput("name must not be blank")
    count = state.increment("{{name}}.greetings")
    return f"Hello, {name}{'!' if excited else '.'} (greeting {count})"
