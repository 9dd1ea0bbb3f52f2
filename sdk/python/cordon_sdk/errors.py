"""The errors a tool raises and the host's capabilities return.

A tool fails by raising one of the `ToolError` kinds; the model sees the kind
and the message. `StateError` is what a state operation raises when the
bundle's manifest does not grant it or the value breaks the key's schema; left
uncaught in a tool it becomes `denied` (undeclared or read-only key) or
`failed` (schema or conflict), as in the Rust SDK.
"""


class ToolError(Exception):
    """Why a tool call did not produce an output."""

    kind = "failed"

    def __init__(self, message):
        super().__init__(message)
        self.message = str(message)

    def __str__(self):
        return self.message


class InvalidInput(ToolError):
    """The arguments do not make sense for this tool."""

    kind = "invalid-input"


class Denied(ToolError):
    """The tool refused, or the host refused it something."""

    kind = "denied"


class Failed(ToolError):
    """The tool ran and could not do what was asked."""

    kind = "failed"


class Timeout(ToolError):
    """The tool gave up waiting for something."""

    kind = "timeout"


TOOL_ERRORS = {error.kind: error for error in (InvalidInput, Denied, Failed, Timeout)}


class StateError(Exception):
    """A state operation the host refused: `kind` is `undeclared`,
    `read-only`, `schema` or `conflict`."""

    def __init__(self, kind, message):
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message

    def as_tool_error(self):
        """The tool error this state error becomes when a tool leaves it uncaught."""
        if self.kind in ("undeclared", "read-only"):
            return Denied(str(self))
        return Failed(str(self))
