#!/usr/bin/env python3
"""Sparse kernels against dense, same run: `tickinfer bench` (batch 1, one pinned core) on

  * the committed pruned bench models (block 1x16, trained and fine-tuned on the direction task):
    mlp_large_pruned80 / _pruned90 against dense mlp_large, lstm_tiny_pruned80 (stream step)
    against dense lstm_tiny, and each pruned file with --sparse off (the same weights, dense
    kernels: what the sparse kernels alone buy);
  * one-shot magnitude-pruned copies of mlp_large and lstm_tiny (tickinfer.pruning.magnitude_mask,
    no fine-tuning: latency does not depend on the values) at 50/80/90%, unstructured (tfmot's
    default) and block 1x16, run with the compiler's choice (--sparse auto) and forced dense;
  * int8: the same committed models quantized by `tickinfer quantize --mode int8` (calibrated on
    their in0.npy), the pruned .tkq with --sparse auto and off, against dense mlp_large / lstm_tiny
    int8 (the block-sparse int8 FULLY_CONNECTED and LSTM gate matrices).

Rounds are interleaved (every variant once per round) and medians over rounds of p50 and of min
are reported, with p99/p99.9/max of the last round's distribution. Prints a markdown table;
--json writes the raw numbers, --render prints a saved run's table again.
usage: tools/bench_sparse.py BUILD [--rounds 3] [--seconds 1.0] [--pin 1] [--only all|float|int8] [--json out.json]
       tools/bench_sparse.py BUILD --render out.json
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_pruning():
    # pruning.py is pure Python: load it from the source tree without the native module.
    import importlib.util
    spec = importlib.util.spec_from_file_location("tickinfer_pruning", os.path.join(ROOT, "python", "tickinfer", "pruning.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def one_shot(src, dst, sparsity, block):
    import keras  # the venv's Keras 3
    pruning = load_pruning()
    m = keras.models.load_model(src)
    for layer in m.layers:
        ws = layer.get_weights()
        new = []
        for w in ws:
            if w.ndim == 2 and w.size >= 1024:
                w = w * pruning.magnitude_mask(w, sparsity, block=block)[0]
            new.append(w)
        layer.set_weights(new)
    m.save(dst)


def quantize_int8(tickinfer, model_dir, dst):
    cmd = [tickinfer, "quantize", os.path.join(model_dir, "model.keras"), "--calibration",
           os.path.join(model_dir, "in0.npy"), "--mode", "int8", "-o", dst]
    subprocess.run(cmd, check=True, capture_output=True, text=True)


def int8_variants(tickinfer, bm, work):
    out = []  # (label, file, mode, --sparse, dense baseline label)
    for base, mode, pruned in (("mlp_large", "window", ("mlp_large_pruned80", "mlp_large_pruned90")),
                               ("lstm_tiny", "stream", ("lstm_tiny_pruned80",))):
        suffix = " (stream)" if mode == "stream" else ""
        dense_label = f"{base} int8 dense{suffix}"
        for name in (base,) + pruned:
            f = os.path.join(work, f"{name}_int8.tkq")
            quantize_int8(tickinfer, os.path.join(bm, name), f)
            if name == base:
                out.append((dense_label, f, mode, "auto", None))
            else:
                out.append((f"{name} int8{suffix}", f, mode, "auto", dense_label))
                out.append((f"{name} int8{suffix} --sparse off", f, mode, "off", dense_label))
    return out


def bench(tickinfer, model, mode, sparse, seconds, pin):
    cmd = [tickinfer, "bench", model, "--mode", mode, "--sparse", sparse, "--seconds", str(seconds), "--json"]
    if pin is not None:
        cmd += ["--pin", str(pin)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def float_variants(bm, work):
    variants = [  # (label, file, mode, --sparse, dense baseline label)
        ("mlp_large dense", f"{bm}/mlp_large/model.keras", "window", "auto", None),
        ("mlp_large_pruned80", f"{bm}/mlp_large_pruned80/model.keras", "window", "auto", "mlp_large dense"),
        ("mlp_large_pruned80 --sparse off", f"{bm}/mlp_large_pruned80/model.keras", "window", "off", "mlp_large dense"),
        ("mlp_large_pruned90", f"{bm}/mlp_large_pruned90/model.keras", "window", "auto", "mlp_large dense"),
        ("mlp_large_pruned90 --sparse off", f"{bm}/mlp_large_pruned90/model.keras", "window", "off", "mlp_large dense"),
        ("lstm_tiny dense (stream)", f"{bm}/lstm_tiny/model.keras", "stream", "auto", None),
        ("lstm_tiny_pruned80 (stream)", f"{bm}/lstm_tiny_pruned80/model.keras", "stream", "auto", "lstm_tiny dense (stream)"),
        ("lstm_tiny_pruned80 --sparse off", f"{bm}/lstm_tiny_pruned80/model.keras", "stream", "off", "lstm_tiny dense (stream)"),
    ]
    for base, mode, dense_label in (("mlp_large", "window", "mlp_large dense"),
                                    ("lstm_tiny", "stream", "lstm_tiny dense (stream)")):
        for s in (0.5, 0.8, 0.9):
            for kind, block in (("unstructured", None), ("block 1x16", (1, 16))):
                f = os.path.join(work, f"{base}_{kind.split()[0]}{int(s * 100)}.keras")
                one_shot(f"{bm}/{base}/model.keras", f, s, block)
                label = f"{base} one-shot {kind} {int(s * 100)}%"
                variants.append((label, f, mode, "auto", dense_label))
                variants.append((label + " --sparse off", f, mode, "off", dense_label))
    return variants


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--pin", type=int, default=1)
    ap.add_argument("--only", choices=("all", "float", "int8"), default="all")
    ap.add_argument("--json", default="", help="also save every round's results here")
    ap.add_argument("--render", default="", help="print the table of a saved --json run and exit")
    args = ap.parse_args()
    if args.render:
        return render(args.render)
    tk = os.path.join(args.build, "tickinfer")
    bm = os.path.join(ROOT, "bench", "models")
    work = tempfile.mkdtemp(prefix="bench_sparse_")
    variants = []
    if args.only in ("all", "float"):
        variants += float_variants(bm, work)
    if args.only in ("all", "int8"):
        variants += int8_variants(tk, bm, work)
    results = {v[0]: [] for v in variants}
    for r in range(args.rounds):
        for label, f, mode, sparse, _ in variants:
            results[label].append(bench(tk, f, mode, sparse, args.seconds, args.pin))
        print(f"# round {r + 1}/{args.rounds} done", file=sys.stderr)
    print(f"# tickinfer bench, batch 1, pinned to cpu {args.pin}, {args.rounds} interleaved rounds of "
          f"{args.seconds} s per variant; p50 and min = medians over rounds, tails from the last round")
    print_table(results, {label: dense_label for label, _, _, _, dense_label in variants})
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"baselines": {v[0]: v[4] for v in variants}, "runs": results}, fh, indent=1)


def print_table(results, baselines):
    """The markdown table. min (each round's fastest run, median over rounds) moves least when the
    shared machine interferes: two plans that run the same kernels have the same min."""
    med = {k: statistics.median(x["p50_ns"] for x in v) for k, v in results.items()}
    low = {k: statistics.median(x["min_ns"] for x in v) for k, v in results.items()}
    print("| variant | p50 ns | min ns | p99 ns | p99.9 ns | max ns | vs dense p50 | vs dense min |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, runs in results.items():
        last, base = runs[-1], baselines.get(label)
        ratios = (f"{med[base] / med[label]:.2f}x | {low[base] / low[label]:.2f}x" if base else " | ")
        print(f"| {label} | {med[label]:.0f} | {low[label]:.0f} | {last['p99_ns']:.0f} | "
              f"{last.get('p999_ns', 0):.0f} | {last['max_ns']:.0f} | {ratios} |")


def render(path):
    """Prints the table of a run saved with --json (this script's format) without measuring."""
    with open(path) as fh:
        saved = json.load(fh)
    print_table(saved["runs"], saved["baselines"])


if __name__ == "__main__":
    main()
