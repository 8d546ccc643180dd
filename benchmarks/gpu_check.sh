#!/usr/bin/env bash
# Issue 18's checks on a lent GPU machine, in ONE device call of under 10 minutes: the tests
# that compare with NumPy (and the CUDA backend's own tests) under FUSEJIT_BACKEND=cuda, the
# host time of one call (benchmarks/bench_cuda_host.py: the dispatch target, <= 15 µs), then
# benchmarks/cuda_linalg_check.py (np.linalg's CUDA kernels), then `bench.py --backend cuda`.
# Everything it writes goes under $OUT (the device tool's folder that comes back): tests.txt,
# junit.xml, host.txt, host.json, linalg.txt, bench.txt, bench_cuda.json, device.txt.
#   here, once:  mkdir -p .gpu && cp -r ../shared/gpu/. .gpu/ && echo /.gpu/ >> .git/info/exclude
#   then:        run(command="bash benchmarks/gpu_check.sh", carry=[".gpu"], timeout_s=590)
# Each step has its own time limit (TEST_S, HOST_S, BENCH_S seconds) so that the results of
# the first come back even when a later one runs long; pytest -v writes one line per test as it
# finishes, so a run cut short by its limit still says what passed and failed. STEPS picks the
# steps (default all: "tests host linalg bench"); PYTEST_TIMEOUT is one test's limit (150 s);
# extra arguments go to pytest (e.g. -k "not sweep", or test files instead of the list below).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/fusejit-gpu-check}
mkdir -p "$OUT"
TEST_S=${TEST_S:-300}
HOST_S=${HOST_S:-45}
BENCH_S=${BENCH_S:-100}
LINALG_S=${LINALG_S:-40}
STEPS=" ${STEPS:-tests host linalg bench} "
step() { [[ "$STEPS" == *" $1 "* ]]; }
# shellcheck disable=SC1091
source .gpu/setup.sh > "$OUT/device.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >> "$OUT/device.txt" 2>&1
python3 -c "from fusejit.runtime import backend_cuda, cuda_blas; print(backend_cuda.available()); print('cublas:', cuda_blas.find_cublas(), cuda_blas.library() if isinstance(cuda_blas.library(), str) else 'loaded')" >> "$OUT/device.txt" 2>&1
T=tests
# The files with the slowest tests first (each hypothesis example compiles with nvcc), so that
# they start at once; then the rest.
FILES=("$T"/test_elementwise_props.py "$T"/test_lapack.py "$T"/test_numpy_lib.py
       "$T"/test_numpy_tail.py "$T"/test_complex*.py "$T"/test_cuda_*.py "$T"/test_out.py
       "$T"/test_api.py "$T"/test_gemm_update.py "$T"/test_reductions.py "$T"/test_fuzz.py
       "$T"/test_views.py "$T"/test_inplace.py "$T"/test_gemm_epilogue.py "$T"/test_gather.py
       "$T"/test_pyscalar.py "$T"/test_colreduce.py "$T"/test_composite.py
       "$T"/test_row_kernels.py "$T"/test_matmul.py "$T"/test_special*.py "$T"/test_gemv.py
       "$T"/test_errors.py "$T"/test_array_api.py "$T"/test_status.py "$T"/test_asarray.py
       "$T"/test_rowtile.py "$T"/test_grad.py "$T"/test_grad_api.py "$T"/test_gridops.py
       "$T"/test_sum_accuracy.py "$T"/test_scans.py "$T"/test_sorting.py "$T"/test_scatter.py
       "$T"/test_scatter_rows.py "$T"/test_error_order.py "$T"/test_fft.py
       "$T"/test_scipy_stats.py "$T"/test_svd.py "$T"/test_lstsq.py "$T"/test_order_stats.py
       "$T"/test_tail_calls.py "$T"/test_sort_long.py "$T"/test_list_operands.py)
if [ "$#" -gt 0 ] && [[ "$1" != -* ]]; then FILES=(); fi
if step tests; then
echo "== FUSEJIT_BACKEND=cuda pytest (limit ${TEST_S}s)" | tee "$OUT/tests.txt"
# (SIGINT at the limit: pytest still prints the failures it has seen)
FUSEJIT_BACKEND=cuda timeout -s INT "$TEST_S" python3 -m pytest -v -rfE -n 15 --dist load -p no:randomly \
    -p no:cacheprovider --timeout "${PYTEST_TIMEOUT:-150}" --junitxml="$OUT/junit.xml" "${FILES[@]}" "$@" >> "$OUT/tests.txt" 2>&1
echo "pytest exit status $?" >> "$OUT/tests.txt"
fi
if step host; then
echo "== bench_cuda_host.py: host time per call (limit ${HOST_S}s)" | tee "$OUT/host.txt"
timeout "$HOST_S" python3 benchmarks/bench_cuda_host.py --repeat 7 --profile \
    --json "$OUT/host.json" >> "$OUT/host.txt" 2>&1
echo "host bench exit status $?" >> "$OUT/host.txt"
echo "== launch floors (limit 30s)" | tee -a "$OUT/host.txt"
timeout 30 python3 benchmarks/cuda_launch_floor.py >> "$OUT/host.txt" 2>&1
echo "== profile with CUDA events (limit 40s)" | tee -a "$OUT/host.txt"
timeout 40 python3 -m fusejit profile benchmarks/cuda_profile_check.py >> "$OUT/host.txt" 2>&1
echo "profile exit status $?" >> "$OUT/host.txt"
fi
if step linalg; then
echo "== np.linalg on CUDA: agreement and ms per call (limit ${LINALG_S}s)" | tee "$OUT/linalg.txt"
timeout "$LINALG_S" python3 benchmarks/cuda_linalg_check.py >> "$OUT/linalg.txt" 2>&1
echo "linalg check exit status $?" >> "$OUT/linalg.txt"
fi
if step bench; then
echo "== bench.py --backend cuda (limit ${BENCH_S}s)" | tee "$OUT/bench.txt"
timeout "$BENCH_S" python3 benchmarks/bench.py --backend cuda --repeat 7 \
    --json "$OUT/bench_cuda.json" >> "$OUT/bench.txt" 2>&1
echo "bench exit status $?" >> "$OUT/bench.txt"
fi
if step tests; then grep -E "(FAILED|ERROR)" "$OUT/tests.txt" | head -n 40; tail -n 5 "$OUT/tests.txt"; fi
if step host; then
    sed "/^profile of/q" "$OUT/host.txt"  # the table (the profile stays in host.txt)
    sed -n '/== launch floors/,$p' "$OUT/host.txt"
fi
if step linalg; then cat "$OUT/linalg.txt"; fi
if step bench; then cat "$OUT/bench.txt"; fi
