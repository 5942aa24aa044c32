#!/usr/bin/env python3
"""Runs every kcc command that README.md and docs/*.md show, and fails when
one fails or its documented output drifts (run by ctest as check_docs).

    check-docs.py --bin BUILD/bin [--only docs/training.md] [-v]

Each ```sh block's kcc, kcc-opt and mpirun lines run in a scratch folder
that links the tree's examples/, tests/ and scripts/ and holds small
stand-ins for the files the docs name (train.npz, test.npz, model.keras,
model.mlir, DIR/x.npy, ...): 64 random Fashion-MNIST-shaped examples. So
that every command takes seconds, `kcc train` gets `--steps-per-epoch 2`
and at most 2 epochs, `kcc bench` one repetition of 2 steps; of
`--mode=a|b|c` the first mode runs. A command is expected to fail when the
output block the docs show after it holds `kcc: error`.

Documented output: the plain ``` block right after a ```sh block belongs to
its last command. Each of its lines that kcc prints in a fixed form (lines
starting `kcc:`, `Epoch`, a progress bar, `test accuracy`, `same initial
weights`, `compiled:`, `interpreted:`) must appear in the command's output,
compared with every number replaced by `#` (the numbers of a short run on
random data differ; the wording and the fields must not).

Commands that cannot run on stand-ins say why in SKIP.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NPY = os.path.join(ROOT, "tests", "lit", "driver", "Inputs", "npy.py")

# Substrings of commands that do not run on stand-ins, and why.
SKIP = {
    "...": "elided arguments",
    "$": "a shell variable of a loop",
    "MODEL": "a placeholder model",
    "/shared/": "a cluster's shared folder",
    "two_inputs": "needs the two-input arrays of docs/benchmarks.md",
    "multi_output.keras": "a user's model",
    "--emit=lib": "links a shared library (tests/lit/driver/emit-lib.mlir)",
    "cmake --install": "installs the tree (tests/install)",
}

# Substrings of commands that fail by design.
FAILS = {"--lr=1e30": "the loss turns NaN and TerminateOnNaN stops with an "
                      "error"}

STABLE = ("kcc:", "Epoch", "#/#", "test accuracy", "val accuracy",
          "same initial weights", "compiled:", "interpreted:")


def normalize(line):
    line = re.sub(r"\[[=>.]+\]", "[bar]", line.strip())
    line = re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "#", line)
    line = re.sub(r"#(s|ms|us)/step", "#/step", line)
    return re.sub(r"\s+", " ", line)


def blocks(path):
    """(commands, documented output lines or None) per ```sh block."""
    text = open(path).read()
    found = []
    for m in re.finditer(r"```sh\n(.*?)```", text, re.S):
        joined = m.group(1).replace("\\\n", " ")
        commands = []
        for line in joined.split("\n"):
            line = line.strip()
            if re.match(r"(bash scripts/demo\.sh|(\S+=\S+ )*(taskset \S+ )?"
                        r"(mpirun|(build/bin/)?kcc(-opt)?)(\s|$))", line):
                commands.append(line)
        after = text[m.end():]
        out = re.match(r"\n(?:(?!```)[^\n]*\n){0,5}```(?:text)?\n(.*?)```",
                       after, re.S)
        found.append((commands, out.group(1).split("\n") if out else None))
    return found


def adapt(cmd):
    """The command as it runs here, or (None, why)."""
    if cmd.startswith("bash scripts/demo.sh"):
        cmd = cmd.split("#", 1)[1].strip()  # the command demo.sh runs
    else:
        cmd = re.sub(r"\s+#.*$", "", cmd)
    for key, why in SKIP.items():
        if key in cmd:
            return None, why
    cmd = re.sub(r"--mode=(\w+)(\|\w+)+", r"--mode=\1", cmd)
    cmd = cmd.replace("/tmp/fm2/", "fm/").replace("/tmp/fm/", "fm/")
    cmd = re.sub(r"(?<![\w/])kcc(?=\s)", "build/bin/kcc", cmd)
    cmd = re.sub(r"(?<![\w/])kcc-opt(?=\s)", "build/bin/kcc-opt", cmd)
    cmd = re.sub(r"\bm\.mlir\b", "model.mlir", cmd)
    if cmd.startswith("mpirun") and "--allow-run-as-root" not in cmd:
        cmd = cmd.replace("mpirun", "mpirun --allow-run-as-root --oversubscribe",
                          1)
    if re.search(r"kcc train\b", cmd):
        cmd = re.sub(r"--epochs[ =](\d+)",
                      lambda e: "--epochs %d" % min(2, int(e.group(1))), cmd)
        cmd += " --steps-per-epoch 2"
    if re.search(r"kcc bench", cmd):
        cmd += " --repetitions 1 --steps 2 --warmup 1"
    return cmd, None


