"""The Python SDK's pure parts: schemas from type hints, docstrings, argument
conversion, and how a call's outcome maps to the tool contract. They run on
any Python 3.10 or newer, without a component build."""

import dataclasses
import enum
import json
import sys
import unittest
from pathlib import Path
from typing import Annotated, Literal, Optional, TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cordon_sdk import Denied, InvalidInput, StateError, registry, schema, tool  # noqa: E402


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Point:
    x: float
    y: float
    label: str = ""


class Options(TypedDict, total=False):
    limit: int


class SchemaFromHints(unittest.TestCase):
    def test_parameters_become_properties_and_defaults_make_them_optional(self):
        def f(name: str, count: int = 3, ratio: float = 0.5, on: bool = False):
            pass

        got = schema.input_schema(f)
        self.assertEqual(got["required"], ["name"])
        self.assertEqual(got["properties"]["name"], {"type": "string"})
        self.assertEqual(got["properties"]["count"], {"type": "integer", "default": 3})
        self.assertEqual(got["properties"]["ratio"]["type"], "number")
        self.assertEqual(got["properties"]["on"]["type"], "boolean")
        self.assertFalse(got["additionalProperties"])

    def test_containers_unions_literals_enums_and_records(self):
        def f(
            tags: list[str],
            scores: dict[str, int],
            maybe: Optional[int],
            mode: Literal["fast", "slow"],
            colour: Colour,
            point: Point,
            options: Options,
            pair: tuple[int, str],
        ):
            pass

        got = schema.input_schema(f)["properties"]
        self.assertEqual(got["tags"], {"type": "array", "items": {"type": "string"}})
        self.assertEqual(got["scores"], {"type": "object", "additionalProperties": {"type": "integer"}})
        self.assertEqual(got["maybe"], {"anyOf": [{"type": "integer"}, {"type": "null"}]})
        self.assertEqual(got["mode"], {"enum": ["fast", "slow"]})
        self.assertEqual(got["colour"], {"enum": ["red", "blue"]})
        self.assertEqual(got["point"]["required"], ["x", "y"])
        self.assertEqual(got["options"]["required"], [])
        self.assertEqual(got["pair"]["prefixItems"], [{"type": "integer"}, {"type": "string"}])

    def test_annotated_adds_descriptions_and_constraints(self):
        def f(n: Annotated[int, "How many.", {"minimum": 1}]):
            pass

        self.assertEqual(
            schema.input_schema(f)["properties"]["n"],
            {"type": "integer", "description": "How many.", "minimum": 1},
        )

    def test_a_type_without_a_schema_is_an_error_naming_the_parameter(self):
        def f(when: complex):
            pass

        with self.assertRaisesRegex(schema.SchemaError, "parameter `when` of `f`.*complex"):
            schema.input_schema(f)

    def test_a_missing_annotation_is_an_error(self):
        def f(x):
            pass

        with self.assertRaisesRegex(schema.SchemaError, "parameter `x` of `f` has no type annotation"):
            schema.input_schema(f)

    def test_dicts_with_non_string_keys_are_refused(self):
        def f(x: dict[int, str]):
            pass

        with self.assertRaisesRegex(schema.SchemaError, "keys that are not strings"):
            schema.input_schema(f)


class Registration(unittest.TestCase):
    def setUp(self):
        registry.REGISTRY.clear()

    def test_the_docstring_gives_the_description_and_parameter_texts(self):
        @tool("demo.greet", read_only=True)
        def greet(name: str, loud: bool = False) -> str:
            """Greet someone
            by name.

            Args:
                name: Who to greet; the text
                    goes on.
                loud: Shout.
            """
            return f"hello {name}"

        spec = registry.REGISTRY["demo.greet"]
        self.assertEqual(spec.description, "Greet someone by name.")
        self.assertEqual(spec.input_schema["properties"]["name"]["description"], "Who to greet; the text goes on.")
        self.assertEqual(spec.output_schema, {"type": "string"})
        self.assertTrue(spec.annotations.read_only)
        self.assertEqual(greet("x"), "hello x", "the function stays callable")

    def test_names_must_be_bundle_dot_tool_and_unique(self):
        with self.assertRaisesRegex(ValueError, "must be `bundle.tool`"):
            tool("greet")
        with self.assertRaisesRegex(ValueError, "must be `bundle.tool`"):
            tool("Demo.greet")

        @tool("demo.once")
        def once() -> None:
            """Once."""

        with self.assertRaisesRegex(ValueError, "exported twice"):
            tool("demo.once")

    def test_a_tool_without_a_description_is_refused(self):
        with self.assertRaisesRegex(ValueError, "needs a description"):

            @tool("demo.silent")
            def silent() -> None:
                pass


class Running(unittest.TestCase):
    def setUp(self):
        registry.REGISTRY.clear()

        @tool("demo.move")
        def move(point: Point, colour: Colour, by: float = 1) -> Point:
            """Move a point."""
            if by < 0:
                raise InvalidInput("by must not be negative")
            return Point(point.x + by, point.y, colour.value)

        @tool("demo.broken")
        def broken() -> int:
            """Always fails."""
            return 1 // 0

        @tool("demo.state")
        def state_tool() -> int:
            """Touches state it was not granted."""
            raise StateError("undeclared", "key `x` is not declared")

        @tool("demo.refuses")
        def refuses() -> int:
            """Refuses."""
            raise Denied("not today")

        @tool("demo.unserialisable")
        def unserialisable() -> object:
            """Returns something JSON cannot hold."""
            return object()

    def test_arguments_arrive_typed_and_the_result_leaves_as_json(self):
        kind, text = registry.run("demo.move", json.dumps({"point": {"x": 1, "y": 2}, "colour": "red", "by": 2}))
        self.assertEqual(kind, "ok")
        self.assertEqual(json.loads(text), {"x": 3.0, "y": 2, "label": "red"})

    def test_raised_tool_errors_keep_their_kind(self):
        self.assertEqual(
            registry.run("demo.move", json.dumps({"point": {"x": 1, "y": 2}, "colour": "red", "by": -1})),
            ("invalid-input", "by must not be negative"),
        )
        self.assertEqual(registry.run("demo.refuses", "{}"), ("denied", "not today"))

    def test_a_bug_is_a_failure_naming_the_exception_and_line(self):
        kind, text = registry.run("demo.broken", "{}")
        self.assertEqual(kind, "failed")
        self.assertIn("ZeroDivisionError", text)
        self.assertIn("test_sdk.py:", text)

    def test_an_uncaught_state_error_is_denied_for_an_undeclared_key(self):
        kind, text = registry.run("demo.state", "{}")
        self.assertEqual(kind, "denied")
        self.assertIn("undeclared", text)

    def test_unknown_tools_and_bad_arguments_are_invalid_input(self):
        self.assertEqual(registry.run("demo.nope", "{}"), ("invalid-input", "unknown tool demo.nope"))
        self.assertEqual(registry.run("demo.move", "[1]")[0], "invalid-input")
        self.assertEqual(registry.run("demo.move", "not json")[0], "invalid-input")
        kind, text = registry.run("demo.move", json.dumps({"colour": "red"}))
        self.assertEqual(kind, "invalid-input")
        self.assertIn("point", text)

    def test_an_output_json_cannot_hold_is_a_failure(self):
        kind, text = registry.run("demo.unserialisable", "{}")
        self.assertEqual(kind, "failed")
        self.assertIn("not JSON", text)


if __name__ == "__main__":
    unittest.main()
