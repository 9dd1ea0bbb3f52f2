"""Cordon's SDK for tools written in Python.

A tool is a typed function; its JSON Schema comes from the annotations and its
description from the docstring::

    from cordon_sdk import Tool, tool, state

    @tool("csv.count", read_only=True)
    def count(text: str, column: str) -> int:
        \"\"\"Count the non-empty cells of one column.

        Args:
            text: The table, with a header row.
            column: The column's header.
        \"\"\"
        ...

Build it with componentize-py against Cordon's `tool-plugin` world (`cordon
build` does that from the bundle's `[build]` table). `Tool` must be imported
into the app module: it is the export componentize-py looks for.
"""

from . import config, log, state, tools
from .errors import Denied, Failed, InvalidInput, StateError, Timeout, ToolError
from .export import Tool
from .registry import Annotations, tool

__all__ = [
    "Annotations",
    "Denied",
    "Failed",
    "InvalidInput",
    "StateError",
    "Timeout",
    "Tool",
    "ToolError",
    "config",
    "log",
    "state",
    "tool",
    "tools",
]
