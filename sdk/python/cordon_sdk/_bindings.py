"""The bindings componentize-py generates for the `tool-plugin` world.

They exist only while a component is built (componentize-py writes the
`wit_world` package and snapshots every module imported at build time), so
they are imported here, once, at the top level. Outside a build, as in the
SDK's own tests, `wit_world` is None and only the pure parts of the SDK work.
"""

try:
    import wit_world
    from componentize_py_types import Err
    from wit_world.exports import Tool as Export
    from wit_world.imports import config, log, state, tools, types
except ImportError:
    wit_world = None
    Err = None
    Export = object
    config = log = state = tools = types = None


def require():
    """Raise unless running inside a built component."""
    if wit_world is None:
        raise RuntimeError("cordon_sdk reaches the host only inside a component built with componentize-py")
