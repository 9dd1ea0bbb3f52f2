"""Fill a PDF form's text fields from a JSON file, or list its fields."""

import argparse
import json
import os
import shutil
import sys
import tempfile

from pypdf import PdfReader, PdfWriter

from fields import text_fields


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--list", action="store_true", help="list the form's fields and stop")
    parser.add_argument("form")
    parser.add_argument("values", nargs="?")
    parser.add_argument("output", nargs="?")
    args = parser.parse_args()
    if args.list:
        print(text_fields(args.form))
        return 0
    if not args.values or not args.output:
        parser.error("VALUES and OUTPUT are needed to fill a form")
    with open(args.values) as file:
        values = json.load(file)
    reader = PdfReader(args.form)
    unknown = sorted(set(values) - set(reader.get_fields() or {}))
    if unknown:
        print("unknown fields: " + ", ".join(unknown), file=sys.stderr)
        return 2
    writer = PdfWriter()
    writer.append(reader)
    writer.update_page_form_field_values(writer.pages[0], values, auto_regenerate=False)
    # Written to a temporary file first, then moved: a failed write leaves
    # no half form behind.
    with tempfile.NamedTemporaryFile(suffix=".pdf", delete=False) as scratch:
        writer.write(scratch)
    shutil.move(scratch.name, args.output)
    print(text_fields(args.output))
    print("wrote %s (%d bytes)" % (args.output, os.path.getsize(args.output)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
