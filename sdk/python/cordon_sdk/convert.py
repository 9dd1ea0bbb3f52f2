"""Values between JSON and the types a tool's signature names.

The host has validated the arguments against the tool's input schema before
the call, so conversion only builds the declared types: dataclasses from
objects, `Enum` members from their values, tuples and sets from arrays.
Results go the other way: dataclasses and enums become plain JSON values.
"""

import dataclasses
import enum
import types
import typing


def from_json(annotation, value):
    """`value`, decoded from JSON, as an instance of `annotation`."""
    if value is None:
        return None
    origin = typing.get_origin(annotation)
    arguments = typing.get_args(annotation)
    if origin is typing.Annotated:
        return from_json(arguments[0], value)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return annotation(value)
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        hints = typing.get_type_hints(annotation, include_extras=True)
        return annotation(**{name: from_json(hints.get(name, typing.Any), item) for name, item in value.items()})
    if typing.is_typeddict(annotation):
        hints = typing.get_type_hints(annotation, include_extras=True)
        return {name: from_json(hints.get(name, typing.Any), item) for name, item in value.items()}
    if origin in (typing.Union, types.UnionType):
        for argument in arguments:
            if _fits(argument, value):
                return from_json(argument, value)
        return value
    if origin in (list, typing.List) and arguments:
        return [from_json(arguments[0], item) for item in value]
    if origin in (set, frozenset) and arguments:
        return origin(from_json(arguments[0], item) for item in value)
    if origin is tuple and arguments:
        if len(arguments) == 2 and arguments[1] is Ellipsis:
            return tuple(from_json(arguments[0], item) for item in value)
        return tuple(from_json(argument, item) for argument, item in zip(arguments, value))
    if origin is dict and len(arguments) == 2:
        return {key: from_json(arguments[1], item) for key, item in value.items()}
    if annotation is float and isinstance(value, int):
        return float(value)
    return value


def to_json(value):
    """`value` as plain JSON data: dataclasses and enums unwrapped."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: to_json(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return to_json(value.value)
    if isinstance(value, dict):
        return {str(key): to_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_json(item) for item in value]
    return value


def _fits(annotation, value):
    """Whether `value` plausibly belongs to the union member `annotation`."""
    if annotation is type(None):
        return value is None
    if annotation is bool:
        return isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if annotation is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if annotation is str:
        return isinstance(value, str)
    origin = typing.get_origin(annotation) or annotation
    if origin in (list, tuple, set, frozenset):
        return isinstance(value, list)
    if origin is dict or dataclasses.is_dataclass(origin) or typing.is_typeddict(annotation):
        return isinstance(value, dict)
    if isinstance(origin, type) and issubclass(origin, enum.Enum):
        return value in {member.value for member in origin}
    return True
