"""The `csv` bundle: reads CSV tables and summarises their columns, with the
standard library only."""

import csv
import io
import statistics
from collections import Counter
from typing import Annotated, Optional, TypedDict

from cordon_sdk import InvalidInput, Tool, state, tool  # noqa: F401  (Tool is the component's export)


class Summary(TypedDict):
    column: str
    rows: int
    empty: int
    distinct: int
    numeric: bool
    min: Optional[float]
    max: Optional[float]
    mean: Optional[float]
    median: Optional[float]
    top: list[tuple[str, int]]


def _table(text, delimiter):
    if len(delimiter) != 1:
        raise InvalidInput(f"delimiter must be one character, not {delimiter!r}")
    reader = csv.DictReader(io.StringIO(text), delimiter=delimiter)
    if not reader.fieldnames:
        raise InvalidInput("the table has no header row")
    return reader


@tool("csv.columns", read_only=True, idempotent=True)
def columns(text: str, delimiter: str = ",") -> list[str]:
    """The column names of a CSV table, from its header row.

    Args:
        text: The table, header row first.
        delimiter: The character between cells.
    """
    return list(_table(text, delimiter).fieldnames)


@tool("csv.summary", read_only=True, idempotent=True)
def summary(
    text: str,
    column: str,
    delimiter: str = ",",
    top: Annotated[int, "How many of the most common values to list.", {"minimum": 0, "maximum": 50}] = 5,
) -> Summary:
    """Summarise one column of a CSV table: how many rows and empty cells, how
    many distinct values, the most common ones, and for numeric columns the
    minimum, maximum, mean and median.

    Args:
        text: The table, header row first.
        column: The header of the column to summarise.
        delimiter: The character between cells.
    """
    reader = _table(text, delimiter)
    if column not in reader.fieldnames:
        raise InvalidInput(f"no column {column!r}; the columns are {', '.join(reader.fieldnames)}")
    cells = [(row.get(column) or "").strip() for row in reader]
    present = [cell for cell in cells if cell]
    numbers = []
    for cell in present:
        try:
            numbers.append(float(cell))
        except ValueError:
            numbers = None
            break
    numeric = bool(present) and numbers is not None
    state.increment("csv.summaries")
    return Summary(
        column=column,
        rows=len(cells),
        empty=len(cells) - len(present),
        distinct=len(set(present)),
        numeric=numeric,
        min=min(numbers) if numeric else None,
        max=max(numbers) if numeric else None,
        mean=statistics.fmean(numbers) if numeric else None,
        median=statistics.median(numbers) if numeric else None,
        top=sorted(Counter(present).items(), key=lambda item: (-item[1], item[0]))[:top],
    )
