#!/usr/bin/env bash
#===- run_all.sh - kcc against its peers on whole training steps ----------===#
#
# The one command (docs/benchmarks.md, "kcc vs peers"):
#
#   bash benchmarks/run_all.sh            # full run, about 30-40 min on 2 cores
#   KCC_PEERS_QUICK=1 bash benchmarks/run_all.sh     # a few minutes
#
# 1. creates the peers' venvs from PyPI when missing (PyTorch:
#    peers/setup_venv.sh, + matplotlib for the plot; JAX and TF-Keras:
#    peers/setup_peer_venvs.sh). Never needed by the build or the tests.
# 2. builds kcc's benchmark targets (`kcc` for `kcc bench`, kcc-bench-fusion
#    for the oneDNN SGEMM reference rate), ninja -j$KCC_JOBS.
# 3. times one training step (forward, sparse categorical crossentropy,
#    accuracy, backward, Adam) of each case in peers/models.py in kcc
#    (compiled and interpreted, `kcc bench SPEC --json`) and in each peer:
#    PyTorch eager, torch.compile, JAX jit, TF-Keras fit in graph mode,
#    with run_eagerly=True and with jit_compile=True (XLA).
# 4. merges everything into docs/benchmarks-peers.json and writes
#    docs/benchmarks-peers.md and docs/benchmarks-peers.png (report.py).
#
# Environment (all optional):
#   KCC_BUILD_DIR     build folder (default: build/ in the repository)
#   KCC_JOBS          ninja -j (default 2)
#   KCC_THREADS       threads for every system (default 2)
#   KCC_PEERS_QUICK=1 fewer repetitions, no GEMM-bound case
#   KCC_PEERS_SYSTEMS which to run (default: all) -- a comma list of
#                     kcc,torch-eager,torch-compile,jax,tf-graph,tf-eager,tf-xla
#   KCC_PEERS_REPS    repetitions (default 5; the GEMM-bound case: 3)
#   KCC_PEERS_MIN_TIME seconds per repetition (default 0.2; Keras fit: 1.0)
#   KCC_PEER_VENV / KCC_JAX_VENV / KCC_TF_VENV   the venvs (default
#                     /tmp/kcc-peer-venv, /tmp/kcc-jax-venv, /tmp/kcc-tf-venv)
#   KCC_NO_SETUP=1    do not create missing venvs (that peer is skipped)
#   KCC_PEERS_KEEP=1  keep the raw results of earlier runs in KCC_PEERS_OUT
#                     (rerun some systems, e.g. KCC_PEERS_SYSTEMS=kcc, and
#                     report them with the others)
#   KCC_BIN / KCC_FUSION_BIN   use these kcc / kcc-bench-fusion binaries
#                     instead of building them (default $KCC_BUILD_DIR/bin/...)
#   KCC_EAGER_BIN     kcc-bench-eager, whose SGEMM 2048^3 is the reference
#                     rate when kcc-bench-fusion is missing
#   KCC_PEERS_TIMEOUT seconds one system may take for all its cases (default
#                     1800); the cases it finished are kept
#   KCC_PEERS_OUT     raw JSON per system (default $KCC_BUILD_DIR/bench/peers)
#   KCC_PEERS_DOCS    where the report goes (default docs/ in the repository)
#   OMP_WAIT_POLICY   unset by default: each OpenMP runtime's own waiting
#                     (spin, then sleep), as users get it; set passive on a
#                     machine other jobs share (see docs/benchmarks.md)
#
#===----------------------------------------------------------------------===#
set -uo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${KCC_BUILD_DIR:-$repo/build}"
jobs="${KCC_JOBS:-2}"
threads="${KCC_THREADS:-2}"
quick="${KCC_PEERS_QUICK:-0}"
systems="${KCC_PEERS_SYSTEMS:-kcc,torch-eager,torch-compile,jax,tf-graph,tf-eager,tf-xla}"
out="${KCC_PEERS_OUT:-$build/bench/peers}"
docs="${KCC_PEERS_DOCS:-$repo/docs}"
torch_venv="${KCC_PEER_VENV:-/tmp/kcc-peer-venv}"
jax_venv="${KCC_JAX_VENV:-/tmp/kcc-jax-venv}"
tf_venv="${KCC_TF_VENV:-/tmp/kcc-tf-venv}"
peers="$repo/benchmarks/peers"
kcc_bin="${KCC_BIN:-$build/bin/kcc}"
fusion_bin="${KCC_FUSION_BIN:-$build/bin/kcc-bench-fusion}"
eager_bin="${KCC_EAGER_BIN:-$build/bin/kcc-bench-eager}"

