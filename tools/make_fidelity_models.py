#!/usr/bin/env python3
"""Random small TFLite models and TFLite's own outputs for them: the differential fidelity set.

For each precision (int8, hybrid = dynamic-range, float) it draws seeded random models from
tools/fidelity/recipes.py (FULLY_CONNECTED dense, 1x16 block-sparse and DENSIFY'd, CONV_2D,
DEPTHWISE_CONV_2D, ADD, MUL, LOGISTIC, TANH, SOFTMAX, BATCH_MATMUL; random shapes, weights,
biases, zero points, per-tensor and per-channel scales, power-of-two scales that put products on
rounding ties, weights at -128), runs each row of random inputs through ai-edge-litert's
interpreter with the reference kernels (OpResolverType.BUILTIN_REF), and writes

  OUT/manifest.json            versions, counts, and one entry per case
  OUT/<name>.tflite            the model
  OUT/<name>.in<i>.npy         input i, rows first
  OUT/<name>.ref<o>.npy        output o from BUILTIN_REF (the expected values)
  OUT/<name>.opt<o>.npy        output o from BUILTIN_WITHOUT_DEFAULT_DELEGATES (TFLite's optimized kernels): how far TFLite's
                               own two kernel sets are apart, for the float and hybrid tolerances

A model TFLite itself refuses is dropped and counted in the manifest. tests/quant_fidelity_test
runs every case on every kernel set this CPU has. Case i of a precision is seeded by (seed,
precision, i) alone, so `--only NAME` regenerates one case exactly.

  .venv/bin/python tools/make_fidelity_models.py --out build/fidelity --int8 300 --hybrid 100 --float 100
"""
import argparse
import json
import os
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ai_edge_litert import interpreter as litert  # noqa: E402

from fidelity import recipes  # noqa: E402

KINDS = ("int8", "hybrid", "float")


def case_rng(seed, kind, index):
    return np.random.default_rng([seed, zlib.crc32(kind.encode()), index])


def draw(seed, kind, index):
    rng = case_rng(seed, kind, index)
    fams = recipes.families(kind)
    weights = np.array([f[1] for f in fams], float)
    family, _, recipe = fams[int(rng.choice(len(fams), p=weights / weights.sum()))]
    writer, ops, inputs = recipe(rng)
    return family, writer.finish(), ops, inputs


def run_tflite(model, inputs, resolver):
    it = litert.Interpreter(model_content=model, experimental_op_resolver_type=resolver, num_threads=1)
    it.allocate_tensors()
    ins, outs = it.get_input_details(), it.get_output_details()
    rows = inputs[0].shape[0]
    results = [np.zeros((rows,) + tuple(o["shape"]), o["dtype"]) for o in outs]
    for r in range(rows):
        it.reset_all_variables()  # recurrent state starts at zero for every row (no-op elsewhere)
        for d, x in zip(ins, inputs):
            it.set_tensor(d["index"], x[r])
        it.invoke()
        for o, res in zip(outs, results):
            res[r] = it.get_tensor(o["index"])
    return results


def generate(out, seed, counts, only=None):
    os.makedirs(out, exist_ok=True)
    cases, refused = [], {}
    for kind in KINDS:
        made, index = 0, 0
        while made < counts[kind]:
            name = f"{kind}_{index:05d}"
            index += 1
            if only and name != only:
                if index > 100000:
                    break
                continue
            family, model, ops, inputs = draw(seed, kind, index - 1)
            try:
                ref = run_tflite(model, inputs, litert.OpResolverType.BUILTIN_REF)
                opt = run_tflite(model, inputs, litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
            except (RuntimeError, ValueError) as e:
                key = f"{kind}/{family}: {str(e).splitlines()[0][:120]}"
                refused[key] = refused.get(key, 0) + 1
                continue
            made += 1
            with open(os.path.join(out, name + ".tflite"), "wb") as f:
                f.write(model)
            entry = {"name": name, "kind": kind, "family": family, "ops": ops, "file": name + ".tflite",
                     "inputs": [], "outputs": [], "outputs_optimized": []}
            for i, x in enumerate(inputs):
                np.save(os.path.join(out, f"{name}.in{i}.npy"), x)
                entry["inputs"].append(f"{name}.in{i}.npy")
            for o, (r, p) in enumerate(zip(ref, opt)):
                np.save(os.path.join(out, f"{name}.ref{o}.npy"), r)
                np.save(os.path.join(out, f"{name}.opt{o}.npy"), p)
                entry["outputs"].append(f"{name}.ref{o}.npy")
                entry["outputs_optimized"].append(f"{name}.opt{o}.npy")
            cases.append(entry)
    import ai_edge_litert
    manifest = {
        "generator": "tools/make_fidelity_models.py",
        "seed": seed,
        "versions": {"ai_edge_litert": getattr(ai_edge_litert, "__version__", "unknown"), "numpy": np.__version__},
        "counts": {k: sum(c["kind"] == k for c in cases) for k in KINDS},
        "refused_by_tflite": refused,
        "cases": cases,
    }
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=20261204)
    ap.add_argument("--int8", type=int, default=300)
    ap.add_argument("--hybrid", type=int, default=100)
    ap.add_argument("--float", type=int, default=100)
    ap.add_argument("--only", help="regenerate one case by name (int8_00042)")
    a = ap.parse_args()
    m = generate(a.out, a.seed, {"int8": a.int8, "hybrid": a.hybrid, "float": a.float}, a.only)
    print(f"make_fidelity_models: {m['counts']} cases in {a.out}; TFLite refused {sum(m['refused_by_tflite'].values())}")
    for k, v in sorted(m["refused_by_tflite"].items()):
        print(f"  refused x{v}: {k}")


if __name__ == "__main__":
    main()
