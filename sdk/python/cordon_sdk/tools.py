"""Calls to other tools, for bundles whose manifest grants `tools`.

Each call passes the run's gate (the permission policy and the hooks) like a
call the model makes. A refusal or a failure raises the matching `ToolError`.
"""

import json

from . import _bindings
from .convert import to_json
from .errors import TOOL_ERRORS, Failed


def call(name, args):
    """Call the tool `name` with `args` (a dict); returns its decoded output."""
    _bindings.require()
    try:
        output = _bindings.tools.call(name, json.dumps(to_json(args)))
    except _bindings.Err as error:
        kind = type(error.value).__name__.removeprefix("ToolError_")
        kind = {"InvalidInput": "invalid-input"}.get(kind, kind.lower())
        raise TOOL_ERRORS.get(kind, Failed)(error.value.value) from None
    return json.loads(output.content)
