#!/usr/bin/env bash
# A/B of fusejit on a lent GPU: the working tree against an older tree, fusejit alone (no
# peers), device-resident as `bench.py --backend cuda` times it, in alternating processes
# (old, new, old, new), each with its own kernel cache. For telling a regression from the GPU
# machine's own variation between sessions.
#   here:   rm -rf .gpu/old && mkdir -p .gpu/old && git archive COMMIT | tar -x -C .gpu/old
#   there:  run(command="bash benchmarks/gpu_ab.sh black_scholes,lstm_cell", carry=[".gpu"])
# Writes ab.txt under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/fusejit-gpu-ab}
mkdir -p "$OUT"
WORKLOADS=${1:-black_scholes,lstm_cell,sinmul_bcast,dispatch}
ROUNDS=${ROUNDS:-2}
# shellcheck disable=SC1091
source .gpu/setup.sh > /dev/null 2>&1
mkdir -p /tmp/pkgold && ln -sfn "$PWD/.gpu/old" /tmp/pkgold/fusejit
one() {  # tree root, python path, cache folder, label
    (cd "$1" && FUSEJIT_CACHE_DIR="$3" PYTHONPATH="/tmp/site:$2" timeout 120 python3 -c "
import sys; sys.path.insert(0, 'benchmarks'); import bench_cuda
sys.exit(bench_cuda.main('$WORKLOADS', 7, False, None, ()))" 2>/dev/null \
        | sed -n '/^| workload/,$p' | sed "s/^/$4 /")
}
for r in $(seq "$ROUNDS"); do
    one .gpu/old /tmp/pkgold /tmp/fjcache-old "old$r" | tee -a "$OUT/ab.txt"
    one . /tmp/pkg /tmp/fjcache-new "new$r" | tee -a "$OUT/ab.txt"
done
