#!/usr/bin/env bash
# tools/gpu_check.sh's `run` without a GPU: its run_bundle over a bundle of fake test binaries
# (each writes a given gtest XML report and exits with a given code), a fake benchmark and a
# fake nvidia-smi on PATH. Checks the summary lines: an all-skipped binary is FAILED with the
# skip reason, a mixed one ok with its counts, one whose GPU cases found no usable GPU FAILED
# although others passed, a failing or crashing one FAILED, one whose cases all need more GPUs
# than there are NOT RUN; the binaries see GRAFT_EXPECT_GPU=1; with
# no time left nothing runs; when nvidia-smi finds no GPU that is said first and nothing runs.
# Runs from the runfiles root (Bazel's working directory for a test) or the repository root.
set -u
source tools/gpu_check.sh
set +e

t=$(mktemp -d "${TEST_TMPDIR:-/tmp}/gpu_check.XXXXXX")
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/bundle/bin" "$t/bundle/lib" "$t/path"
failures=0

# One gtest XML test case: case_xml N pass | fail:MESSAGE | skip:MESSAGE.
case_xml() {
  local head="<testcase name=\"C$1\" status=\"run\" classname=\"S\""
  case "$2" in
    pass) echo "$head result=\"completed\">" ;;
    fail:*) echo "$head result=\"completed\"><failure message=\"x.cc:$1&#x0A;${2#fail:}\"/>" ;;
    skip:*) echo "$head result=\"skipped\"><skipped message=\"x.cc:$1&#x0A;${2#skip:}\"/>" ;;
  esac
  echo "</testcase>"
}

# fake_test NAME EXIT_CODE CASE...: a binary writing a report of those cases to the path of its
# --gtest_output=xml: argument, then exiting with EXIT_CODE; it leaves $t/ran.NAME behind.
fake_test() {
  local name=$1 code=$2 cases="" i=0 c
  shift 2
  for c in "$@"; do
    i=$((i + 1))
    cases+=$(case_xml "$i" "$c")
  done
  echo "<testsuites><testsuite name=\"S\">$cases</testsuite></testsuites>" > "$t/$name.xml"
  cat > "$t/bundle/bin/$name" <<FAKE
#!/usr/bin/env bash
touch "$t/ran.$name"
for a in "\$@"; do
  case "\$a" in --gtest_output=xml:*) cp "$t/$name.xml" "\${a#--gtest_output=xml:}" ;; esac
done
exit $code
FAKE
  chmod +x "$t/bundle/bin/$name"
}

# expect OUTPUT LINE: OUTPUT has LINE as one of its lines.
expect() {
  if grep -qxF -- "$2" <<<"$1"; then
    echo "ok: $2"
  else
    echo "FAILED: no line '$2' in:"
    echo "$1"
    failures=$((failures + 1))
  fi
}

# expect_status WHAT STATUS: run_bundle's status is 0 for "ok", non-zero for "not ok".
expect_status() {
  if { [ "$2" = ok ] && [ "$rc" -eq 0 ]; } || { [ "$2" = "not ok" ] && [ "$rc" -ne 0 ]; }; then
    echo "ok: $1: run_bundle $2"
  else
    echo "FAILED: $1: run_bundle exit $rc, expected $2"
    failures=$((failures + 1))
  fi
}

driver="needs 1 GPU(s), none usable (CUDA driver error, no GPU usable: cudaErrorInsufficientDriver"
driver+=" (CUDA driver version is insufficient for CUDA runtime version))"
two="needs 2 GPU(s), there are 1 (NVIDIA H200)"
none="needs 2 GPU(s), there are 0 (no CUDA device: cudaErrorNoDevice (x))"
fake_test all_skipped 0 "skip:$driver" "skip:$driver"
fake_test mixed 0 pass pass "skip:$two"
fake_test failing 1 pass "fail:Expected equality"
fake_test no_cases 0
fake_test two_gpus 0 "skip:$two"
fake_test no_device 0 "skip:$none"
fake_test two_reasons 0 pass "skip:one reason" "skip:another" "skip:one reason"
fake_test gpu_cases_skipped 0 pass "skip:a GPU is present" "skip:$none"
# Dies before gtest writes its report.
printf '#!/usr/bin/env bash\ntouch "%s/ran.crashing"\nexit 139\n' "$t" > "$t/bundle/bin/crashing"
# Passes only with the environment run_bundle promises: GRAFT_EXPECT_GPU=1 and its devices.
fake_test env_check 0 pass
cat > "$t/bundle/bin/env_check" <<FAKE
#!/usr/bin/env bash
[ "\${GRAFT_EXPECT_GPU:-}" = 1 ] && [ "\${GRAFT_CPU_DEVICES:-}" = 2 ] || exit 3
for a in "\$@"; do
  case "\$a" in --gtest_output=xml:*) cp "$t/env_check.xml" "\${a#--gtest_output=xml:}" ;; esac
