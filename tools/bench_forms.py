#!/usr/bin/env python3
"""Does a model reached through another format run as fast as the same model from `.keras`?

For every bench-suite model, times `tickinfer bench` on the `.keras` original and on each form
tools/export_bench_forms.py wrote (SavedModel directory, tf2onnx `.onnx`, Keras 3 TFLite), window
mode and, for recurrent models, stream mode. The forms are interleaved: ROUNDS rounds, each running
every form once, so drift on a shared machine hits all of them alike; the table gives each form's
median p50 (and the p99/p99.9/max of its median-p50 run) and its ratio to `.keras`: the median
over rounds of the form's p50 over the `.keras` p50 of the same round (paired, so a slow minute
of the VM cancels out). The bar: ratio <= 1.10. A form that fails to load or compile is listed
with its error.

    tools/bench_forms.py BUILD_DIR FORMS_DIR [--rounds 3] [--seconds 1] [--pin CPU] [--json OUT]
                         [--models NAME,...]

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
BAR = 1.10


def bench(cli, path, mode, args):
    cmd = [cli, "bench", path, "--mode", mode, "--seconds", str(args.seconds), "--json"]
    if args.pin is not None:
        cmd += ["--pin", str(args.pin)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        lines = (p.stderr or p.stdout).strip().splitlines()
        return {"error": lines[-1] if lines else f"exit {p.returncode}"}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("forms")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--pin", type=int, default=None)
    ap.add_argument("--json", default=None)
    ap.add_argument("--models", default=None, help="comma-separated subset of the bench models")
    args = ap.parse_args()
    cli = os.path.join(args.build, "tickinfer")
    forms = json.load(open(os.path.join(args.forms, "forms.json")))
    rows = []
    only = set(args.models.split(",")) if args.models else None
    for name, files in forms["models"].items():
        if only is not None and name not in only:
            continue
        variants = [(".keras", os.path.join(ROOT, "bench", "models", name, "model.keras")),
                    ("SavedModel (Keras 3 export)", os.path.join(args.forms, name, files["savedmodel"])),
                    (f"ONNX (tf2onnx of {files['onnx_from']})", os.path.join(args.forms, name, files["onnx"])),
                    ("TFLite (Keras 3 converter)", os.path.join(args.forms, name, files["keras3_tflite"]))]
        for mode in ("window", "stream") if name in RECURRENT else ("window",):
            runs = {label: [] for label, _ in variants}
            for _ in range(args.rounds):
                for label, path in variants:
                    runs[label].append(bench(cli, path, mode, args))
            base_runs = runs[".keras"]
            for label, _ in variants:
                ok = [r for r in runs[label] if "error" not in r]
                if not ok:
                    rows.append({"model": name, "mode": mode, "form": label, "error": runs[label][0]["error"]})
                    continue
                p50 = statistics.median(r["p50_ns"] for r in ok)
                mid = min(ok, key=lambda r: abs(r["p50_ns"] - p50))
                paired = [r["p50_ns"] / b["p50_ns"] for r, b in zip(runs[label], base_runs)
                          if "error" not in r and "error" not in b and b["p50_ns"] > 0]
                row = {"model": name, "mode": mode, "form": label, "p50_ns": p50, "p99_ns": mid["p99_ns"],
                       "p999_ns": mid["p999_ns"], "max_ns": mid["max_ns"], "p50s": [r["p50_ns"] for r in ok],
                       "ratio": statistics.median(paired) if paired else None}
                rows.append(row)
                print(f"  {name:12s} {mode:6s} {label:32s} p50 {p50:>9.0f} ns", file=sys.stderr)
    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"\nmachine: {cpu}; {os.cpu_count()} CPUs; load {os.getloadavg()[0]:.2f}; "
          f"{'pinned to cpu ' + str(args.pin) if args.pin is not None else 'not pinned'}; {args.rounds} interleaved "
          f"rounds of {args.seconds:g} s per form; TF {forms['tensorflow']}, Keras {forms['keras']}\n")
    print("| model | mode | form | p50 ns (median) | p99 ns | p99.9 ns | max ns | p50 / .keras | <= 1.10 |")
    print("|---|---|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['model']} | {r['mode']} | {r['form']} | refused: {r['error']} | | | | | no |")
            continue
        ratio = f"{r['ratio']:.2f}" if r["ratio"] else ""
        met = "" if r["form"] == ".keras" else ("yes" if r["ratio"] and r["ratio"] <= BAR else "no")
        print(f"| {r['model']} | {r['mode']} | {r['form']} | {r['p50_ns']:.0f} | {r['p99_ns']} | {r['p999_ns']} "
              f"| {r['max_ns']} | {ratio} | {met} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": cpu, "rounds": args.rounds, "seconds": args.seconds, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
