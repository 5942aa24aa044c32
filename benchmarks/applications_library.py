#!/usr/bin/env python3
#===- applications_library.py - keras.applications steps against library_ms ===#
#
# How close kcc's training step of Keras's own networks comes to the time of
# its GEMMs and convolutions alone. Keras (from a throwaway venv, never the
# build's) writes each network's to_json() config, built with weights=None at
# 32x32x3 and 10 classes; `kcc bench --json` then times the compiled and the
# interpreted step and replays the step's product calls alone (library_ms).
# kcc draws the weights from the layers' initializers (timing does not
# depend on them).
#
#   benchmarks/applications_library.py --python /tmp/kerasvenv/bin/python \
#       [--kcc build/bin/kcc] [--batch 32] [--repetitions 5] [--only ResNet50]
#
#===----------------------------------------------------------------------===#

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

NETWORKS = ["ResNet50", "DenseNet121", "MobileNetV2", "VGG16"]

WRITE_CONFIG = r"""
import sys, keras
name, path = sys.argv[1], sys.argv[2]
model = getattr(keras.applications, name)(
    weights=None, input_shape=(32, 32, 3), classes=10)
open(path, "w").write(model.to_json())
"""


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--python", required=True,
                   help="a Python with keras (and a backend) installed")
    p.add_argument("--kcc", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "build", "bin", "kcc"))
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--only", default=",".join(NETWORKS))
    args = p.parse_args()

    env = dict(os.environ, KCC_CACHE_DIR="off", OMP_NUM_THREADS="2")
    env.setdefault("KERAS_BACKEND", "jax")
    rows = []
    load = [open("/proc/loadavg").read().split()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only.split(","):
            config = os.path.join(tmp, name + ".json")
            subprocess.run([args.python, "-c", WRITE_CONFIG, name, config],
                           check=True, env=env, stderr=subprocess.DEVNULL)
            out = subprocess.run(
                [args.kcc, "bench", config, "--batch", str(args.batch),
                 "--repetitions", str(args.repetitions), "--steps", "3",
                 "--warmup", "1",
                 "--json"], check=True, env=env, capture_output=True,
                text=True).stdout
            d = json.loads(out)
            rows.append((name, d))
            print(f"{name} done", file=sys.stderr)
    load.append(open("/proc/loadavg").read().split()[0])

    print(f"batch {args.batch}, medians of {args.repetitions} repetitions of 3 "
          f"steps; load {load[0]} at the start, {load[1]} at the end "
          f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})")
    print("| network | compiled ms | interpreted ms | interpreted / compiled "
          "| library ms | kcc ms | compiled / library | product calls | compile ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, d in rows:
        c, i, lib = d["compiled_ms"], d["interpreted_ms"], d["library_ms"]
        print(f"| {name} | {c:.1f} | {i:.1f} | {i / c:.2f}x | {lib:.1f} "
              f"| {d['kcc_ms']:.1f} | {c / lib:.2f} | {d['library_calls']} "
              f"| {d['compile_ms']:.0f} |")


if __name__ == "__main__":
    main()