if [[ "$quick" == 1 ]]; then
  reps="${KCC_PEERS_REPS:-3}"; heavy_reps=1
  min_time="${KCC_PEERS_MIN_TIME:-0.05}"; fit_min_time=0.3
  cases="mlp_small:16,mlp:32,mlp:64,mlp:256,cnn:32,cnn:128"
else
  reps="${KCC_PEERS_REPS:-5}"; heavy_reps=3
  min_time="${KCC_PEERS_MIN_TIME:-0.2}"; fit_min_time=1.0
  cases="mlp_small:16,mlp:32,mlp:64,mlp:256,cnn:32,cnn:128,mlp_gemm:512"
fi

want() { [[ ",$systems," == *",$1,"* ]]; }
loads=""  # '"system": "load at its start",' for meta.json
log() {
  local l; l="$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "== $* (load $l)"
  loads+="\"$1\": \"$l\","
}

# Every system gets the same threads. OMP_WAIT_POLICY is left as the caller
# set it: passive stops OpenMP threads spinning between parallel regions,
# which a shared machine needs and a quiet one pays for in wake-ups.
export OMP_NUM_THREADS="$threads"
export TF_CPP_MIN_LOG_LEVEL=2 JAX_PLATFORMS=cpu
# On a machine with more cores than $threads, every system is held to the
# first $threads CPUs (XLA and TF size their pools from the visible CPUs).
pin=()
if (( $(nproc) > threads )) && command -v taskset >/dev/null; then
  pin=(taskset -c "0-$((threads - 1))")
fi

