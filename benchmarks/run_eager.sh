#!/usr/bin/env bash
#===- run_eager.sh - kcc eager mode and kernels vs PyTorch eager ----------===#
#
# One command: builds kcc-bench-eager, runs it, runs the PyTorch peer
# (benchmarks/peers/torch_eager.py) when a venv with torch exists or can be
# made -- the two in turn, KCC_ROUNDS times -- and prints one markdown table
# of medians and kcc/torch ratios.
#
#   bash benchmarks/run_eager.sh
#
# Environment (all optional):
#   KCC_BUILD_DIR   build folder (default: build/ in the repository)
#   KCC_JOBS        ninja -j (default 2)
#   KCC_THREADS     threads for both kcc (OpenMP/oneDNN) and torch (default 2)
#   KCC_REPS        repetitions per round; medians are reported (default 7)
#   KCC_ROUNDS      kcc-then-torch rounds (default 3)
#   KCC_MIN_TIME    seconds per repetition (default 0.2)
#   KCC_PEER_VENV   the torch venv (default /tmp/kcc-peer-venv)
#   KCC_NO_SETUP=1  do not try to create the venv when it is missing
#   KCC_BENCH_OUT   where the JSON results go (default $KCC_BUILD_DIR/bench)
#   OMP_WAIT_POLICY passed through to both sides (both use libgomp); see
#                   docs/benchmarks.md for why `passive` matters on a busy
#                   machine
#
#===----------------------------------------------------------------------===#
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${KCC_BUILD_DIR:-$repo/build}"
jobs="${KCC_JOBS:-2}"
threads="${KCC_THREADS:-2}"
reps="${KCC_REPS:-7}"
rounds="${KCC_ROUNDS:-3}"
min_time="${KCC_MIN_TIME:-0.2}"
venv="${KCC_PEER_VENV:-/tmp/kcc-peer-venv}"
out="${KCC_BENCH_OUT:-$build/bench}"
mkdir -p "$out"

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo |
  cut -d: -f2- | sed 's/^ *//'), threads used: $threads," \
  "OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-unset}, load: $(cut -d' ' -f1-3 /proc/loadavg)"

if [[ ! -f "$build/build.ninja" ]]; then
  cmake -G Ninja "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
ninja -C "$build" -j"$jobs" kcc-bench-eager

# Both sides get the same thread count. OMP_PROC_BIND stays unset: pinning
# on a machine shared with other jobs makes the medians worse, not better.
export OMP_NUM_THREADS="$threads"

have_torch() {
  [[ -x "$venv/bin/python" ]] && "$venv/bin/python" -c 'import torch' 2>/dev/null
}
if ! have_torch && [[ "${KCC_NO_SETUP:-0}" != 1 ]]; then
  echo "== no torch venv at $venv: creating it (large download)"
  bash "$repo/benchmarks/peers/setup_venv.sh" "$venv" ||
    echo "== could not create the torch venv: kcc figures only"
fi

# kcc and torch run in turn, `rounds` times: a burst of load from other jobs
# then hits both sides of a round alike, and the per-round ratios show how
# much of a difference is noise.
rm -f "$out"/kcc.*.json "$out"/torch.*.json
for ((r = 1; r <= rounds; ++r)); do
  echo "== round $r/$rounds: kcc-bench-eager ($reps repetitions)"
  "$build/bin/kcc-bench-eager" \
    --benchmark_repetitions="$reps" \
    --benchmark_report_aggregates_only=true \
    --benchmark_enable_random_interleaving=true \
    --benchmark_min_time="$min_time" \
    --benchmark_out="$out/kcc.$r.json" --benchmark_out_format=json
  if have_torch; then
    echo "== round $r/$rounds: PyTorch eager ($reps repetitions)"
    "$venv/bin/python" "$repo/benchmarks/peers/torch_eager.py" \
      --threads "$threads" --repetitions "$reps" --min-time "$min_time" \
      --json "$out/torch.$r.json"
  fi
done

echo "== summary: medians over $rounds rounds of each round's median;"
echo "   kcc/torch = kcc time / torch time (> 1: kcc slower), median of the"
echo "   per-round ratios [lowest, highest]"
python3 - "$out" "$rounds" <<'PY'
import json, os, statistics, sys

out, rounds = sys.argv[1], int(sys.argv[2])

def load_kcc(path):
    res = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b["time_unit"]]
        name = b["run_name"].removesuffix("/real_time")
        res[name] = dict(b, us=b["real_time"] * scale)
    return res

kcc = [load_kcc(f"{out}/kcc.{r}.json") for r in range(1, rounds + 1)]
torch = [json.load(open(f"{out}/torch.{r}.json"))["results"]
         for r in range(1, rounds + 1)
         if os.path.exists(f"{out}/torch.{r}.json")]

def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None

def kv(name, key="us"):
    return med([k.get(name, {}).get(key) for k in kcc]) if name else None

def tv(name, key="median_us"):
    return med([t.get(name, {}).get(key) for t in torch])

def ratio(e, t):
    rs = [k[e]["us"] / tt[t]["median_us"] for k, tt in zip(kcc, torch)
          if e in k and t in tt]
    if not rs:
        return "-"
    return f"{statistics.median(rs):.2f} [{min(rs):.2f}, {max(rs):.2f}]"

def cell(v, fmt="{:.2f}"):
    return fmt.format(v) if v is not None else "-"

rows = [  # label, kcc eager, kcc interpreter, torch case
    ("add f32[4]", "BM_EagerAdd4", None, "add_4"),
    ("add f32[4], kernel only", "BM_KernelAdd4", None, "add_4"),
    ("relu f32[32,128]", "BM_EagerRelu32x128", None, "relu_32x128"),
] + [(f"MLP fwd, batch {b}", f"BM_EagerMlp/{b}", f"BM_InterpMlp/{b}",
      f"mlp/{b}") for b in (32, 64, 256)] + [
    ("CNN fwd, batch 64", "BM_EagerCnn/64", None, "cnn/64"),
    ("SGEMM 512^3", "BM_Sgemm/512", None, "sgemm/512"),
    ("SGEMM 2048^3", "BM_Sgemm/2048", None, "sgemm/2048"),
]
print("| case | kcc eager µs | kcc interp µs | interp/eager | torch eager µs "
      "| kcc/torch | GFLOP/s kcc / torch |")
print("|---|---:|---:|---:|---:|---:|---:|")
for label, e, i, t in rows:
    ke, ki, tt = kv(e), kv(i), tv(t)
    gf = ""
    if kv(e, "GFLOPS") is not None:
        gf = f"{kv(e, 'GFLOPS'):.0f} / {cell(tv(t, 'gflops'), '{:.0f}')}"
    print(f"| {label} | {cell(ke)} | {cell(ki)} | "
          f"{cell(ki / ke if ki and ke else None)} | {cell(tt)} | "
          f"{ratio(e, t)} | {gf} |")
for name in ("BM_EagerMlp/32", "BM_InterpMlp/32", "BM_EagerCnn/64"):
    if kv(name) is not None:
        ops = kv(name, "ops")
        extra = f", {ops:.0f} kernels dispatched" if ops else ""
        print(f"{name}: {kv(name, 'allocs'):.0f} allocations/run{extra}")
PY
