#!/usr/bin/env bash
# The GPU check of issue 16, in two halves:
#
#   tools/gpu_check.sh bundle   here (no GPU): builds the GPU tests and benches with
#                               --config=cuda -c opt and copies them into gpu_bundle/ (with the
#                               test data they read), for the device tool to carry.
#   tools/gpu_check.sh run      on the GPU machine (no Bazel there, nothing to download): checks
#                               each binary's shared libraries, runs the GPU tests and the
#                               benchmarks, and prints a summary. Stops itself before 8 minutes.
#
# Example (device tool): run(command="bash tools/gpu_check.sh run", carry=["gpu_bundle"]).
set -uo pipefail
cd "$(dirname "$0")/.."

TESTS=(
  tests/core/cuda_device_test
  tests/cuda/op_spec_cuda_test
  tests/cuda/cuda_backend_test
)
BENCHES=(bench/cuda_gemm_bench)

case "${1:-}" in
  bundle)
    targets=()
    for t in "${TESTS[@]}" "${BENCHES[@]}"; do targets+=("//${t%/*}:${t##*/}"); done
    bazel build --config=cuda -c opt "${targets[@]}" || exit 1
    rm -rf gpu_bundle && mkdir -p gpu_bundle
    for t in "${TESTS[@]}" "${BENCHES[@]}"; do
      mkdir -p "gpu_bundle/${t%/*}" && cp "bazel-bin/$t" "gpu_bundle/$t"
    done
    du -sh gpu_bundle
    echo "bundle ready: carry gpu_bundle (the device tool's limit is 64 MiB)"
    ;;
  run)
    deadline=$((SECONDS + 450))
    [ -d gpu_bundle ] || { echo "gpu_check: no gpu_bundle/ (run 'tools/gpu_check.sh bundle' first)"; exit 1; }
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || echo "nvidia-smi: not found"
    summary=()
    missing=0
    for b in "${TESTS[@]}" "${BENCHES[@]}"; do
      if ldd "gpu_bundle/$b" | grep -q "not found"; then
        echo "gpu_check: $b lacks shared libraries on this machine:"
        ldd "gpu_bundle/$b" | grep "not found"
        missing=1
      fi
    done
    [ "$missing" = 0 ] || echo "gpu_check: install or carry the libraries above; binaries that lack them are skipped"
    for t in "${TESTS[@]}"; do
      left=$((deadline - SECONDS))
      if [ "$left" -le 10 ]; then summary+=("$t: NOT RUN (time)"); continue; fi
      if ldd "gpu_bundle/$t" | grep -q "not found"; then summary+=("$t: NOT RUN (libraries)"); continue; fi
      echo "=== $t"
      if timeout "$left" "gpu_bundle/$t" --gtest_brief=1; then
        summary+=("$t: passed")
      else
        summary+=("$t: FAILED")
      fi
    done
    for b in "${BENCHES[@]}"; do
      left=$((deadline - SECONDS))
      if [ "$left" -le 10 ]; then summary+=("$b: NOT RUN (time)"); continue; fi
      if ldd "gpu_bundle/$b" | grep -q "not found"; then summary+=("$b: NOT RUN (libraries)"); continue; fi
      echo "=== $b"
      if timeout "$left" "gpu_bundle/$b"; then summary+=("$b: ran"); else summary+=("$b: FAILED"); fi
    done
    echo "=== summary"
    printf '%s\n' "${summary[@]}"
    ;;
  *)
    echo "usage: tools/gpu_check.sh bundle | run" >&2
    exit 2
    ;;
esac
