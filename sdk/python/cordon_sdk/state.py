"""The agent's typed state, as the bundle's manifest grants it.

Values are JSON: what `get` returns is decoded, what `set` and friends take is
encoded for you. Writes are staged and commit with the step only if the call
succeeds. A key the manifest does not grant raises `StateError`.
"""

import json

from . import _bindings
from .convert import to_json
from .errors import StateError

_KINDS = {
    "StateError_Undeclared": "undeclared",
    "StateError_ReadOnly": "read-only",
    "StateError_Schema": "schema",
    "StateError_Conflict": "conflict",
}


def _host(operation, *arguments):
    _bindings.require()
    try:
        return operation(*arguments)
    except _bindings.Err as error:
        kind = _KINDS.get(type(error.value).__name__, "conflict")
        raise StateError(kind, error.value.value) from None


def get(key, default=None):
    """The value of `key`, including this call's own staged writes; `default` when unset."""
    value = _host(_bindings.state.get, key)
    return default if value is None else json.loads(value)


def set(key, value):
    """Stage replacing the value of `key`."""
    _host(_bindings.state.set, key, json.dumps(to_json(value)))


def remove(key):
    """Stage removing `key`."""
    _host(_bindings.state.remove, key)


def increment(key, delta=1):
    """Stage adding `delta` to the integer at `key`; returns the new value."""
    return _host(_bindings.state.increment, key, int(delta))


def append(key, item):
    """Stage appending `item` to the list at `key`."""
    _host(_bindings.state.append, key, json.dumps(to_json(item)))


def insert(key, item):
    """Stage adding `item` to the set at `key`."""
    _host(_bindings.state.insert, key, json.dumps(to_json(item)))


def set_field(key, field, value):
    """Stage setting `field` of the map at `key`."""
    _host(_bindings.state.set_field, key, field, json.dumps(to_json(value)))


def remove_field(key, field):
    """Stage removing `field` of the map at `key`."""
    _host(_bindings.state.remove_field, key, field)
