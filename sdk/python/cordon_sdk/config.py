"""The bundle's `[config]` table, which the operator edits without rebuilding."""

import json

from . import _bindings


def get():
    """The `[config]` table as a dict; `{}` when the manifest has none."""
    _bindings.require()
    return json.loads(_bindings.config.get())
