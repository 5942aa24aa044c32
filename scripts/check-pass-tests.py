#!/usr/bin/env python3
"""Checks that every kc pass is declared in ODS, registered and tested:

  - every `def X : Pass<"kc-...">` in a Passes.td has a summary and a
    description;
  - `kcc-opt --help` lists it (so `kcc-opt` can run it alone, exactly as
    the pipelines do);
  - a lit test under tests/lit/ runs it by name on a RUN line.

Also fails on a pass class written outside ODS (an mlir::PassWrapper in the
project's sources). Usage: check-pass-tests.py PATH/TO/kcc-opt
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = ("ir", "passes", "codegen", "engine", "frontend", "tools")
PASS_DEF = re.compile(r'^def\s+(\w+)\s*:\s*Pass<"([\w-]+)"', re.M)


def declared_passes():
    """(name, td file, body) of every pass in a Passes.td."""
    found = []
    for td in sorted(ROOT.glob("**/Passes.td")):
        if "build" in td.relative_to(ROOT).parts:
            continue
        text = td.read_text()
        starts = [m for m in PASS_DEF.finditer(text)]
        for i, m in enumerate(starts):
            end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
            found.append((m.group(2), td.relative_to(ROOT), text[m.start():end]))
    return found


def lit_run_lines():
    lines = []
    for test in (ROOT / "tests" / "lit").rglob("*.mlir"):
        if "Inputs" in test.parts:
            continue
        lines += [l for l in test.read_text().splitlines() if "RUN:" in l]
    return lines


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    help_text = subprocess.run([sys.argv[1], "--help"], capture_output=True,
                               text=True, check=True).stdout
    runs = lit_run_lines()
    errors = []
    passes = declared_passes()
    for name, td, body in passes:
        if "let summary" not in body or "let description" not in body:
            errors.append(f"{td}: {name} has no summary or description")
        if f"--{name} " not in help_text and f"--{name}\n" not in help_text:
            errors.append(f"{td}: {name} is not listed by kcc-opt --help")
        uses = re.compile(r"(--|\(|,)" + re.escape(name) + r"([\s{=)'\"]|$)")
        if not any(uses.search(line) for line in runs):
            errors.append(f"{td}: {name} has no lit test running it "
                          f"(tests/lit/**/*.mlir)")
    wrapper = re.compile(r"\bPassWrapper<")
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.cpp")):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if wrapper.search(line):
                    errors.append(f"{path.relative_to(ROOT)}:{number}: a pass "
                                  "outside ODS (declare it in Passes.td)")
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} problem(s) with the passes", file=sys.stderr)
        return 1
    print(f"{len(passes)} passes: each in ODS, in kcc-opt --help, with a "
          "lit test")
    return 0


if __name__ == "__main__":
    sys.exit(main())
