#!/usr/bin/env python3
"""Checks a run of tools/gpu_check.sh on a machine without a GPU (make test's gpu-dry-run step):
every binary and script the GPU run needs was found in the bundle and started, every GPU test
binary ran its host tests and skipped its GPU tests without a failure, and every GPU bench
stopped with 77 (no CUDA device) rather than a usage error, a crash or a timeout. A GPU session
has minutes of device time: this is what keeps the script it runs from rotting in between.

Usage: check_dry_run.py OUTDIR
"""
import json
import sys
from pathlib import Path

# The gtest binaries gpu_check.sh must run, each at least once.
EXPECTED_TESTS = {"cuda_resident_test", "cuda_graph_lstm_stack_test", "cuda_graph_form_test",
                  "serving_batching_test", "cuda_half_activations_test", "cuda_integer_program_test",
                  "cuda_form_choice_test"}


def main():
    out = Path(sys.argv[1])
    problems = []
    rows = []
    for n, line in enumerate((out / "gpu_check.jsonl").read_text().splitlines(), 1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            problems.append(f"line {n} is not JSON: {line[:120]}")
    tests = set()
    for r in rows:
        if "test" in r:
            tests.add(r["test"])
            if r["exit"] != 0 or r["failed"] != 0:
                problems.append(f"{r['test']} ({r['filter'] or 'all'}): exit {r['exit']}, {r['failed']} failed")
        elif "error" in r and r["error"] != "exit 77":
            problems.append(f"{r['error']} (77 expected: no CUDA device): {r.get('command', '')[:160]}")
    for t in sorted(EXPECTED_TESTS - tests):
        problems.append(f"{t} never ran")
    log = (out / "gpu_check.log").read_text()
    for needle in ("No such file", "command not found", "Traceback", "cannot open shared object"):
        if needle in log:
            at = log.index(needle)
            problems.append(f"the log says '{needle}': ...{log[max(0, at - 160):at + 80]}...")
    skipped = sum(1 for r in rows if "skipped" in r)
    print(f"gpu_check dry run: {len(rows)} JSON lines, {len(tests)} test binaries, {skipped} GPU rows skipped "
          f"for want of a device, {len(problems)} problems")
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
