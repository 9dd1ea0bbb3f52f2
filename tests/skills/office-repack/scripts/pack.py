"""Pack a folder unpacked by unpack.py into an Office file, condensing its XML."""

import sys
import zipfile
from pathlib import Path

import defusedxml.minidom


def condensed(data):
    """The XML without the whitespace pretty-printing added."""
    document = defusedxml.minidom.parseString(data)
    for node in list(_text_nodes(document)):
        if not node.data.strip():
            node.parentNode.removeChild(node)
    return document.toxml(encoding="UTF-8")


def _text_nodes(node):
    for child in node.childNodes:
        if child.nodeType == child.TEXT_NODE:
            yield child
        else:
            yield from _text_nodes(child)


def main(folder, office_file):
    root = Path(folder)
    parts = sorted(path for path in root.rglob("*") if path.is_file())
    # [Content_Types].xml comes first, as Office expects.
    parts.sort(key=lambda path: path.name != "[Content_Types].xml")
    with zipfile.ZipFile(office_file, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in parts:
            name = path.relative_to(root).as_posix()
            data = path.read_bytes()
            if name.endswith((".xml", ".rels")):
                data = condensed(data)
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            archive.writestr(info, data, zipfile.ZIP_DEFLATED)
            print("%s %d" % (name, len(data)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: pack.py FOLDER OFFICE_FILE", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
