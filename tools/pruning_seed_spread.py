#!/usr/bin/env python3
"""Pruned vs dense accuracy over many seeds, on the direction task (tools/make_direction_task.py).

One run of tools/make_pruned_models.py cannot resolve half a point: the same dense model ends
up to 3 accuracy points apart when only its seed changes. This repeats that script's mlp_large
recipe (dense 4 epochs Adam 1e-3; the baseline trained --epochs more at 5e-4; each pruned variant
fine-tuned --epochs from the dense weights under the same PolynomialDecay schedule) for seeds
7919 * (1..N), each seed setting the initial weights and the shuffling, and reports per variant
the mean, standard deviation and standard error of the paired deltas (pruned - that seed's
baseline, in points). The functions are make_pruned_models.py's own, so a seed here trains
exactly what that script trains with SEED set to it.

Usage: pruning_seed_spread.py [--data build/direction_task] [--seeds 10] [--epochs 3]
       [--variants 0.5:1x16,0.8:1x16,0.8:1x16:no-permute,0.8:none,0.8:1x16:dense-first] [--json out.json]
(about a minute per seed on 2 cores). Prints a markdown table.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_pruned_models as recipe  # noqa: E402  (sets the TensorFlow environment first)

import keras  # noqa: E402
import numpy as np  # noqa: E402

DEFAULT_VARIANTS = "0.5:1x16,0.8:1x16,0.8:1x16:no-permute,0.8:none"
WIDTHS = [256, 128, 64, 32, 16]  # mlp_large


OPTIONS = {"dense-first": ", first layer dense", "no-permute": ", units not regrouped"}


def parse_variants(text):
    """'TARGET:BLOCK[:OPTION...]' items, comma separated: BLOCK is HxW or none; OPTION dense-first
    leaves the 10-input first layer unpruned (the others as make_pruned_models prunes them),
    no-permute skips the recipe's regrouping of units for the blocks (tickinfer.block_permutation)."""
    out = []
    for item in text.split(","):
        parts = item.split(":")
        if len(parts) < 2 or any(o not in OPTIONS for o in parts[2:]):
            raise SystemExit(f"variant '{item}': expected TARGET:BLOCK[:{'|'.join(OPTIONS)}...]")
        target, shape, options = float(parts[0]), parts[1], set(parts[2:])
        block = None if shape == "none" else tuple(int(v) for v in shape.split("x"))
        name = f"{target * 100:.0f}% " + ("unstructured" if block is None else f"block {shape}")
        out.append((target, block, options, name + "".join(OPTIONS[o] for o in parts[2:])))
    return out


def one_seed(seed, x, y, xv, yv, epochs, variants):
    recipe.SEED = seed  # read by mlp() (initial weights) and prune() (fine-tuning shuffle)
    dense = recipe.mlp(WIDTHS)
    recipe.compile_model(dense, "mlp", 1e-3)
    keras.utils.set_random_seed(seed)
    dense.fit(x, y, batch_size=256, epochs=4, verbose=0, shuffle=True)
    longer = recipe.mlp(WIDTHS)
    longer.set_weights(dense.get_weights())
    recipe.compile_model(longer, "mlp", 5e-4)
    keras.utils.set_random_seed(seed)
    longer.fit(x, y, batch_size=256, epochs=epochs, verbose=0, shuffle=True)
    row = {"seed": seed, "baseline": recipe.evaluate(longer, xv, yv, "mlp")}
    for target, block, options, name in variants:
        layers = recipe.prunable_names(dense)[1:] if "dense-first" in options else None
        pruned = recipe.prune(dense, x, y, "mlp", target, block, epochs, 256, layers=layers,
                              permute="no-permute" not in options)
        row[name] = recipe.evaluate(pruned, xv, yv, "mlp")
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="build/direction_task")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--epochs", type=int, default=3, help="baseline and fine-tuning epochs (make_pruned_models' default)")
    ap.add_argument("--variants", default=DEFAULT_VARIANTS, help="TARGET:BLOCK[:dense-first][:no-permute],... (block HxW or none)")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    variants = parse_variants(args.variants)
    d = Path(args.data)
    x, y = np.load(d / "x_train.npy"), np.load(d / "y_train.npy")
    xv, yv = np.load(d / "x_val.npy"), np.load(d / "y_val.npy")
    rows = []
    for i in range(1, args.seeds + 1):
        rows.append(one_seed(7919 * i, x, y, xv, yv, args.epochs, variants))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    base_acc = [r["baseline"]["accuracy"] for r in rows]
    base_auc = [r["baseline"]["auc"] for r in rows]
    print(f"mlp_large, {len(rows)} seeds, {args.epochs} epochs; dense baseline accuracy {statistics.mean(base_acc):.4f}"
          f" (sd {statistics.stdev(base_acc):.4f}), AUC {statistics.mean(base_auc):.4f} (sd {statistics.stdev(base_auc):.4f})")
    print("| variant | d accuracy mean | sd | se | d AUC mean | sd | se |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for *_, name in variants:
        cols = []
        for metric in ("accuracy", "auc"):
            deltas = [100 * (r[name][metric] - r["baseline"][metric]) for r in rows]
            sd = statistics.stdev(deltas)
            cols += [f"{statistics.mean(deltas):+.2f}", f"{sd:.2f}", f"{sd / len(deltas) ** 0.5:.2f}"]
        print(f"| {name} | " + " | ".join(cols) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
