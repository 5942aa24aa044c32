#!/usr/bin/env python3
"""Checks the include direction of kcc's stages (docs/architecture.md):

    ir -> passes -> codegen -> engine -> frontend/training -> tools

with runtime/ beneath them all and including none of them (nor MLIR or
LLVM), config/ (the training configuration, plain data on LLVM support)
beneath passes/ and frontend/ and including no MLIR, the layer API
(frontend/) beside ir/, and nothing but the examples themselves including
examples/. Prints every include that breaks it, with
its file and line, and exits 1 if there is one.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
STAGES = {"runtime", "config", "ir", "passes", "codegen", "engine",
          "frontend", "tools", "python", "examples", "include"}
# What each folder may include of the project, besides itself.
ALLOWED = {
    "runtime": set(),
    "config": set(),
    "ir": {"runtime"},
    "passes": {"ir", "config", "runtime"},
    "codegen": {"ir", "passes", "config", "runtime"},
    "engine": {"ir", "passes", "codegen", "config", "runtime"},
    # The layer API traces into ir/; the Keras importer fills the training
    # configuration (config/) and never reaches the passes; only
    # frontend/training reaches the engine.
    "frontend": {"ir", "config", "runtime"},
    "frontend/training": {"ir", "passes", "codegen", "engine", "config",
                          "runtime", "kcc", "frontend"},
    "include": {"frontend", "engine", "passes", "config", "runtime",
                "codegen"},
    "tools": {"ir", "passes", "codegen", "engine", "frontend", "config",
              "runtime", "kcc"},
    # The Python package's module sits where the tools do.
    "python": {"ir", "passes", "codegen", "engine", "frontend", "config",
               "runtime", "kcc"},
}
THIRD_PARTY_BANNED = {"runtime": ("mlir/", "llvm/"), "config": ("mlir/",)}
INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^">]+)[">]')


def folder_of(path):
    rel = path.relative_to(ROOT).as_posix()
    if rel.startswith("frontend/training/"):
        return "frontend/training"
    return rel.split("/", 1)[0]


def main():
    errors = []
    for path in sorted(ROOT.rglob("*")):
        if path.suffix not in (".h", ".cpp", ".inc") or "build" in path.parts:
            continue
        folder = folder_of(path)
        if folder not in ALLOWED:
            continue
        own = folder.split("/", 1)[0]
        for number, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = m.group(1)
            stage = target.split("/", 1)[0]
            where = f"{path.relative_to(ROOT)}:{number}"
            for banned in THIRD_PARTY_BANNED.get(folder, ()):
                if target.startswith(banned):
                    errors.append(f"{where}: {folder}/ includes {target}")
            if stage not in STAGES and stage != "kcc" or stage == own:
                continue
            if stage not in ALLOWED[folder]:
                errors.append(f"{where}: {folder}/ includes {target} "
                              f"({stage}/ is not beneath {folder}/)")
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} include(s) against the stage order",
              file=sys.stderr)
        return 1
    print("include direction: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
