"""The `table` bundle of the csv-report skill: a CSV table's columns and
their types, with the standard library only."""

import csv
import io
from typing import TypedDict

from cordon_sdk import InvalidInput, Tool, tool  # noqa: F401  (Tool is the component's export)


class Column(TypedDict):
    name: str
    type: str
    empty: int


def _kind(cells):
    for cast, name in ((int, "integer"), (float, "number")):
        try:
            for cell in cells:
                cast(cell)
            return name
        except ValueError:
            continue
    return "text"


@tool("table.profile", read_only=True, idempotent=True)
def profile(text: str) -> list[Column]:
    """Each column of a CSV table, header row first: its name, its type
    (integer, number or text) and how many of its cells are empty.

    Args:
        text: The table, header row first.
    """
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames:
        raise InvalidInput("the table has no header row")
    rows = list(reader)
    columns = []
    for name in reader.fieldnames:
        cells = [(row.get(name) or "").strip() for row in rows]
        filled = [cell for cell in cells if cell]
        columns.append({"name": name, "type": _kind(filled) if filled else "text", "empty": len(cells) - len(filled)})
    return columns
