#!/usr/bin/env bash
# Peak resident memory of one training step, compiled against interpreted,
# each mode in its own process (kcc-bench-fusion --peak-rss, see
# FusionBenchmark.cpp): prints both JSON lines and the ratio.
#   bash benchmarks/peak_rss.sh [model] [batch]     (default: cnn 256)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${KCC_BUILD:-$ROOT/build}/bin/kcc-bench-fusion"
MODEL="${1:-cnn}"
BATCH="${2:-256}"
compiled=$("$BIN" --peak-rss="$MODEL:$BATCH:compiled")
interpreted=$("$BIN" --peak-rss="$MODEL:$BATCH:interpreted")
echo "$compiled"
echo "$interpreted"
python3 - "$compiled" "$interpreted" <<'PY'
import json, sys
c, i = (json.loads(a) for a in sys.argv[1:3])
print(f"{c['model']} batch {c['batch']}: step peak RSS compiled {c['step_bytes']/1e6:.1f} MB, "
      f"interpreted {i['step_bytes']/1e6:.1f} MB, ratio {c['step_bytes']/i['step_bytes']:.2f}")
PY
