#!/usr/bin/env python3
#===- zoo_cases.py - The Keras fixture models the zoo benchmark times ----===#
#
# Every .keras model under tests/fixtures/keras that kcc imports (not the
# error fixtures, not the custom-object ones), with the loss it trains
# with: its compile config's when the archive has one (kcc and Keras both
# read it), else the loss its fixture record names (NAME in a .json of
# its folder), else sparse categorical crossentropy (kcc's default).
#
#   python3 zoo_cases.py [--only NAME,...]   one line per model:
#                                            PATH<TAB>LOSS<TAB>FROM_LOGITS<TAB>COMPILED
#
#===----------------------------------------------------------------------===#

import argparse
import glob
import json
import os
import zipfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "keras")
SKIP_DIRS = {"custom", "custom_loss"}  # custom objects kcc and Keras cannot both load


def record_loss(path):
    """(loss, from_logits) of NAME's record in a .json beside it, or None."""
    name = os.path.splitext(os.path.basename(path))[0]
    for j in sorted(glob.glob(os.path.join(os.path.dirname(path), "*.json"))):
        try:
            doc = json.load(open(j))
        except (OSError, ValueError):
            continue
        rec = doc.get(name) if isinstance(doc, dict) else None
        if isinstance(rec, dict) and isinstance(rec.get("loss"), str):
            return rec["loss"], bool(rec.get("from_logits", False))
    return None


def cases():
    out = []
    for path in sorted(glob.glob(os.path.join(FIXTURES, "**", "*.keras"),
                                 recursive=True)):
        rel = os.path.relpath(path, FIXTURES)
        if os.path.basename(path).startswith("bad_") or \
                rel.split(os.sep)[0] in SKIP_DIRS:
            continue
        config = json.loads(zipfile.ZipFile(path).read("config.json"))
        compiled = bool(config.get("compile_config"))
        loss, logits = record_loss(path) or \
            ("sparse_categorical_crossentropy", False)
        out.append((os.path.abspath(path), loss, logits, compiled))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--only", default="", help="model names, comma-separated")
    args = p.parse_args()
    only = set(filter(None, args.only.split(",")))
    for path, loss, logits, compiled in cases():
        name = os.path.splitext(os.path.basename(path))[0]
        if only and name not in only:
            continue
        print(f"{path}\t{loss}\t{int(logits)}\t{int(compiled)}")


if __name__ == "__main__":
    main()
