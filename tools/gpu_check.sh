#!/usr/bin/env bash
# The check of graft's GPU side, in two halves:
#
#   tools/gpu_check.sh bundle   here (no GPU): builds the GPU tests and benches with
#                               --config=cuda -c opt and copies them, with the shared
#                               libraries Bazel built for them, into gpu_bundle/ for the device
#                               tool to carry.
#   tools/gpu_check.sh run      on the GPU machine (no Bazel there, nothing to download): checks
#                               each binary's shared libraries, runs the GPU tests and the
#                               benchmarks, and prints a summary. Stops itself before 8 minutes.
#
# tests/cuda/gpu_check_test.sh runs `run` over fake binaries and a fake nvidia-smi (no GPU).
#
# What `run` reports, per binary: a test binary runs with GRAFT_EXPECT_GPU=1 (so a CUDA driver
# error fails its GPU cases instead of skipping them, tests/cuda/gpu_skip.h) and writes gtest's
# XML report, which tools/gtest_summary.py reads: "ok: passed P, failed 0, skipped S" (with
# the skip reason), "FAILED (all skipped: REASON)" when no case ran (such a binary measured
# nothing), "FAILED (GPU cases skipped: REASON)" when its GPU cases found no usable GPU while
# others passed, "NOT RUN (all skipped: needs 2 GPU(s), there are 1 ...)" when every case needs
# more GPUs than the machine has, "FAILED: ..." with the first failure, or a crash / time-out.
# A benchmark is ok when it exits 0 (it exits 1 when it finds no usable GPU where one is
# expected). When nvidia-smi shows no GPU, the first line says so and every binary is
# "NOT RUN (no GPU visible)". `run` exits 0 only when every binary is ok.
#
# Example (device tool): run(command="bash tools/gpu_check.sh run", carry=["gpu_bundle"]).
set -uo pipefail

GTEST_SUMMARY="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/gtest_summary.py"
BENCHES=(bench/cuda_gemm_bench bench/cuda_llama_bench)
# The GPU tests: every test tagged "gpu" (tests/cuda/).
gpu_tests() { bazel query 'attr(tags, "\bgpu\b", tests(//tests/...))' 2>/dev/null; }

# Runs the binaries listed in $1/list ("NAME CPU_DEVICES" lines; $1/bin/NAME, libraries in
# $1/lib) and prints the summary; returns 0 when every one is ok. GPU_CHECK_SECONDS (default
# 450) is its time budget.
run_bundle() {
  local bundle deadline=$((SECONDS + ${GPU_CHECK_SECONDS:-450}))
  [ -f "$1/list" ] ||
    { echo "gpu_check: no $1/ (run 'tools/gpu_check.sh bundle' first)"; return 1; }
  bundle=$(cd "$1" && pwd)
  command -v python3 >/dev/null ||
    { echo "gpu_check: python3 is needed to read gtest's reports"; return 1; }
  export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  local gpus smi_status=0
  gpus=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1) ||
    smi_status=$?
  local visible=1
  if [ "$smi_status" -ne 0 ] || ! grep -q '[^[:space:]]' <<<"$gpus"; then
    visible=0
    echo "gpu_check: NO GPU VISIBLE (nvidia-smi exit $smi_status: ${gpus:-no GPU listed});" \
      "nothing was run"
  else
    echo "gpu_check: $(grep -c . <<<"$gpus") GPU(s):"
    echo "$gpus"
  fi
  local reports summary=() all_ok=0 name devs b left rc line
  reports=$(mktemp -d)
  while read -r name devs; do
    b="$bundle/bin/$name"
    left=$((deadline - SECONDS))
    if [ "$visible" -eq 0 ]; then
      summary+=("$name: NOT RUN (no GPU visible)"); all_ok=1; continue
    fi
    if [ "$left" -le 10 ]; then summary+=("$name: NOT RUN (time)"); all_ok=1; continue; fi
    if ldd "$b" 2>/dev/null | grep -q "not found"; then
      echo "gpu_check: $name lacks shared libraries here:"; ldd "$b" | grep "not found"
      summary+=("$name: NOT RUN (libraries)"); all_ok=1
      continue
    fi
    echo "=== $name"
    case "$name" in
      bench__*)
        GRAFT_EXPECT_GPU=1 GRAFT_CPU_DEVICES="${devs:-1}" timeout "$left" "$b"
        rc=$?
        if [ "$rc" -eq 0 ]; then line="ok (benchmark, exit 0)"
        else line="FAILED (benchmark, exit $rc)"; all_ok=1; fi
        ;;
      *)
        GRAFT_EXPECT_GPU=1 GRAFT_CPU_DEVICES="${devs:-1}" timeout "$left" "$b" --gtest_brief=1 \
          --gtest_output="xml:$reports/$name.xml"
        rc=$?
        line=$(python3 "$GTEST_SUMMARY" "$reports/$name.xml" "$rc") || all_ok=1
        ;;
    esac
    summary+=("$name: $line")
  done < "$bundle/list"
  rm -rf "$reports"
  echo "=== summary"
  [ "$visible" -eq 1 ] || echo "NO GPU VISIBLE: nothing was run"
  printf '%s\n' "${summary[@]}"
  return "$all_ok"
}

# The command (nothing runs when a test sources this file for run_bundle).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  cd "$(dirname "$0")/.."
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
      run_bundle gpu_bundle
      ;;
    *)
      echo "usage: tools/gpu_check.sh bundle | run" >&2
      exit 2
      ;;
  esac
fi
