"""The component's `tool` export, which componentize-py calls.

componentize-py looks for a class named `Tool` in the app module; an app
re-exports this one (`from cordon_sdk import Tool`). It reports the
registered tools to `describe` and dispatches `call` to `registry.run`.
"""

import json

from . import _bindings, registry


class Tool(_bindings.Export):
    """Implements `cordon:plugin/tool` over the registered tools."""

    def describe(self):
        types = _bindings.types
        return [
            types.ToolSpec(
                name=spec.name,
                description=spec.description,
                input_schema=json.dumps(spec.input_schema),
                output_schema=None if spec.output_schema is None else json.dumps(spec.output_schema),
                annotations=types.ToolAnnotations(
                    read_only=spec.annotations.read_only,
                    destructive=spec.annotations.destructive,
                    idempotent=spec.annotations.idempotent,
                    open_world=spec.annotations.open_world,
                ),
            )
            for spec in registry.REGISTRY.values()
        ]

    def call(self, name, args):
        types = _bindings.types
        kind, text = registry.run(name, args)
        if kind == "ok":
            return types.ToolOutput(content=text)
        error = {
            "invalid-input": types.ToolError_InvalidInput,
            "denied": types.ToolError_Denied,
            "timeout": types.ToolError_Timeout,
        }.get(kind, types.ToolError_Failed)
        raise _bindings.Err(error(text))
