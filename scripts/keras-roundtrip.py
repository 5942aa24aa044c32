#!/usr/bin/env python3
"""kcc trains and saves .keras; Keras loads it and predicts the same.

For each model -- the Keras specs examples/mlp.json and examples/cnn.json
(imported: their config text is kept), a Keras 2 .h5 (saved as Keras 3)
and the reference models built in C++ (builtin:cnn, Sequential, and
builtin:residual, Functional with Add; builtin:branches, whose layers
Keras orders by depth, not by call; builtin:convs, every convolution
layer; builtin:recurrent, Bidirectional LSTM, GRU and a SimpleRNN's
return_state outputs; their Keras 3 config is generated)
-- this script

  1. trains STEPS steps with kcc (kcc-example-checkpoint train) and saves
     a .keras archive with the optimizer's variables;
  2. runs `kcc predict` on held-out inputs;
  3. loads the archive with keras.saving.load_model and predicts the same
     inputs: max |kcc - keras| must be <= 1e-5;
  4. checks the optimizer Keras rebuilt: iterations == STEPS, the learning
     rate, and every slot equal to kcc's (read from the archive by h5py);
  5. continues both for RESUME steps on the same batches -- Keras with
     train_on_batch from its loaded optimizer state, kcc with
     `kcc-example-checkpoint resume` -- and compares the weights. This is
     what proves the slots are in Keras's order: a swapped m/v or an
     iteration count off by one changes Adam's update.
  6. writes the resumed weights alone (save_weights's .weights.h5) and
     loads them with Keras's model.load_weights: the same weights;
  7. `kcc evaluate` against Keras's model.evaluate on the same data.

And one model trained by `kcc train --save` itself with AdamW, global
clipping and a CosineDecay schedule (the optimizers fixture, its schedule
overridden by --lr-schedule so the rate stays above 0): Keras must load
the optimizer (its 1 + 2 per weight variables, no learning_rate under a
schedule) with kcc's values, predict the same, and one more epoch of
train_on_batch in Keras must equal `kcc train --resume` of that epoch.

Run from the throwaway venv (not needed by the tests):

  KERAS_BACKEND=jax JAX_PLATFORMS=cpu /tmp/kerasvenv/bin/python \\
      scripts/keras-roundtrip.py build/bin
"""
import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import h5py  # noqa: E402
import keras  # noqa: E402
import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPS, RESUME, BATCH = 20, 3, 16


def run(*args):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, args))}\n{r.stdout}{r.stderr}")
    return r.stdout


def check(model_arg, bindir, tmp, data, held_out):
    name = os.path.basename(model_arg).replace("builtin:", "cpp-")
    ckpt = os.path.join(tmp, name + ".keras")
    run(os.path.join(bindir, "kcc-example-checkpoint"), "train", model_arg,
        data, STEPS, BATCH, ckpt)
    kcc_pred = os.path.join(tmp, name + "-pred.npy")
    run(os.path.join(bindir, "kcc"), "predict", ckpt, "--data", held_out,
        "-o", kcc_pred)
    ours = np.load(kcc_pred)

    model = keras.saving.load_model(ckpt)
    x = np.load(held_out)["x"]
    theirs = model.predict(x, verbose=0)
    diff = float(np.max(np.abs(theirs - ours)))

    # The optimizer Keras rebuilt from the archive.
    opt = model.optimizer
    with zipfile.ZipFile(ckpt) as z, tempfile.NamedTemporaryFile() as f:
        f.write(z.read("model.weights.h5"))
        f.flush()
        with h5py.File(f.name) as h5:
            saved = [h5[f"optimizer/vars/{i}"][()]
                     for i in range(len(h5["optimizer/vars"]))]
        meta = json.loads(z.read("metadata.json"))
    assert int(opt.iterations.numpy()) == STEPS, opt.iterations
    assert len(opt.variables) == len(saved), (len(opt.variables), len(saved))
    slot_diff = max(float(np.max(np.abs(np.asarray(v) - s)))
                    for v, s in zip(opt.variables[1:], saved[1:]))

    # Continue RESUME steps in both, on the batches kcc would take next.
    d = np.load(data)
    n = len(d["x"])
    for s in range(STEPS, STEPS + RESUME):
        start = (s * BATCH) % n
        model.train_on_batch(d["x"][start:start + BATCH],
                             d["y"][start:start + BATCH])
    resumed = os.path.join(tmp, name + "-resumed.keras")
    run(os.path.join(bindir, "kcc-example-checkpoint"), "resume", ckpt, data,
        RESUME, BATCH, resumed)
    kcc_resumed = keras.saving.load_model(resumed)
    resume_diff = max(float(np.max(np.abs(a - b))) for a, b in
                      zip(model.get_weights(), kcc_resumed.get_weights()))

    # Weights alone (save_weights layout) into a model Keras built.
    weights = os.path.join(tmp, name + ".weights.h5")
    run(os.path.join(bindir, "kcc-example-checkpoint"), "resume", ckpt, data,
        RESUME, BATCH, weights)
    fresh = keras.saving.load_model(ckpt)
    fresh.load_weights(weights)
    weights_diff = max(float(np.max(np.abs(a - b))) for a, b in
                       zip(fresh.get_weights(), kcc_resumed.get_weights()))

    # kcc evaluate against Keras's evaluate, both on the resumed kcc model.
    out = run(os.path.join(bindir, "kcc"), "evaluate", resumed, "--data",
              held_out)
    line = out.strip().splitlines()[-1]
    kcc_logs = {k.strip(): float(v) for k, v in
                (part.split(":") for part in line.split(" - "))}
    h = np.load(held_out)
    keras_logs = kcc_resumed.evaluate(h["x"], h["y"], verbose=0,
                                      return_dict=True)
    eval_diff = max(abs(kcc_logs[k] - keras_logs[k]) for k in kcc_logs)

    size = os.path.getsize(ckpt)
    # What Keras writes for the same model, for comparison.
    keras_copy = os.path.join(tmp, name + "-by-keras.keras")
    keras.saving.load_model(ckpt).save(keras_copy)
    keras_size = os.path.getsize(keras_copy)
    ok = diff <= 1e-5 and slot_diff == 0 and resume_diff <= 1e-5 and \
        eval_diff <= 1e-5 and weights_diff == 0
    print(f"{name:10s} {model.__class__.__name__:10s} archive {size} B (Keras's {keras_size})  "
          f"predict max|kcc-keras| {diff:.2e}  slots {slot_diff:.1e}  "
          f"after {RESUME} more steps max|dw| {resume_diff:.2e}  "
          f"load_weights(.weights.h5) max|dw| {weights_diff:.1e}  "
          f"evaluate {kcc_logs} vs keras "
          f"{ {k: round(v, 6) for k, v in keras_logs.items()} }  "
          f"epoch {meta['kcc']['epoch']}  {'OK' if ok else 'FAIL'}")
    return ok