done
FAKE
printf '#!/usr/bin/env bash\nexit 0\n' > "$t/bundle/bin/bench__fake"
chmod +x "$t/bundle/bin/crashing" "$t/bundle/bin/bench__fake"
printf '%s 1\n' all_skipped mixed failing no_cases two_gpus no_device two_reasons \
  gpu_cases_skipped crashing bench__fake > "$t/bundle/list"
echo "env_check 2" >> "$t/bundle/list"

printf '#!/usr/bin/env bash\necho "NVIDIA H200, 143771 MiB, 570.00"\n' > "$t/path/nvidia-smi"
chmod +x "$t/path/nvidia-smi"
out=$(PATH="$t/path:$PATH" run_bundle "$t/bundle" 2>&1)
rc=$?
expect "$out" "gpu_check: 1 GPU(s):"
expect "$out" "all_skipped: FAILED (all skipped: $driver): passed 0, failed 0, skipped 2"
expect "$out" "mixed: ok: passed 2, failed 0, skipped 1 (skipped: $two)"
expect "$out" \
  "failing: FAILED: passed 1, failed 1, skipped 0 (first failure: S.C2: Expected equality)"
expect "$out" "no_cases: FAILED (no case ran)"
expect "$out" "two_gpus: NOT RUN (all skipped: $two): passed 0, failed 0, skipped 1"
expect "$out" "no_device: FAILED (all skipped: $none): passed 0, failed 0, skipped 1"
expect "$out" \
  "two_reasons: ok: passed 1, failed 0, skipped 3 (skipped: one reason (+1 other reason(s)))"
expect "$out" "gpu_cases_skipped: FAILED (GPU cases skipped: $none): passed 1, failed 0, skipped 2"
expect "$out" "crashing: FAILED (exit 139, no gtest report: it crashed or is not a gtest binary)"
expect "$out" "bench__fake: ok (benchmark, exit 0)"
expect "$out" "env_check: ok: passed 1, failed 0, skipped 0"
expect_status "some binaries failed" "not ok"

printf '%s 1\n' mixed two_reasons > "$t/bundle/list"
out=$(PATH="$t/path:$PATH" run_bundle "$t/bundle" 2>&1)
rc=$?
expect "$out" "mixed: ok: passed 2, failed 0, skipped 1 (skipped: $two)"
expect_status "every binary ok" ok

out=$(GPU_CHECK_SECONDS=0 PATH="$t/path:$PATH" run_bundle "$t/bundle" 2>&1)
rc=$?
expect "$out" "mixed: NOT RUN (time)"
expect_status "no time left" "not ok"

rm -f "$t"/ran.*
printf '#!/usr/bin/env bash\necho "NVIDIA-SMI has failed: no driver"\nexit 9\n' \
  > "$t/path/nvidia-smi"
out=$(PATH="$t/path:$PATH" run_bundle "$t/bundle" 2>&1)
rc=$?
first="gpu_check: NO GPU VISIBLE (nvidia-smi exit 9: NVIDIA-SMI has failed: no driver);"
first+=" nothing was run"
if [ "$(head -1 <<<"$out")" = "$first" ]; then
  echo "ok: no GPU said first"
else
  echo "FAILED: first line '$(head -1 <<<"$out")', expected '$first'"
  failures=$((failures + 1))
fi
expect "$out" "mixed: NOT RUN (no GPU visible)"
expect "$out" "two_reasons: NOT RUN (no GPU visible)"
if compgen -G "$t/ran.*" >/dev/null; then
  echo "FAILED: a binary ran although no GPU is visible"
  failures=$((failures + 1))
fi
expect_status "no GPU visible" "not ok"

if [ "$failures" -ne 0 ]; then
  echo "gpu_check_test: $failures FAILED"
  exit 1
fi
echo "gpu_check_test: all passed"
