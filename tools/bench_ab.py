#!/usr/bin/env python3
"""Two tickinfer binaries on the bench suite, interleaved in one run: is the new one slower?

For a change that must not cost speed (a refactor, a new front end): every bench-suite model
(bench/models/manifest.json; window mode, plus stream mode for recurrent ones) and, with
--variants, its TFLite float/dynamic-range/int8 files (tests/fixtures/tflite/<model>/) is timed
with `tickinfer bench --json` by each binary in turn, ROUNDS times, the order of the two
alternating per round so drift on a shared machine falls on both. Prints one markdown row per
case: the median over rounds of each binary's p50 and p99, and new/old p50 paired per round
(the median over rounds of new p50 / old p50 of the same round: on a VM whose speed swings from
one minute to the next, the two runs of a round see the same machine). Exit status 1 when a
case's ratio is above --limit (default 1.03). $TICKINFER_ISA picks the kernels of both.

    tools/bench_ab.py OLD_TICKINFER NEW_TICKINFER [--rounds N] [--seconds S] [--pin CPU]
                      [--variants] [--models NAME,...] [--json OUT]

Uses only the Python standard library.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECURRENT = ("lstm_window", "gru_window", "lstm_tiny")


def cases(with_variants):
    manifest = json.load(open(os.path.join(ROOT, "bench", "models", "manifest.json")))
    for case in manifest["cases"]:
        name = case["name"]
        files = [("keras fp32", os.path.join(ROOT, "bench", "models", case["file"]))]
        if with_variants:
            tfl = os.path.join(ROOT, "tests", "fixtures", "tflite", name)
            for v in ("float", "dynamic", "int8"):
                path = os.path.join(tfl, v + ".tflite")
                if os.path.exists(path):
                    files.append((f"tflite {v}", path))
        for mode in ("window", "stream") if name in RECURRENT else ("window",):
            for label, path in files:
                yield name, mode, label, path


def bench(cli, path, mode, seconds, pin):
    cmd = [cli, "bench", path, "--mode", mode, "--seconds", str(seconds), "--json"]
    if pin is not None:
        cmd += ["--pin", str(pin)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["failed"])[-1]
    return json.loads(p.stdout.strip().splitlines()[-1]), ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--pin", type=int, default=None)
    ap.add_argument("--variants", action="store_true", help="the TFLite float/dynamic/int8 files too")
    ap.add_argument("--limit", type=float, default=1.03)
    ap.add_argument("--json", default=None)
    ap.add_argument("--models", default=None, help="comma-separated subset of the bench models")
    args = ap.parse_args()
    only = set(args.models.split(",")) if args.models else None

    results = {}
    skipped = {}
    for r in range(args.rounds):
        order = [("old", args.old), ("new", args.new)]
        if r % 2:
            order.reverse()
        for name, mode, label, path in cases(args.variants):
            if only is not None and name not in only:
                continue
            key = (name, mode, label)
            if key in skipped:
                continue
            for side, cli in order:
                run, err = bench(cli, path, mode, args.seconds, args.pin)
                if run is None:
                    skipped[key] = f"{side}: {err}"
                    break
                results.setdefault(key, {"old": [], "new": []})[side].append(run)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)

    first = next((v["new"][0] for v in results.values() if v["new"]), {})
    print(f"\nmachine: {first.get('cpu', platform.processor())}; kernels {first.get('isa', '?')}; "
          f"{args.rounds} interleaved rounds of {args.seconds:g} s per binary and case"
          f"{'' if args.pin is None else f', pinned to cpu {args.pin}'}; medians over rounds\n")
    print("| model | mode | variant | old p50 ns | new p50 ns | new/old p50 | old p99 ns | new p99 ns |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    worst, rows = 0.0, []
    for key, v in results.items():
        if key in skipped or not v["old"] or len(v["old"]) != len(v["new"]):
            continue
        med = {s: {q: statistics.median(x[q] for x in v[s]) for q in ("p50_ns", "p99_ns")} for s in v}
        ratio = statistics.median(n["p50_ns"] / o["p50_ns"] for o, n in zip(v["old"], v["new"]) if o["p50_ns"] > 0)
        worst = max(worst, ratio)
        rows.append({"name": key[0], "mode": key[1], "variant": key[2], "old": med["old"],
                     "new": med["new"], "ratio_p50": ratio})
        print(f"| {key[0]} | {key[1]} | {key[2]} | {med['old']['p50_ns']:.0f} | {med['new']['p50_ns']:.0f} "
              f"| {ratio:.3f} | {med['old']['p99_ns']:.0f} | {med['new']['p99_ns']:.0f} |")
    for key, why in skipped.items():
        print(f"skipped {' '.join(key)}: {why}")
    verdict = "PASS" if worst <= args.limit else "FAIL"
    print(f"\nworst new/old p50: {worst:.3f} (limit {args.limit}): {verdict}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": args.rounds, "seconds": args.seconds, "pin": args.pin, "rows": rows,
                       "skipped": {" ".join(k): w for k, w in skipped.items()}}, f, indent=1)
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
