#!/usr/bin/env python3
"""Dense vs pruned models on the synthetic direction task (tools/make_direction_task.py).

Trains, in Keras 3 with fixed seeds:
  mlp_large-like: Dense 256-128-64-32-16 (relu) -> Dense 1 (sigmoid) on the 10 features;
  mlp_small-like: Dense 128-64-32 (relu) -> Dense 1 (sigmoid);
  lstm_tiny (exact bench architecture: LSTM(128, return_sequences) -> LSTM(128) -> Dense(32),
    T = 1, 128 inputs): the 10 features zero-padded to 128, trained through its first output
    unit as a logit (binary cross-entropy on out[:, 0]); a subset of the rows.
then fine-tunes each with tickinfer.pruning (PolynomialDecay from 0 to the target over the first
~60% of the fine-tuning steps, frequency 50, Adam) to 50/80/90 % in block (1, 16) form and in
unstructured form, strips, and reports validation accuracy and AUC (dense vs each).
Pruned: every Dense kernel with >= 1024 weights (smaller ones stay dense) and the LSTM kernels
and recurrent kernels. Biases are never pruned.

Writes bench/models/{mlp_large_pruned80,mlp_large_pruned90,lstm_tiny_pruned80} (block form),
bench/models/mlp_large_task (the dense twin), each model.keras + in0.npy (8 validation rows) +
out0.npy (Keras on the reloaded file, row by row), their manifest entries (existing ones kept),
and the unstructured and other variants plus results.json under --scratch (not committed).

Usage: make_pruned_models.py [--data build/direction_task] [--scratch build/pruning]
       [--bench bench/models] [--finetune-epochs 3] [--quick]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["CUDA_VISIBLE_DEVICES"] = ""
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
os.environ["TF_DETERMINISTIC_OPS"] = "1"
os.environ.pop("TF_USE_LEGACY_KERAS", None)

import numpy as np  # noqa: E402
import keras  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SEED = 20240611
ROWS = 8
MIN_PRUNED = 1024


def load_module(name):
    try:
        return importlib.import_module(f"tickinfer.{name}")
    except ImportError:  # the module is pure Python: take it from the source tree
        spec = importlib.util.spec_from_file_location(f"tickinfer_{name}", ROOT / f"python/tickinfer/{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module


pruning = load_module("pruning")
block_permutation = load_module("block_permutation")


def mlp(widths):
    keras.utils.set_random_seed(SEED)
    return keras.Sequential([keras.Input((10,))] + [keras.layers.Dense(w, activation="relu") for w in widths]
                            + [keras.layers.Dense(1, activation="sigmoid")])


def lstm_tiny():
    keras.utils.set_random_seed(SEED)
    return keras.Sequential([keras.Input((1, 128)), keras.layers.LSTM(128, return_sequences=True),
                             keras.layers.LSTM(128), keras.layers.Dense(32)])


def first_logit_bce(y_true, y_pred):
    return keras.losses.binary_crossentropy(keras.ops.reshape(y_true, (-1, 1)), y_pred[:, :1], from_logits=True)


def scores(model, x, kind):
    out = model.predict(x, batch_size=4096, verbose=0)
    return 1 / (1 + np.exp(-out[:, 0])) if kind == "lstm" else out[:, 0]


def evaluate(model, x, y, kind):
    p = scores(model, x, kind)
    return {"accuracy": float(((p > 0.5) == (y > 0.5)).mean()), "auc": float(roc_auc_score(y, p))}


def compile_model(model, kind, lr):
    model.compile(keras.optimizers.Adam(lr), first_logit_bce if kind == "lstm" else "binary_crossentropy")


def prunable_names(model):
    names = []
    for layer in model.layers:
        if type(layer).__name__ == "Dense" and layer.kernel.shape[0] * layer.kernel.shape[1] >= MIN_PRUNED:
            names.append(layer.name)
        elif type(layer).__name__ == "LSTM":
            names.append(layer.name)
    return names


def prune(dense, x, y, kind, target, block, epochs, batch, layers=None, permute=True):
    """Fine-tunes a pruned copy of `dense` (left untouched) and strips it. Block form on an MLP:
    the hidden units are first regrouped for the blocks (tickinfer.block_permutation; the same
    function, more magnitude kept) unless permute is False."""
    steps = epochs * (-(-len(x) // batch))
    sched = pruning.PolynomialDecay(0.0, target, begin_step=0, end_step=max(50, int(steps * 0.6) // 50 * 50), frequency=50)
    layers = layers or prunable_names(dense)
    if permute and block is not None and kind == "mlp":
        copy = keras.models.clone_model(dense)
        copy.set_weights(dense.get_weights())
        block_permutation.permute_units_for_blocks(copy, target, block_width=block[1], layers=layers, seed=SEED)
        dense = copy
    pm = pruning.prune_low_magnitude(dense, sched, block=block, layers=layers)
    compile_model(pm, kind, 5e-4)
    keras.utils.set_random_seed(SEED + 1)
    pm.fit(x, y, batch_size=batch, epochs=epochs, verbose=0, shuffle=True, callbacks=[pruning.UpdatePruningStep()])
    return pruning.strip_pruning(pm)


def layer_sparsity(model):
    return [{"layer": r["layer"], "weight": r["weight"], "shape": r["shape"],
             "sparsity": round(r["sparsity"], 4)} for r in pruning.sparsity_report(model)]


def run_rows(model, x):
    return np.concatenate([np.asarray(model(x[i:i + 1], training=False)) for i in range(len(x))])


def write_bench(model, name, inputs, bench: Path, seed, layers_list) -> dict:
    d = bench / name
    d.mkdir(parents=True, exist_ok=True)
    plain = keras.Sequential.from_config(model.get_config())  # uncompiled: no optimizer state saved
    plain.set_weights(model.get_weights())
    plain.save(d / "model.keras")
    back = keras.models.load_model(d / "model.keras", compile=False)
    out = run_rows(back, inputs).astype(np.float32)
    np.save(d / "in0.npy", np.ascontiguousarray(inputs, np.float32))
    np.save(d / "out0.npy", out)
    # atol as tools/make_fixtures.py sets it: 4x Keras' own float32 noise against float64.
    keras.backend.set_floatx("float64")
    try:
        m64 = keras.Sequential.from_config(back.get_config())
        m64.build((None,) + tuple(back.inputs[0].shape[1:]))
        m64.set_weights([w.astype(np.float64) for w in back.get_weights()])
        out64 = run_rows(m64, inputs.astype(np.float64))
    finally:
        keras.backend.set_floatx("float32")
    noise = float(np.max(np.maximum(0.0, np.abs(out - out64) - 1e-5 * np.abs(out64))))
    atol = max(1e-6 * float(np.abs(out).max()), 4 * noise, 1e-30)
    return {"name": name, "format": "keras3", "file": f"{name}/model.keras", "seed": seed,
            "inputs": [f"{name}/in0.npy"], "outputs": [f"{name}/out0.npy"], "rtol": 1e-5,
            "atol": float(f"{atol:.3g}"), "layers": layers_list, "stream": None}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="build/direction_task")
    ap.add_argument("--scratch", default="build/pruning")
    ap.add_argument("--bench", default="bench/models")
    ap.add_argument("--quick", action="store_true", help="one epoch each (smoke test)")
    # The dense baseline trains the same number more. How the deltas move with this (3 vs 6):
    # docs/pruning.md, "Accuracy on the direction task".
    ap.add_argument("--finetune-epochs", type=int, default=3, help="fine-tuning epochs of each pruned model (default 3)")
    args = ap.parse_args()
    data = Path(args.data)
    xt, yt = np.load(data / "x_train.npy"), np.load(data / "y_train.npy")
    xv, yv = np.load(data / "x_val.npy"), np.load(data / "y_val.npy")
    scratch, bench = Path(args.scratch), Path(args.bench)
    scratch.mkdir(parents=True, exist_ok=True)
    e_dense, e_prune = (1, 1) if args.quick else (4, args.finetune_epochs)
    results = {"command": " ".join(["tools/make_pruned_models.py"] + sys.argv[1:]),
               "data": json.loads((data / "task.json").read_text()).get("command"), "models": {}}
    manifest_entries = []
    jobs = [("mlp_large", "mlp", lambda: mlp([256, 128, 64, 32, 16]), (0.5, 0.8, 0.9), ("block", "unstructured"), 1.0),
            ("mlp_small", "mlp", lambda: mlp([128, 64, 32]), (0.5, 0.8, 0.9), ("block", "unstructured"), 1.0),
            ("lstm_tiny", "lstm", lstm_tiny, (0.8,), ("block", "unstructured"), 0.25)]
    for name, kind, build, targets, forms, share in jobs:
        t0 = time.time()
        n = int(len(xt) * share)
        x_tr, y_tr = xt[:n], yt[:n]
        x_va = xv
        if kind == "lstm":
            pad = lambda a: np.pad(a, [(0, 0), (0, 118)])[:, None, :]  # noqa: E731
            x_tr, x_va = pad(x_tr), pad(xv)
        dense = build()
        compile_model(dense, kind, 1e-3)
        keras.utils.set_random_seed(SEED)
        dense.fit(x_tr, y_tr, batch_size=256, epochs=e_dense, verbose=0, shuffle=True)
        res = {"dense": evaluate(dense, x_va, yv, kind), "train_rows": n,
               "pruned_layers": prunable_names(dense), "variants": {}}
        # The fair baseline: the dense model trained as many more epochs as the pruned ones are
        # fine-tuned, without pruning (so a gain is not just the extra training).
        longer = build()
        longer.set_weights(dense.get_weights())
        compile_model(longer, kind, 5e-4)
        keras.utils.set_random_seed(SEED)
        longer.fit(x_tr, y_tr, batch_size=256, epochs=e_prune, verbose=0, shuffle=True)
        res["dense_finetuned"] = evaluate(longer, x_va, yv, kind)
        layers_list = ["LSTM", "LSTM:tanh", "Dense"] if kind == "lstm" else ["Dense", "Dense:relu", "Dense:sigmoid"]
        if name == "mlp_large":
            manifest_entries.append(write_bench(dense, "mlp_large_task", x_va[:ROWS], bench, SEED, layers_list))
        for target in targets:
            for form in forms:
                stripped = prune(dense, x_tr, y_tr, kind, target, (1, 16) if form == "block" else None, e_prune, 256)
                tag = f"{name}_pruned{int(target * 100)}" + ("" if form == "block" else "_unstructured")
                res["variants"][f"{int(target * 100)}_{form}"] = {
                    **evaluate(stripped, x_va, yv, kind), "layers": layer_sparsity(stripped)}
                if form == "block" and tag in ("mlp_large_pruned80", "mlp_large_pruned90", "lstm_tiny_pruned80"):
                    manifest_entries.append(write_bench(stripped, tag, x_va[:ROWS], bench, SEED, layers_list))
                else:
                    stripped.save(scratch / f"{tag}.keras")
                print(f"{tag}: {res['variants'][f'{int(target * 100)}_{form}']['accuracy']:.4f} "
                      f"{res['variants'][f'{int(target * 100)}_{form}']['auc']:.4f}", flush=True)
        res["seconds"] = round(time.time() - t0, 1)
        print(name, json.dumps(res["dense"]), f"{res['seconds']} s", flush=True)
        results["models"][name] = res
    (scratch / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    mpath = bench / "manifest.json"
    manifest = json.loads(mpath.read_text())
    new = {e["name"] for e in manifest_entries}
    manifest["cases"] = [c for c in manifest["cases"] if c["name"] not in new] + manifest_entries
    mpath.write_text(json.dumps(manifest, indent=1) + "\n")
    print_table(results)
    return 0


def print_table(results):
    # Deltas against the dense model trained as long as the pruned ones (dense + fine-tuning epochs).
    print("| model | variant | val accuracy | val AUC | d accuracy vs dense+ft (pt) | d AUC vs dense+ft (pt) |")
    print("|---|---|---|---|---|---|")
    for name, res in results["models"].items():
        d0, d = res["dense"], res["dense_finetuned"]
        print(f"| {name} | dense | {d0['accuracy']:.4f} | {d0['auc']:.4f} | | |")
        print(f"| {name} | dense, fine-tuned as long (baseline) | {d['accuracy']:.4f} | {d['auc']:.4f} | | |")
        for v, r in res["variants"].items():
            print(f"| {name} | {v} | {r['accuracy']:.4f} | {r['auc']:.4f} | "
                  f"{100 * (r['accuracy'] - d['accuracy']):+.2f} | {100 * (r['auc'] - d['auc']):+.2f} |")


if __name__ == "__main__":
    sys.exit(main())