def check_train_save(bindir, tmp, data):
    """kcc train --save with AdamW + CosineDecay; Keras loads and resumes."""
    kcc = os.path.join(bindir, "kcc")
    spec = os.path.join(ROOT, "tests", "fixtures", "keras", "optimizers",
                        "adamw_cosine_global_clipnorm.keras")
    first = os.path.join(tmp, "adamw.keras")
    second = os.path.join(tmp, "adamw-2.keras")
    schedule = "CosineDecay(initial_learning_rate=0.01,decay_steps=100,alpha=0.1)"
    run(kcc, "train", spec, "--data", data, "--batch", BATCH, "--epochs", 1,
        "--shuffle=false", "--verbose", 0, "--lr-schedule", schedule,
        "--save", first)
    run(kcc, "train", "--resume", first, "--data", data, "--batch", BATCH,
        "--epochs", 2, "--shuffle=false", "--verbose", 0, "--save", second)
    model = keras.saving.load_model(first)
    opt = model.optimizer
    with zipfile.ZipFile(first) as z:
        with h5py.File(io.BytesIO(z.read("model.weights.h5")), "r") as h:
            g = h["optimizer/vars"]
            saved = [g[str(i)][()] for i in range(len(g))]
    slots = max(float(np.max(np.abs(np.asarray(v.numpy(), np.float64) -
                                    np.asarray(s, np.float64))))
                for v, s in zip(opt.variables, saved))
    d = np.load(data)
    x, y = d["x"], d["y"]
    steps = int(opt.iterations.numpy())
    for i in range(0, len(x), BATCH):
        model.train_on_batch(x[i:i + BATCH], y[i:i + BATCH])
    resumed = keras.saving.load_model(second)
    dw = max(float(np.max(np.abs(a - b)))
             for a, b in zip(model.get_weights(), resumed.get_weights()))
    ok = (type(opt).__name__ == "AdamW" and
          type(opt._learning_rate).__name__ == "CosineDecay" and
          len(opt.variables) == len(saved) and slots == 0 and dw <= 1e-5 and
          int(opt.iterations.numpy()) ==
          int(resumed.optimizer.iterations.numpy()))
    print(f"kcc train --save (AdamW, CosineDecay, global_clipnorm)  "
          f"{len(saved)} optimizer variables, {steps} steps  "
          f"slots max|kcc-keras| {slots:.1e}  after one more epoch "
          f"(--resume vs train_on_batch) max|dw| {dw:.2e}  "
          f"{'OK' if ok else 'FAIL'}")
    return ok


def main():
    bindir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                             os.path.join(ROOT, "build", "bin"))
    rng = np.random.default_rng(0)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "train.npz")
        held_out = os.path.join(tmp, "test.npz")
        np.savez(data, x=rng.random((128, 28, 28, 1), dtype=np.float32),
                 y=rng.integers(0, 10, 128))
        np.savez(held_out, x=rng.random((50, 28, 28, 1), dtype=np.float32),
                 y=rng.integers(0, 10, 50))
        print(f"keras {keras.__version__} ({keras.backend.backend()}), "
              f"{STEPS} kcc steps of batch {BATCH}, then {RESUME} more in "
              f"each")
        for m in [os.path.join(ROOT, "examples", "mlp.json"),
                  os.path.join(ROOT, "examples", "cnn.json"),
                  os.path.join(ROOT, "tests", "fixtures", "keras",
                               "mlp_keras2.h5"),
                  "builtin:cnn", "builtin:residual", "builtin:branches",
                  "builtin:convs", "builtin:recurrent"]:
            ok = check(m, bindir, tmp, data, held_out) and ok
        ok = check_train_save(bindir, tmp, data) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
