"""Unpack an Office file into a folder, pretty-printing its XML parts."""

import sys
import zipfile
from pathlib import Path

import defusedxml.minidom


def main(office_file, folder):
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(office_file) as archive:
        names = archive.namelist()
        for name in names:
            data = archive.read(name)
            target = out / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if name.endswith((".xml", ".rels")):
                pretty = defusedxml.minidom.parseString(data).toprettyxml(indent="  ", encoding="utf-8")
                target.write_bytes(pretty)
            else:
                target.write_bytes(data)
    for name in sorted(names):
        print("%s %d" % (name, (out / name).stat().st_size))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: unpack.py OFFICE_FILE FOLDER", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