def scratch(bin_dir):
    """The folder the commands run in, with its stand-in files."""
    d = tempfile.mkdtemp(prefix="kcc-docs-")
    for name in ("examples", "tests", "scripts"):
        os.symlink(os.path.join(ROOT, name), os.path.join(d, name))
    os.makedirs(os.path.join(d, "build"))
    os.symlink(os.path.abspath(bin_dir), os.path.join(d, "build", "bin"))
    os.makedirs(os.path.join(d, "fm"))
    for name in ("train", "test", "val", "x", "d", "fm/train", "fm/test"):
        subprocess.run([sys.executable, NPY, "write",
                        os.path.join(d, name + ".npz"),
                        "x=f4:64,28,28,1", "y=i8:64:labels:10"], check=True)
    with zipfile.ZipFile(os.path.join(d, "train.npz")) as z:
        z.extractall(os.path.join(d, "DIR"))
    shutil.copy(os.path.join(ROOT, "tests", "lit", "driver", "Inputs",
                             "dense.mlir"), os.path.join(d, "model.mlir"))
    subprocess.run([os.path.join(bin_dir, "kcc"), "train", "examples/mlp.json",
                    "--data", "train.npz", "--batch", "8", "--verbose", "0",
                    "--save", "model.keras"], cwd=d, check=True)
    return d


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True, help="the folder of kcc, kcc-opt")
    p.add_argument("--only", help="one Markdown file")
    p.add_argument("-v", action="store_true", help="print every command")
    args = p.parse_args()
    docs = [args.only] if args.only else (
        [os.path.join(ROOT, "README.md")] +
        sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))))
    d = scratch(args.bin)
    env = dict(os.environ, KCC_CACHE_DIR="off", OMP_WAIT_POLICY="passive")
    failures, ran, skipped = [], 0, 0
    try:
        for doc in docs:
            name = os.path.relpath(doc, ROOT)
            for commands, output in blocks(doc):
                for i, original in enumerate(commands):
                    cmd, why = adapt(original)
                    if cmd is None or (cmd.startswith("mpirun") and
                                       not shutil.which("mpirun")):
                        skipped += 1
                        if args.v:
                            print("skip %s: %s (%s)" % (name, original,
                                                        why or "no mpirun"))
                        continue
                    last = i == len(commands) - 1
                    shown = output if last else None
                    expect_fail = any(k in cmd for k in FAILS) or (
                        bool(shown) and
                        any("kcc: error" in line for line in shown))
                    if args.v:
                        print("run  %s: %s" % (name, cmd))
                    r = subprocess.run(cmd, shell=True, cwd=d, env=env,
                                       capture_output=True, text=True,
                                       timeout=600)
                    ran += 1
                    text = r.stdout + r.stderr
                    if (r.returncode != 0) != expect_fail:
                        failures.append("%s: `%s` exited %d%s\n%s" % (
                            name, original, r.returncode,
                            " (the docs show an error)" if expect_fail
                            else "", text[-2000:]))
                        continue
                    if not shown:
                        continue
                    got = {normalize(line) for line in text.split("\n")}
                    for line in shown:
                        n = normalize(line)
                        if ("..." in line or "cache" in line or
                                not n.startswith(STABLE)):
                            continue
                        if n not in got:
                            failures.append(
                                "%s: `%s`: the documented line\n  %s\nis not "
                                "in its output:\n%s" % (name, original,
                                                        line.strip(),
                                                        text[-2000:]))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print("check-docs: %d commands run, %d skipped, %d failures" %
          (ran, skipped, len(failures)))
    for f in failures:
        print("FAIL " + f + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
