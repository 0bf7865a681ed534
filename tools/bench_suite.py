#!/usr/bin/env python3
"""Latency of every bench-suite model against this machine's floor, measured in one run.

For each model in bench/models/manifest.json (window mode, plus stream mode for recurrent models)
runs `tickinfer bench --json`, and runs bench/floor_probe once to measure this core's peak FMA
rate and cache read bandwidth at each model's weight size. Floor = max(FLOPs / peak,
weight bytes / bandwidth). Prints a markdown table and writes JSON.

In the same run, the quantized variants of each model: the TFLiteConverter's float, dynamic-range
and full-int8 files of the same architecture (tests/fixtures/tflite/<model>/, made by
tools/make_tflite_fixtures.py) and, with --quantized DIR, every DIR/<model>.<variant>.tkq that
`tickinfer quantize` wrote (tools/bench_quantized.sh makes them). Full-int8 rows get an int8
floor: max(MACs / the probe's exact int8 multiply-accumulate rate, weight bytes / bandwidth);
dynamic-range, bf16 and mixed rows show none (no single rate bounds them).

    tools/bench_suite.py BUILD_DIR [--seconds S] [--pin CPU] [--json OUT]

Uses only the Python standard library.
"""
import argparse
import json
import os
import platform
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECURRENT = ("lstm_window", "gru_window", "lstm_tiny")
# The targets (one core of a 2-core AMD Zen 5 with AVX-512), for the verdict column.
TARGETS = {
    ("mlp_small", "window"): ("p50 <= 200 ns, p99 <= 2 x p50",
                              lambda r: r["p50_ns"] <= 200 and r["p99_ns"] <= 2 * r["p50_ns"]),
    ("mlp_large", "window"): ("p50 <= 600 ns", lambda r: r["p50_ns"] <= 600),
    ("lstm_window", "window"): ("p50 <= 12 us", lambda r: r["p50_ns"] <= 12000),
    ("lstm_window", "stream"): ("p50 <= 400 ns", lambda r: r["p50_ns"] <= 400),
    ("lstm_tiny", "stream"): ("p99 <= 6 us", lambda r: r["p99_ns"] <= 6000),
}


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--pin", type=int, default=None)
    ap.add_argument("--isa", default="")
    ap.add_argument("--json", default=None)
    ap.add_argument("--quantized", default=None, help="folder of <model>.<variant>.tkq files to bench too")
    ap.add_argument("--no-variants", action="store_true", help="only the Keras fp32 models")
    args = ap.parse_args()
    cli = os.path.join(args.build, "tickinfer")
    manifest = json.load(open(os.path.join(ROOT, "bench", "models", "manifest.json")))

    runs = []
    for case in manifest["cases"]:
        name = case["name"]
        model = os.path.join(ROOT, "bench", "models", case["file"])
        for mode in ("window", "stream") if name in RECURRENT else ("window",):
            cmd = [cli, "bench", model, "--mode", mode, "--seconds", str(args.seconds), "--json", "--floor"]
            if args.pin is not None:
                cmd += ["--pin", str(args.pin)]
            if args.isa:
                cmd += ["--isa", args.isa]
            r = run_json(cmd)
            r["name"], r["mode"], r["variant"] = name, mode, "keras fp32"
            runs.append(r)
            print(f"  {name:12s} {mode:6s} p50 {r['p50_ns']:>8} ns  p99 {r['p99_ns']:>8} ns", file=sys.stderr)
            if args.no_variants:
                continue
            variants = []
            tfl = os.path.join(ROOT, "tests", "fixtures", "tflite", name)
            for v in ("float", "dynamic", "int8"):
                if os.path.exists(os.path.join(tfl, v + ".tflite")):
                    variants.append((f"tflite {v}", os.path.join(tfl, v + ".tflite")))
            if args.quantized and os.path.isdir(args.quantized):
                for f in sorted(os.listdir(args.quantized)):
                    if f.startswith(name + ".") and f.endswith(".tkq"):
                        variants.append((f"tkq {f[len(name) + 1:-4]}", os.path.join(args.quantized, f)))
            for label, path in variants:
                vcmd = [cli, "bench", path, "--mode", mode, "--seconds", str(args.seconds), "--json", "--floor"] + cmd[9:]
                try:
                    v = run_json(vcmd)
                except subprocess.CalledProcessError as e:  # e.g. stream mode over a T>1 TFLite file
                    print(f"  {name:12s} {mode:6s} {label}: skipped ({e.stderr.strip().splitlines()[-1] if e.stderr else e})",
                          file=sys.stderr)
                    continue
                v["name"], v["mode"], v["variant"] = name, mode, label
                runs.append(v)
                print(f"  {name:12s} {mode:6s} {label:16s} p50 {v['p50_ns']:>8} ns  p99 {v['p99_ns']:>8} ns",
                      file=sys.stderr)

    # Bandwidth is measured at each plan's working set per run, the smaller of its resident
    # weights and the bytes one run reads (which fixes the cache level they stream from); the
    # bytes a run must read (recurrent weights once per step) are divided by it. The probe is a
    # plain streaming loop, so the floor is an estimate: a ratio near 1 means memory-bound.
    def working_set(r):
        return max(min(int(r["weight_footprint_bytes"]), int(r["weight_bytes"])), 1024)

    sizes = sorted({working_set(r) for r in runs})
    probe = run_json([os.path.join(args.build, "bench", "floor_probe")] + [str(s) for s in sizes])
    # Kernels held to AVX2 (--isa avx2 or TICKINFER_ISA=avx2) on a CPU with AVX-512 / VNNI are
    # held to AVX2's rates too; the probe measures both.
    isa = args.isa or os.environ.get("TICKINFER_ISA", "")
    held_to_avx2 = isa == "avx2" and probe.get("peak_avx2_gflops")
    peak = probe["peak_avx2_gflops"] if held_to_avx2 else probe["peak_gflops"]
    int8_rate = probe.get("int8_avx2_gmacs") if held_to_avx2 else probe.get("int8_gmacs")
    int8_isa = "avx2" if held_to_avx2 else probe.get("int8_isa", "avx2")
    fp32_flops = {(r["name"], r["mode"]): r["flops"] for r in runs if r["variant"] == "keras fp32"}
    for r in runs:
        bw = probe["read_gbps"][str(working_set(r))]
        compute_ns = r["flops"] / peak
        memory_ns = r["weight_bytes"] / bw
        if r["variant"] in ("tkq int8", "tflite int8") and int8_rate:
            # Full int8: one multiply-accumulate per 2 FLOPs at the probe's exact int8 rate. The
            # FLOPs are the Keras plan's for the same model and mode where it ran: those count
            # what a reset state lets every engine skip (a TFLite file's op list does not).
            flops = fp32_flops.get((r["name"], r["mode"]), r["flops"])
            compute_ns = flops / 2 / int8_rate
        r["floor_ns"] = (max(compute_ns, memory_ns)
                         if r["variant"] in ("keras fp32", "tflite float", "tkq int8", "tflite int8") else None)
        r["floor_bound"] = "compute" if compute_ns >= memory_ns else "cache"
        r["p50_over_floor"] = r["p50_ns"] / r["floor_ns"] if r["floor_ns"] else None
        target = TARGETS.get((r["name"], r["mode"])) if r["variant"] == "keras fp32" else None
        r["target"] = target[0] if target else ""
        r["meets_target"] = target[1](r) if target else None

    cpu = runs[0].get("cpu", platform.processor()) if runs else ""
    print(f"\nmachine: {cpu}; one core{'' if args.pin is None else f' (pinned to cpu {args.pin})'}; "
          f"kernels {runs[0]['isa'] if runs else '?'}; {args.seconds:g} s per model after warm-up; "
          f"measured peak {peak:.1f} GFLOP/s ({'avx2' if held_to_avx2 else probe['isa']}), "
          f"int8 {int8_rate or 0:.1f} GMAC/s ({int8_isa})\n")
    print("| model | mode | variant | p50 ns | p90 ns | p99 ns | p99.9 ns | max ns | mean ns | kFLOP | weights KB (read/resident) "
          "| floor ns | p50/floor | target | met |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for r in runs:
        met = "" if r["meets_target"] is None else ("yes" if r["meets_target"] else "no")
        floor = f"{r['floor_ns']:.0f} ({r['floor_bound']})" if r["floor_ns"] else ""
        ratio = f"{r['p50_over_floor']:.2f}" if r["p50_over_floor"] else ""
        print(f"| {r['name']} | {r['mode']} | {r['variant']} | {r['p50_ns']} | {r['p90_ns']} | {r['p99_ns']} | {r['p999_ns']} "
              f"| {r['max_ns']} | {r['mean_ns']:.0f} | {r['flops'] / 1e3:.1f} | {r['weight_bytes'] / 1024:.1f} / {r['weight_footprint_bytes'] / 1024:.1f} "
              f"| {floor} | {ratio} | {r['target']} | {met} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"probe": probe, "runs": runs, "seconds": args.seconds, "pin": args.pin}, f, indent=1)


if __name__ == "__main__":
    main()