mkdir -p "$out" "$docs"
[[ "${KCC_PEERS_KEEP:-0}" == 1 ]] || rm -f "$out"/*.json "$out"/*.err
peer_timeout="${KCC_PEERS_TIMEOUT:-1800}"

# ---- 1. venvs ---------------------------------------------------------------
has() { [[ -x "$1/bin/python" ]] && "$1/bin/python" -c "$2" 2>/dev/null; }
if [[ "${KCC_NO_SETUP:-0}" != 1 ]]; then
  # The PyTorch venv also holds matplotlib for the plot.
  if true; then
    has "$torch_venv" 'import torch' ||
      bash "$peers/setup_venv.sh" "$torch_venv" ||
      echo "== could not create the PyTorch venv"
    has "$torch_venv" 'import matplotlib' ||
      "$torch_venv/bin/python" -m pip install --no-cache-dir --quiet matplotlib ||
      echo "== could not install matplotlib: no plot"
  fi
  if want jax; then
    bash "$peers/setup_peer_venvs.sh" jax "$jax_venv" || echo "== no JAX venv"
  fi
  if want tf-graph || want tf-eager || want tf-xla; then
    bash "$peers/setup_peer_venvs.sh" tf "$tf_venv" || echo "== no TF venv"
  fi
fi

# ---- 2. kcc's benchmark targets ---------------------------------------------
if want kcc; then
  if [[ ! -f "$build/build.ninja" && ( -z "${KCC_BIN:-}" ||
        -z "${KCC_FUSION_BIN:-}" ) ]]; then
    cmake -G Ninja "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  # One at a time: a target that does not build yet leaves the other usable.
  [[ -n "${KCC_BIN:-}" ]] || ninja -C "$build" -j"$jobs" kcc ||
    echo "== kcc did not build"
  [[ -n "${KCC_FUSION_BIN:-}" ]] ||
    ninja -C "$build" -j"$jobs" kcc-bench-fusion ||
    echo "== kcc-bench-fusion did not build: no SGEMM reference rate"
fi

# ---- 3. run -----------------------------------------------------------------
python3 - "$out/meta.json" "$threads" "$quick" <<'PY'
import json, os, platform, subprocess, sys
if os.path.exists(sys.argv[1]) and os.environ.get("KCC_PEERS_KEEP") == "1":
    sys.exit(0)  # the first run's description stands
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
            if l.startswith("model name")), "?")
flags = next((l for l in open("/proc/cpuinfo") if l.startswith("flags")), "")
json.dump({"cpu": cpu, "nproc": os.cpu_count(),
           "avx512f": " avx512f" in flags, "avx2": " avx2" in flags,
           "kernel": platform.release(),
           "threads": int(sys.argv[2]), "quick": sys.argv[3] == "1",
           "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
           "loadavg_start": open("/proc/loadavg").read().split()[:3],
           "date": subprocess.run(["date", "-u", "+%Y-%m-%d %H:%M UTC"],
                                  capture_output=True, text=True).stdout.strip()},
          open(sys.argv[1], "w"), indent=1)
PY

if want kcc && [[ -x "$kcc_bin" ]]; then
  log "kcc $("$kcc_bin" --version 2>/dev/null | head -1) ($kcc_bin)"
  "$kcc_bin" --version > "$out/kcc-version.txt" 2>&1 || true
  for c in ${cases//,/ }; do
    model="${c%%:*}"; batch="${c##*:}"
    spec="$(cd "$peers" && python3 -c "import models; print(models.MODELS['$model']['kcc_spec'])")"
    # Steps per repetition: enough for ~0.1-0.5 s on a loaded 2-core box.
    case "$model:$batch" in
      mlp_small:*) steps=200 ;; mlp:32|mlp:64) steps=50 ;; mlp:*) steps=20 ;;
      cnn:32) steps=10 ;; cnn:*) steps=4 ;; *) steps=1 ;;
    esac
    r="$reps"; w=3
    if [[ "$model" == mlp_gemm ]]; then r="$heavy_reps"; w=1; fi
    [[ "$quick" == 1 ]] && steps=$(( (steps + 3) / 4 ))
    log "kcc bench $spec --batch $batch ($r x $steps steps)"
    "${pin[@]}" "$kcc_bin" bench "$repo/$spec" --batch "$batch" --json \
      --repetitions "$r" --steps "$steps" --warmup "$w" \
      > "$out/kcc.$model.$batch.json" 2> "$out/kcc.$model.$batch.err" ||
      { echo "== kcc bench failed:"; tail -3 "$out/kcc.$model.$batch.err"; }
  done
  if [[ -x "$fusion_bin" ]]; then
    log "oneDNN SGEMM reference (kcc-bench-fusion SgemmOfMlpGemm)"
    "${pin[@]}" "$fusion_bin" --benchmark_filter='^SgemmOfMlpGemm' \
      --benchmark_repetitions="$heavy_reps" --benchmark_min_time=1 \
      --benchmark_out="$out/sgemm.json" --benchmark_out_format=json ||
      echo "== SGEMM reference failed"
  elif [[ -x "$eager_bin" ]]; then
    # Without kcc-bench-fusion: the SGEMM of kcc's eager benchmark (the same
    # oneDNN kernels::matmul, 2048^3) as the reference rate.
    log "oneDNN SGEMM reference (kcc-bench-eager BM_Sgemm/2048)"
    "${pin[@]}" "$eager_bin" --benchmark_filter='^BM_Sgemm/2048' \
      --benchmark_repetitions="$heavy_reps" --benchmark_min_time=1 \
      --benchmark_out="$out/sgemm.json" --benchmark_out_format=json ||
      echo "== SGEMM reference failed"
  fi
elif want kcc; then
  echo "== no $kcc_bin: kcc left out of this run"
fi

peer() {  # name venv script args...
  local name="$1" venv="$2"; shift 2
  if ! [[ -x "$venv/bin/python" ]]; then
    echo "== no venv $venv: $name skipped"; return
  fi
  log "$name"
  timeout "$peer_timeout" "${pin[@]}" "$venv/bin/python" "$@" --threads "$threads" --cases "$cases" \
    --repetitions "$reps" --heavy-repetitions "$heavy_reps" \
    --json "$out/peer.$name.json" > /dev/null 2> "$out/peer.$name.err"
  local rc=$?
  (( rc == 124 )) && echo "== $name: timed out after ${peer_timeout}s" |
    tee -a "$out/peer.$name.err"
  grep '^\[' "$out/peer.$name.err" || tail -5 "$out/peer.$name.err"
}
want torch-eager && peer torch-eager "$torch_venv" "$peers/torch_train.py" \
  --mode eager --min-time "$min_time"
want jax && peer jax "$jax_venv" "$peers/jax_train.py" --min-time "$min_time"
for mode in graph eager xla; do
  want "tf-$mode" && peer "tf-$mode" "$tf_venv" "$peers/keras_train.py" \
    --impl tf_keras --mode "$mode" --min-time "$fit_min_time"
done
# Last: inductor's first compile of a step takes minutes here (the FX graph
# and kernel caches under /tmp/torchinductor_$USER make reruns faster).
want torch-compile && peer torch-compile "$torch_venv" \
  "$peers/torch_train.py" --mode compile --min-time "$min_time"
log "done"
python3 -c "import json,sys; m=json.load(open(sys.argv[1])); \
m['loadavg_end']=open('/proc/loadavg').read().split()[:3]; \
m.setdefault('loadavg_by_system', {}).update(json.loads(sys.argv[2])); \
json.dump(m, open(sys.argv[1],'w'), indent=1)" "$out/meta.json" \
  "{${loads%,}}"

# ---- 4. report --------------------------------------------------------------
plotter=python3
has "$torch_venv" 'import matplotlib' && plotter="$torch_venv/bin/python"
"$plotter" "$repo/benchmarks/report.py" "$out" \
  --json "$docs/benchmarks-peers.json" --md "$docs/benchmarks-peers.md" \
  --png "$docs/benchmarks-peers.png"
