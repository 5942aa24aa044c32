#!/usr/bin/env python3
"""kcc.fit against kcc's own loop, `kcc train` and Keras's model.fit, per
step, on the zoo.

For each Keras fixture of the zoo (benchmarks/zoo/zoo_cases.py), compiled
as the zoo compiles it, on the zoo's data (its own .npz tiled, else
synthetic), at --batch: kcc.fit (no callbacks), kcc's C++ fit loop driven
from the same process with no Python at all (`kcc train`'s loop, on the
same compiled step and arena: the process-to-process spread of a step's
time, up to 1.7x on a 2-core machine, cancels), `kcc train` (a process)
and the backend's model.fit (Keras's default jit), each at verbose=2 for
as many epochs as fill --window seconds. kcc's epochs hold as many batches
as last --epoch-seconds (at least --steps, at most --max-steps): a step's
cost, not an epoch's fixed Python (History, the progress line: ~0.1 ms,
Keras pays it too), is what is compared; Keras's epochs hold --steps. A
side's epoch time is the interval between two of its "Epoch k/N" lines,
stamped as they are printed (kcc train's read from its pipe; the loop's
from kcc's History clock): that takes compiles, imports, process start-up
and data loading out, and keeps each epoch's own overhead (hooks, the
History) in. The first interval of a run (a process's first steps) is
dropped; per step is the median interval of --rounds runs, the sides
alternating.

    KERAS_BACKEND=jax KCC_BUILD_DIR=build build/python-venv-jax/bin/python \\
        benchmarks/python_zoo_overhead.py --kcc build/bin/kcc [--only a,b]

Prints a markdown table and, last, the median and range of kcc.fit / kcc
train and of model.fit / kcc.fit over the models.
"""

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "zoo"))

os.environ.setdefault("KERAS_BACKEND", "jax")
import keras  # noqa: E402
import numpy as np  # noqa: E402

import kcc  # noqa: E402
from kcc import _data, _kcc, _session  # noqa: E402
import keras_zoo  # noqa: E402
import zoo_cases  # noqa: E402

class EpochStamps:
    """sys.stdout's stand-in while a fit prints: the time of each line
    starting "Epoch " (Keras's ProgbarLogger writes it at on_epoch_begin)."""

    def __init__(self):
        self.stamps = []

    def write(self, text):
        if text.startswith("Epoch "):
            self.stamps.append(time.perf_counter())
        return len(text)

    def flush(self):
        pass


def python_epochs(run, epochs):
    """The epoch intervals (s) of run(epochs), a fit printing to stdout."""
    stamps = EpochStamps()
    saved, sys.stdout = sys.stdout, stamps
    try:
        run(epochs)
    finally:
        sys.stdout = saved
    return np.diff(stamps.stamps).tolist()


def process_epochs(command):
    """The epoch intervals (s) of a `kcc train` process, from its pipe."""
    stamps = []
    with subprocess.Popen(command, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True,
                          bufsize=1) as process:
        for line in process.stdout:
            if line.startswith("Epoch "):
                stamps.append(time.perf_counter())
    if process.returncode:
        raise RuntimeError(f"{' '.join(command)} exited {process.returncode}")
    return np.diff(stamps).tolist()


def loop_epochs(model, x, y, batch, epochs):
    """The epoch times (s) of kcc's C++ fit loop on the model's compiled
    step, from this process, with no Python between the steps or the
    epochs (kcc train's loop)."""
    session = _session.session_for(model, "compiled")
    _session.push_state(session, model)
    train = _data.arrays_source(
        _data.arrays(x, session.input_names(), "x"),
        _data.arrays(y, session.output_names(), "y"), None)
    args = _kcc.FitArgs()
    args.batch_size, args.epochs, args.shuffle = batch, epochs, False
    _, seconds = session.fit(train, None, args, None)
    return list(seconds)[1:]


