#!/usr/bin/env python3
"""Keeps docs/frontend.md's table of Keras layers equal to the registry's.

The table between the markers `<!-- layer-table:begin -->` and
`<!-- layer-table:end -->` is what `kcc --list-layers=markdown` prints
(frontend/keras/LayerRegistry.h). Without --fix, exits 1 when they differ
(ctest layer_table_current); with --fix, rewrites the table.

  update-layer-table.py PATH/TO/kcc [--fix]
"""
import pathlib
import subprocess
import sys

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "frontend.md"
BEGIN, END = "<!-- layer-table:begin -->\n", "<!-- layer-table:end -->\n"


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    table = subprocess.run([sys.argv[1], "--list-layers=markdown"],
                           capture_output=True, text=True, check=True).stdout
    text = DOC.read_text()
    if BEGIN not in text or END not in text:
        print(f"{DOC}: no {BEGIN.strip()} ... {END.strip()} markers")
        return 1
    head, rest = text.split(BEGIN, 1)
    current, tail = rest.split(END, 1)
    if current == table:
        print("docs/frontend.md: the layer table is the registry's")
        return 0
    if "--fix" in sys.argv[2:]:
        DOC.write_text(head + BEGIN + table + END + tail)
        print("docs/frontend.md: layer table rewritten")
        return 0
    print("docs/frontend.md's layer table differs from `kcc --list-layers="
          "markdown`; run scripts/update-layer-table.py build/bin/kcc --fix")
    return 1


if __name__ == "__main__":
    sys.exit(main())
