#!/usr/bin/env python3
"""One line on what a gtest binary did on a GPU machine, for tools/gpu_check.sh.

usage: gtest_summary.py REPORT.xml EXIT_CODE

REPORT.xml is the binary's --gtest_output=xml: report (gtest's JSON report carries no skip
messages, its XML report does). Prints, and exits 0 for the first form, 2 for the second, 1
for the others:

  ok: passed P, failed 0, skipped S[ (skipped: REASON)]
  NOT RUN (all skipped: needs N GPU(s), there are M (...)): ...  (every case needs more GPUs
                                                                 than the machine's M >= 1)
  FAILED (all skipped: REASON): passed 0, failed 0, skipped S   (no case ran: measured nothing)
  FAILED (GPU cases skipped: REASON): passed P, failed 0, ...   (cases ran, but the GPU ones
                                                                 found no usable GPU)
  FAILED: passed P, failed F, skipped S (first failure: SUITE.NAME: MESSAGE)
  FAILED (exit N): passed P, failed 0, skipped S                (failed after its cases)
  FAILED (no case ran)
  FAILED (timed out) / FAILED (exit N, no gtest report)         (killed, crashed)

REASON is the first skip message that decided the line, with the number of other distinct
ones. The GPU skips are tests/cuda/gpu_skip.h's (core/backend/cuda/probe.cc's require_gpus):
"needs N GPU(s), there are M (...)", "needs N GPU(s), none usable (...)" and "built without
CUDA (--config=cuda)"; only the first with 0 < M < N is a machine with too few GPUs, the others
say the binary found no usable GPU where nvidia-smi shows one.
"""
import re
import sys
import xml.etree.ElementTree as ET

GPU_SKIP = re.compile(r"needs (\d+) GPU\(s\)(?:, there are (\d+) )?")


def too_few_gpus(reason):
    m = GPU_SKIP.match(reason)
    return m is not None and m.group(2) is not None and 0 < int(m.group(2)) < int(m.group(1))


def no_usable_gpu(reason):
    if reason.startswith("built without CUDA"):
        return True
    return GPU_SKIP.match(reason) is not None and not too_few_gpus(reason)


def first(reasons):
    """The first of some distinct skip reasons, with how many others there are."""
    if len(reasons) > 1:
        return f"{reasons[0]} (+{len(reasons) - 1} other reason(s))"
    return reasons[0] if reasons else ""


def message(element):
    """A failure's or skip's text without gtest's leading "file:line" line, on one line."""
    text = element.get("message") or element.text or ""
    lines = text.split("\n")
    if len(lines) > 1 and ":" in lines[0] and lines[0].rsplit(":", 1)[1].isdigit():
        lines = lines[1:]
    return " ".join(line.strip() for line in lines if line.strip())


def summary(report, exit_code):
    if exit_code in (124, 137):
        return 1, "FAILED (timed out)"
    try:
        root = ET.parse(report).getroot()
    except (OSError, ET.ParseError):
        return 1, f"FAILED (exit {exit_code}, no gtest report: it crashed or is not a gtest binary)"
    passed, failed, skips, first_failure = 0, 0, [], None
    for case in root.iter("testcase"):
        if case.get("status") == "notrun":  # DISABLED_
            continue
        failures = case.findall("failure")
        skipped = case.find("skipped")
        if failures:
            failed += 1
            if first_failure is None:
                name = f"{case.get('classname')}.{case.get('name')}"
                first_failure = f"{name}: {message(failures[0])}"
        elif skipped is not None or case.get("result") == "skipped":
            skips.append(message(skipped) if skipped is not None else "")
        else:
            passed += 1
    counts = f"passed {passed}, failed {failed}, skipped {len(skips)}"
    reasons = list(dict.fromkeys(skips))
    unusable = [r for r in reasons if no_usable_gpu(r)]
    if failed:
        return 1, f"FAILED: {counts} (first failure: {first_failure})"
    if exit_code != 0:
        return 1, f"FAILED (exit {exit_code}): {counts}"
    if passed == 0 and skips and all(too_few_gpus(r) for r in reasons):
        return 2, f"NOT RUN (all skipped: {first(reasons)}): {counts}"
    if passed == 0:
        if not skips:
            return 1, "FAILED (no case ran)"
        return 1, f"FAILED (all skipped: {first(unusable or reasons)}): {counts}"
    if unusable:
        return 1, f"FAILED (GPU cases skipped: {first(unusable)}): {counts}"
    return 0, f"ok: {counts}" + (f" (skipped: {first(reasons)})" if skips else "")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    status, line = summary(sys.argv[1], int(sys.argv[2]))
    print(line)
    sys.exit(status)


if __name__ == "__main__":
    main()
