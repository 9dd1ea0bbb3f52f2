"""Messages and progress for the operator, as events attributed to the bundle.

Messages past the manifest's output limit are dropped, and the host records
that it dropped them.
"""

from . import _bindings


def _log(level, message):
    _bindings.require()
    _bindings.log.log(getattr(_bindings.log.Level, level), str(message))


def trace(message):
    """A message for whoever debugs the tool."""
    _log("TRACE", message)


def debug(message):
    """A detail of what the tool does."""
    _log("DEBUG", message)


def info(message):
    """Something the operator may want to know."""
    _log("INFO", message)


def warn(message):
    """Something that went wrong but did not stop the tool."""
    _log("WARN", message)


def error(message):
    """Something that stopped the tool."""
    _log("ERROR", message)


def progress(done, total=None, message=""):
    """How far a long call has come: `done` of `total` units."""
    _bindings.require()
    _bindings.log.progress(int(done), None if total is None else int(total), str(message))
