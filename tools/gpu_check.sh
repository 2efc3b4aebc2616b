#!/usr/bin/env bash
# The GPU check of issue 16, in two halves:
#
#   tools/gpu_check.sh bundle   here (no GPU): builds the GPU tests and benches with
#                               --config=cuda -c opt and copies them, with the shared
#                               libraries Bazel built for them, into gpu_bundle/ for the device
#                               tool to carry.
#   tools/gpu_check.sh run      on the GPU machine (no Bazel there, nothing to download): checks
#                               each binary's shared libraries, runs the GPU tests and the
#                               benchmarks, and prints a summary. Stops itself before 8 minutes.
#
# Example (device tool): run(command="bash tools/gpu_check.sh run", carry=["gpu_bundle"]).
set -uo pipefail
cd "$(dirname "$0")/.."

BENCHES=(bench/cuda_gemm_bench bench/cuda_llama_bench)
# The GPU tests: every test tagged "gpu" (tests/cuda/).
gpu_tests() { bazel query 'attr(tags, "\bgpu\b", tests(//tests/...))' 2>/dev/null; }

case "${1:-}" in
  bundle)
    mapfile -t targets < <(gpu_tests)
    [ ${#targets[@]} -gt 0 ] || { echo "gpu_check: no gpu-tagged tests found"; exit 1; }
    for b in "${BENCHES[@]}"; do targets+=("//${b%/*}:${b##*/}"); done
    bazel build --config=cuda -c opt "${targets[@]}" || exit 1
    rm -rf gpu_bundle && mkdir -p gpu_bundle/bin gpu_bundle/lib
    : > gpu_bundle/list
    for t in "${targets[@]}"; do
      path="${t#//}"; path="${path/://}"
      name="${path//\//__}"
      cp -L "bazel-bin/$path" "gpu_bundle/bin/$name"
      # Its BUILD env's GRAFT_CPU_DEVICES (the CPU side of a comparison), which `run` sets.
      devs=$(bazel query --output=build "$t" 2>/dev/null |
        sed -n 's/.*"GRAFT_CPU_DEVICES": "\([0-9]*\)".*/\1/p' | head -1)
      echo "$name ${devs:-1}" >> gpu_bundle/list
      # The binary's own shared libraries (Bazel's _solib), once each; system ones (CUDA,
      # oneDNN, LLVM, MPI) must be on the GPU machine (`run` checks).
      ldd "bazel-bin/$path" | awk '/=> \// {print $3}' | grep -E "bazel-out|_solib" |
        while read -r lib; do
          [ -e "gpu_bundle/lib/$(basename "$lib")" ] || cp -L "$lib" gpu_bundle/lib/
        done
    done
    strip --strip-unneeded gpu_bundle/bin/* gpu_bundle/lib/* 2>/dev/null || true
    du -sh gpu_bundle
    echo "bundle ready: carry gpu_bundle (the device tool carries at most 64 MiB)"
    ;;
  run)
    deadline=$((SECONDS + 450))
    [ -f gpu_bundle/list ] || { echo "gpu_check: no gpu_bundle/ (run 'tools/gpu_check.sh bundle' first)"; exit 1; }
    export LD_LIBRARY_PATH="$PWD/gpu_bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || echo "nvidia-smi: not found"
    summary=()
    while read -r name devs; do
      b="gpu_bundle/bin/$name"
      left=$((deadline - SECONDS))
      if [ "$left" -le 10 ]; then summary+=("$name: NOT RUN (time)"); continue; fi
      if ldd "$b" | grep -q "not found"; then
        echo "gpu_check: $name lacks shared libraries here:"; ldd "$b" | grep "not found"
        summary+=("$name: NOT RUN (libraries)")
        continue
      fi
      echo "=== $name"
      case "$name" in
        bench__*) args=() ;;
        *) args=(--gtest_brief=1) ;;
      esac
      if GRAFT_CPU_DEVICES="${devs:-1}" timeout "$left" "$b" "${args[@]}"; then
        summary+=("$name: ok")
      else
        summary+=("$name: FAILED")
      fi
    done < gpu_bundle/list
    echo "=== summary"
    printf '%s\n' "${summary[@]}"
    ;;
  *)
    echo "usage: tools/gpu_check.sh bundle | run" >&2
    exit 2
    ;;
esac
