"""JSON Schema from Python type hints.

A tool's parameters become the properties of its input schema, the same way
`schemars` derives one from a Rust struct: `str`, `int`, `float`, `bool`,
`None`, `list[T]`, `tuple[T, ...]`, `dict[str, T]`, `Optional[T]`,
`Union[...]`, `Literal[...]`, `Enum` subclasses, `TypedDict` and dataclasses.
A parameter with a default is optional; every other parameter is required.
Any other annotation is a build-time error naming the parameter, so a tool
never ships a schema that lies about what it accepts.
"""

import dataclasses
import enum
import inspect
import types
import typing


class SchemaError(TypeError):
    """An annotation that has no JSON Schema."""


def input_schema(function, descriptions=None):
    """The input schema of `function`: one property per parameter."""
    descriptions = descriptions or {}
    hints = typing.get_type_hints(function, include_extras=True)
    properties = {}
    required = []
    for name, parameter in inspect.signature(function).parameters.items():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise SchemaError(f"parameter `{name}` of `{function.__name__}`: *args and **kwargs have no schema")
        if name not in hints:
            raise SchemaError(f"parameter `{name}` of `{function.__name__}` has no type annotation")
        try:
            schema = of(hints[name])
        except SchemaError as error:
            raise SchemaError(f"parameter `{name}` of `{function.__name__}`: {error}") from None
        if name in descriptions:
            schema = {**schema, "description": descriptions[name]}
        if parameter.default is parameter.empty:
            required.append(name)
        else:
            schema = {**schema, "default": parameter.default}
        properties[name] = schema
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def output_schema(function):
    """The schema of `function`'s return annotation, or None when it has none."""
    hints = typing.get_type_hints(function, include_extras=True)
    if "return" not in hints or hints["return"] in (typing.Any, object):
        return None
    try:
        return of(hints["return"])
    except SchemaError as error:
        raise SchemaError(f"return value of `{function.__name__}`: {error}") from None


def of(annotation):
    """The JSON Schema of one annotation."""
    if annotation is typing.Any:
        return {}
    if annotation is type(None) or annotation is None:
        return {"type": "null"}
    if annotation is bool:
        return {"type": "boolean"}
    if annotation is int:
        return {"type": "integer"}
    if annotation is float:
        return {"type": "number"}
    if annotation is str:
        return {"type": "string"}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return {"enum": [member.value for member in annotation]}
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        return _record(annotation, {field.name for field in dataclasses.fields(annotation) if _required_field(field)})
    if typing.is_typeddict(annotation):
        return _record(annotation, set(annotation.__required_keys__))
    origin = typing.get_origin(annotation)
    arguments = typing.get_args(annotation)
    if origin is typing.Annotated:
        schema = of(arguments[0])
        for extra in arguments[1:]:
            if isinstance(extra, str):
                schema = {**schema, "description": extra}
            elif isinstance(extra, dict):
                schema = {**schema, **extra}
        return schema
    if origin is typing.Literal:
        return {"enum": list(arguments)}
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [of(argument) for argument in arguments]}
    if origin in (list, typing.List, set, frozenset):
        return {"type": "array", "items": of(arguments[0]) if arguments else {}}
    if origin is tuple:
        if len(arguments) == 2 and arguments[1] is Ellipsis:
            return {"type": "array", "items": of(arguments[0])}
        return {
            "type": "array",
            "prefixItems": [of(argument) for argument in arguments],
            "minItems": len(arguments),
            "maxItems": len(arguments),
        }
    if origin is dict:
        if arguments and arguments[0] is not str:
            raise SchemaError(f"`{_name(annotation)}` has keys that are not strings, which JSON objects cannot hold")
        return {"type": "object", "additionalProperties": of(arguments[1]) if arguments else {}}
    if annotation in (list, tuple, set):
        return {"type": "array"}
    if annotation is dict:
        return {"type": "object"}
    raise SchemaError(f"`{_name(annotation)}` has no JSON Schema; use str, int, float, bool, list, dict, Optional, Literal, an Enum, a TypedDict or a dataclass")


def _record(cls, required):
    hints = typing.get_type_hints(cls, include_extras=True)
    properties = {}
    for name, annotation in hints.items():
        try:
            properties[name] = of(annotation)
        except SchemaError as error:
            raise SchemaError(f"field `{name}` of `{cls.__name__}`: {error}") from None
    return {
        "type": "object",
        "properties": properties,
        "required": [name for name in hints if name in required],
        "additionalProperties": False,
    }


def _required_field(field):
    return field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING


def _name(annotation):
    return getattr(annotation, "__name__", None) or repr(annotation)
