#!/usr/bin/env python3
"""kcc train under mpirun, end to end (run by ctest).

  train_under_mpirun.py accuracy KCC MPIRUN... : two ranks train the MLP one
      epoch of Fashion-MNIST to the single-process accuracy (>= 0.83); rank 0
      alone prints one progress bar.
  train_under_mpirun.py fault KCC MPIRUN...    : rank 1 exits mid-epoch; the
      job fails with a message within 60 s, and the checkpoint of the last
      finished epoch loads and resumes, on one process.
  train_under_mpirun.py partial KCC MPIRUN...  : 101 examples at batch 32
      (a partial last batch of 5, split 3 + 2): two ranks log the single
      process's losses and metrics (a stateful MeanIoU among them: its
      statistics add up over the ranks) and end with its model (outputs
      within 1e-5), compiled and interpreted.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

mode, kcc, mpirun = sys.argv[1], sys.argv[2], sys.argv[3:]
src = os.path.join(os.path.dirname(__file__), "..", "..")
mlp = os.path.join(src, "examples", "mlp.json")


def run(cmd, timeout):
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p, time.monotonic() - start


def fail(msg, p=None):
    print("FAIL:", msg)
    if p is not None:
        print("--- stdout\n" + p.stdout[-4000:] + "\n--- stderr\n" + p.stderr[-4000:])
    sys.exit(1)


if mode == "accuracy":
    p, secs = run(mpirun + [kcc, "train", mlp, "--data", "fashion-mnist",
                            "--epochs", "1"], 900)
    if p.returncode != 0:
        fail("exit %d" % p.returncode, p)
    acc = re.search(r"test accuracy: ([0-9.]+)", p.stdout)
    bars = p.stdout.count("Epoch 1/1")
    print("2 ranks: %d progress bar(s), test accuracy %s, %.1f s" %
          (bars, acc.group(1) if acc else "?", secs))
    if bars != 1 or "data-parallel over 2 ranks" not in p.stdout:
        fail("expected one progress bar of a 2-rank run", p)
    if not acc or float(acc.group(1)) < 0.83:
        fail("accuracy below 0.83", p)
elif mode == "fault":
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "ck.keras")
        common = ["--data", "fashion-mnist", "--batch", "32",
                  "--steps-per-epoch", "40", "--verbose", "2"]
        p, secs = run(mpirun + [kcc, "train", mlp, "--epochs", "3",
                                "--checkpoint=filepath=" + ckpt,
                                "--fault-exit", "1:60"] + common, 120)
        print("rank 1 exited at step 60: job exit %d after %.1f s" %
              (p.returncode, secs))
        if p.returncode == 0:
            fail("the job succeeded although a rank died", p)
        if secs > 60:
            fail("the job took %.0f s to fail (over 60 s)" % secs, p)
        if "rank 1: exiting after step 60" not in p.stderr:
            fail("no message naming the rank", p)
        if not os.path.exists(ckpt):
            fail("no checkpoint of epoch 1", p)
        # The checkpoint of epoch 1 is whole: one process resumes from it.
        r, _ = run([kcc, "train", "--resume", ckpt, "--epochs", "2"] + common,
                   300)
        if r.returncode != 0 or "resuming from" not in r.stdout:
            fail("resuming the last checkpoint failed", r)
        print("the epoch-1 checkpoint resumes on 1 process")
elif mode == "partial":
    sys.path.insert(0, os.path.join(src, "tests", "lit", "driver", "Inputs"))
    from npy import parse_npy
    METRICS = ("accuracy,MeanIoU(num_classes=10,sparse_y_pred=false),"
               "SparseTopKCategoricalAccuracy(k=2)")
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "d.npz")
        subprocess.run([sys.executable, os.path.join(
            src, "tests", "lit", "driver", "Inputs", "npy.py"), "write", data,
            "x=f4:101,28,28,1", "y=i8:101:labels:10"], check=True)

        def train(launcher, name, exec_mode):
            csv_log = os.path.join(tmp, name + ".csv")
            model = os.path.join(tmp, name + ".keras")
            p, _ = run(launcher + [kcc, "train", mlp, "--data", data,
                                   "--batch", "32", "--epochs", "2",
                                   "--mode", exec_mode, "--verbose", "2",
                                   "--metrics", METRICS,
                                   "--csv-log", csv_log, "--save", model],
                       300)
            if p.returncode != 0:
                fail("%s exited %d" % (name, p.returncode), p)
            r, _ = run([kcc, "predict", model, "--data", data, "-o",
                        os.path.join(tmp, name + ".npy")], 120)
            if r.returncode != 0:
                fail("predict " + name, r)
            lines = open(csv_log).read().split()
            header = lines[0].split(",")
            # Every logged column but the epoch, epoch after epoch.
            losses = [float(v) for line in lines[1:]
                      for k, v in zip(header, line.split(",")) if k != "epoch"]
            if "mean_io_u" not in header or "loss" not in header:
                fail("%s logs %s" % (name, header), p)
            outputs = parse_npy(open(os.path.join(tmp, name + ".npy"),
                                     "rb").read())[2]
            return p, losses, outputs

        for exec_mode in ("compiled", "interpreted"):
            _, one_losses, one_out = train([], "one-" + exec_mode, exec_mode)
            p, dp_losses, dp_out = train(mpirun, "dp-" + exec_mode, exec_mode)
            if "data-parallel over 2 ranks" not in p.stdout:
                fail("not a 2-rank run", p)
            loss_diff = max(abs(a - b) for a, b in zip(one_losses, dp_losses))
            out_diff = max(abs(a - b) for a, b in zip(one_out, dp_out))
            print("%s: 101 examples at batch 32, 2 epochs, 2 ranks against "
                  "1: max loss/metric difference %.2e, max output difference "
                  "%.2e" %
                  (exec_mode, loss_diff, out_diff))
            if len(one_losses) != 8 or len(dp_losses) != 8:
                fail("expected 2 epochs logged", p)
            if loss_diff > 1e-5 or out_diff > 1e-5:
                fail("the 2-rank run differs from the single process", p)
else:
    fail("unknown mode " + mode)