def spec_targets(model, rows):
    """Targets of `rows` examples shaped as kcc's step takes them (its data
    spec): class labels where it wants labels (CTC's label sequences
    1..classes-1), uniform floats elsewhere. For fixtures whose loss the
    zoo's guess from the loss's name does not fit."""
    session = _session.session_for(model, "compiled")
    rng = np.random.default_rng(0)
    ys = []
    for spec, out in zip(session.data_spec()[1], model.outputs):
        shape = (rows,) + tuple(spec["row"])
        if spec["classes"]:
            ys.append(rng.integers(0, min(spec["classes"], 10), shape))
        elif spec["dtype"].startswith("i"):
            ys.append(rng.integers(1, max(int(out.shape[-1]), 2), shape))
        else:
            ys.append(rng.random(shape, dtype=np.float32))
    return ys[0] if len(ys) == 1 else ys


def npz_arrays(model, data, kind):
    """`data` (an array, a list or a dict) as npz keys kcc train reads."""
    if isinstance(data, dict):
        return dict(data)
    if not isinstance(data, (list, tuple)):
        return {kind: data}
    names = ([layer.name for layer in model.layers
              if layer.__class__.__name__ == "InputLayer"] if kind == "x"
             else list(model.output_names))
    return dict(zip(names, data))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kcc", default="build/bin/kcc")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=64,
                        help="batches a Keras epoch, and the fewest a kcc "
                             "epoch")
    parser.add_argument("--epoch-seconds", type=float, default=0.12,
                        help="how long a kcc epoch lasts (batches chosen "
                             "from the step's time)")
    parser.add_argument("--max-steps", type=int, default=20000)
    parser.add_argument("--epochs", type=int, default=4,
                        help="epochs of each kcc run (the first dropped)")
    parser.add_argument("--window", type=float, default=0.5,
                        help="seconds of steps a Keras run is timed over: "
                             "its epoch count is chosen to fill them")
    parser.add_argument("--rounds", type=int, default=7,
                        help="runs of each side, alternated")
    parser.add_argument("--sides", default="fit,loop,train,keras",
                        help="which of fit, loop, again, train, keras to "
                             "run (fit always; again: the loop a second "
                             "time, an A/A control of the machine's "
                             "noise)")
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    only = set(filter(None, args.only.split(",")))
    wanted = ["fit"] + [w for w in args.sides.split(",")
                        if w in ("loop", "again", "train", "keras")]
    if "again" in wanted and "loop" not in wanted:
        wanted.insert(1, "loop")
    backend = keras.backend.backend()
    titles = {"loop": "kcc loop", "again": "kcc loop again",
              "train": "kcc train", "keras": f"model.fit ({backend})"}
    head = ["model", "batches an epoch", "kcc.fit ms"]
    for side in wanted[1:]:
        head += [f"{titles[side]} ms", ratio_title(side, titles)]
    print("| " + " | ".join(head) + " |")
    print("|---" + "|---:" * (len(head) - 1) + "|")
    ratios = {side: [] for side in wanted[1:]}
    for path, _, _, compiled in zoo_cases.cases():
        name = os.path.relpath(path, zoo_cases.FIXTURES)
        if only and os.path.splitext(os.path.basename(path))[0] not in only:
            continue
        try:
            row = run_fixture(args, wanted, path, compiled)
        except Exception as e:  # a fixture one side cannot run
            print(f"| {name} | {type(e).__name__}: "
                  f"{str(e).splitlines()[0][:80]} |", flush=True)
            continue
        steps, per_step, paired = row
        cells = [name, str(steps), f"{per_step['fit']:.4f}"]
        for side in wanted[1:]:
            ratios[side].append(paired[side])
            cells += [f"{per_step[side]:.4f}",
                      f"{paired[side]:.3f}" if side != "keras"
                      else f"{paired[side]:.1f}x"]
        print("| " + " | ".join(cells) + " |", flush=True)

    print()
    for side, values in ratios.items():
        if not values:
            continue
        over = sum(r > 1.05 for r in values)
        print(f"{ratio_title(side, titles)} over {len(values)} models: "
              f"median {np.median(values):.3f}, min {min(values):.3f}, "
              f"max {max(values):.3f}" +
              (f", {over} over 1.05" if side != "keras" else ""))


