"""Print a Markdown report of a CSV file, as references/format.md lays it out.

Run by a sandbox backend's shell in Cordon's Python interpreter: it reads the
workspace (and this skill's folder) and writes nothing.

    python3 /skills/csv-report/scripts/report.py TABLE.csv
"""

import csv
import statistics
import sys


def kind(cells):
    """The type of a column's non-empty cells: integer, number or text."""
    try:
        [int(cell) for cell in cells]
        return "integer"
    except ValueError:
        pass
    try:
        [float(cell) for cell in cells]
        return "number"
    except ValueError:
        return "text"


def main(path):
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    columns = list(rows[0].keys()) if rows else []
    print(f"# Report: {path}")
    print(f"{len(rows)} rows, {len(columns)} columns.")
    print()
    print("| column | type | min | mean | max |")
    print("|---|---|---|---|---|")
    for column in columns:
        cells = [row[column].strip() for row in rows if row[column] and row[column].strip()]
        of_kind = kind(cells) if cells else "text"
        if of_kind == "text":
            print(f"| {column} | text | | | |")
            continue
        numbers = [float(cell) for cell in cells]
        low, high = min(numbers), max(numbers)
        shown = (lambda x: str(int(x))) if of_kind == "integer" else (lambda x: f"{x:g}")
        print(f"| {column} | {of_kind} | {shown(low)} | {statistics.mean(numbers):.2f} | {shown(high)} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: report.py TABLE.csv", file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1])
