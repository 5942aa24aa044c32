#!/usr/bin/env python3
"""Checks the C++ files changed since the tree was last formatted.

The tree was formatted whole (LLVM style, .clang-format) in the commit that
last changed .clang-format; every C++ file changed since, committed or not,
must be as clang-format-19 writes it. Without git history (an exported
tree) every file is checked. Prints each file that differs with the first
lines clang-format would change, and exits 1 if there is one.

  check-format.py            check
  check-format.py --fix      reformat those files in place
"""
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SUFFIXES = (".cpp", ".h", ".c", ".cu")
CLANG_FORMAT = "clang-format-19"


def git(*args):
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True,
                          text=True, check=True).stdout


def changed_files():
    try:
        base = git("log", "-1", "--format=%H", "--", ".clang-format").strip()
        names = git("ls-files") if not base else (
            git("diff", "--name-only", base) +
            git("ls-files", "--others", "--exclude-standard"))
    except (OSError, subprocess.CalledProcessError):
        return sorted(p for p in ROOT.rglob("*") if p.suffix in SUFFIXES and
                      "build" not in p.relative_to(ROOT).parts)
    files = {ROOT / n for n in names.split() if n.endswith(SUFFIXES)}
    return sorted(p for p in files if p.exists())


def main():
    fix = "--fix" in sys.argv[1:]
    if not shutil.which(CLANG_FORMAT):
        print(f"{CLANG_FORMAT} not found (scripts/install-deps.sh installs it)",
              file=sys.stderr)
        return 1
    files = changed_files()
    bad = []
    for path in files:
        if fix:
            subprocess.run([CLANG_FORMAT, "-i", str(path)], check=True)
            continue
        out = subprocess.run([CLANG_FORMAT, "--dry-run", str(path)],
                             capture_output=True, text=True).stderr
        if out:
            bad.append(path)
            print("\n".join(out.splitlines()[:6]))
    if bad:
        print(f"{len(bad)} of {len(files)} changed file(s) not formatted; "
              "run scripts/check-format.py --fix", file=sys.stderr)
        return 1
    print(f"format: {len(files)} changed file(s) "
          f"{'formatted' if fix else 'ok'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