def ratio_title(side, titles):
    if side == "keras":
        return f"{titles[side]} / kcc.fit"
    if side == "again":
        return "kcc loop again / kcc loop (A/A)"
    return f"kcc.fit / {titles[side]}"


def run_fixture(args, wanted, path, compiled):
    """(kcc's batches an epoch, each side's median ms a step, each side's
    median over the rounds of its ratio to kcc.fit in the same round)."""
    model = keras.saving.load_model(path)
    if not compiled:
        model.compile(optimizer="adam",
                      loss=keras_zoo.record_loss(keras, path))
    initial = model.get_weights()
    # A kcc epoch of --epoch-seconds: the step's time from a short run of
    # the loop (its compile included, then dropped).
    x, y = keras_zoo.batch_for(keras, np, model, path,
                               args.batch * args.steps)
    targets = None
    try:
        probe = loop_epochs(model, x, y, args.batch, 4)
    except _kcc.Error:
        # The zoo's targets do not fit this loss: kcc's data spec's do.
        targets = spec_targets
        y = targets(model, args.batch * args.steps)
        probe = loop_epochs(model, x, y, args.batch, 4)
    step = max(np.median(probe), 1e-6) / args.steps
    steps = min(max(args.steps, math.ceil(args.epoch_seconds / step)),
                args.max_steps)
    model.set_weights(initial)
    x, y = keras_zoo.batch_for(keras, np, model, path, args.batch * steps)
    if targets:
        y = targets(model, args.batch * steps)
    with tempfile.TemporaryDirectory() as work:
        archive = os.path.join(work, "model.keras")
        data = os.path.join(work, "data.npz")
        fit = dict(batch_size=args.batch, shuffle=False, verbose=2)
        keras_fit = dict(fit, steps_per_epoch=args.steps)
        if "train" in wanted:
            model.save(archive)
            arrays = npz_arrays(model, x, "x")
            arrays.update(npz_arrays(model, y, "y"))
            np.savez(data, **arrays)

        def train(epochs):
            return process_epochs(
                [args.kcc, "train", archive, "--data", data, "--batch",
                 str(args.batch), "--epochs", str(epochs), "--shuffle=false",
                 "--verbose", "2"])
        runs = {
            "fit": lambda e: python_epochs(
                lambda n: kcc.fit(model, x, y, epochs=n, **fit), e)[1:],
            # kcc's History's times, the first epoch already dropped.
            "loop": lambda e: loop_epochs(model, x, y, args.batch, e),
            "again": lambda e: loop_epochs(model, x, y, args.batch, e),
            "train": lambda e: train(e)[1:],
            "keras": lambda e: python_epochs(
                lambda n: model.fit(x, y, epochs=n, **keras_fit), e)[1:],
        }
        sides = {side: runs[side] for side in wanted}
        # Compiles (kcc's session, kcc train's compile cache, Keras's jit)
        # before the timing; Keras's epoch count fills the window.
        epochs = {side: args.epochs for side in sides}
        for side, run in sides.items():
            per_epoch = max(np.median(run(3)), 1e-4)
            if side == "keras":
                epochs[side] = min(max(
                    2 + math.ceil(args.window / per_epoch), 4), 500)
        times = {side: [] for side in sides}
        order = list(sides)
        for r in range(args.rounds):
            # Forward, then backward: a drift of the machine's speed
            # within a round does not favour one side.
            for side in (order if r % 2 == 0 else order[::-1]):
                model.set_weights(initial)
                batches = args.steps if side == "keras" else steps
                times[side].append(
                    float(np.median(sides[side](epochs[side]))) / batches *
                    1e3)
    per_step = {side: float(np.median(t)) for side, t in times.items()}
    paired = {}
    for side in wanted[1:]:
        if side == "again":
            pairs = zip(times["again"], times["loop"])
        elif side == "keras":
            pairs = zip(times["keras"], times["fit"])
        else:
            pairs = zip(times["fit"], times[side])
        paired[side] = float(np.median([a / b for a, b in pairs]))
    return steps, per_step, paired


if __name__ == "__main__":
    main()
