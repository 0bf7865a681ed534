#!/usr/bin/env python3
"""Fixtures for pruned models: tfmot PruneLowMagnitude saves and sparse TFLite conversions.

A small tf_keras MLP (32 -> 32 -> 16 -> 4) and an LSTM (8 steps x 4 -> 8 units -> 2) are pruned
with tfmot to 80% (PolynomialDecay, a short fit on random data) and written to <out>/ as
  mlp_unstripped.h5 / .keras / _savedmodel/  the wrappers still in (strip_pruning skipped)
  mlp_stripped.h5 / .keras                   after strip_pruning (zeros stored densely)
  lstm_unstripped.keras, lstm_stripped.h5    (tf_keras cannot write an unstripped LSTM .h5: the
                                             wrapper's two masks share one HDF5 name)
  mlp_sparse_float.tflite                    EXPERIMENTAL_SPARSITY, random zeros (CSR + DENSIFY)
  mlp_sparse_int8.tflite                     the same with full-integer quantization
  mlp_block4_float.tflite                    tfmot block_size (4, 1): 1x4 blocks of the filter
  mlp_block16_int8.tflite                    block_size (16, 1) on the hidden layers, int8
  inputs.npy (and lstm_inputs.npy, inputs_int8.npy), expected_<case>.npy, manifest.json.

Before the unstripped files are saved, every pruned weight gets a small nonzero value again, as a
checkpoint written between an optimizer step and the mask update would hold: a loader that does
not apply the stored masks then gives the wrong outputs. The Keras expected outputs come from the
unstripped model itself (its call applies the masks) and are checked against the stripped one.
TFLite expected outputs come from ai_edge_litert's reference kernels (BUILTIN_REF).

Usage: make_pruned_fixtures.py [--out DIR]
"""
import argparse
import json
import os
import shutil

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tfmot runs on tf_keras (Keras 2) only
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

TARGET = 0.8
ROWS = 16


def tfmods():
    import tensorflow as tf
    import tf_keras as k
    import tensorflow_model_optimization as tfmot
    return tf, k, tfmot.sparsity.keras


def mlp(k):
    i = k.Input(shape=(32,), batch_size=1, name="x")
    x = k.layers.Dense(32, activation="relu", name="d1")(i)
    x = k.layers.Dense(16, activation="relu", name="d2")(x)
    return k.Model(i, k.layers.Dense(4, name="out")(x), name="mlp")


def lstm(k):
    i = k.Input(shape=(8, 4), batch_size=1, name="x")
    x = k.layers.LSTM(8, name="lstm")(i)
    return k.Model(i, k.layers.Dense(2, name="out")(x), name="lstm_model")


def prune(model, x, y, block=None, block_layers=()):
    """Prunes `model` to TARGET with a short fit; `block` applies to the layers named in block_layers."""
    tf, k, sp = tfmods()
    schedule = sp.PolynomialDecay(0.0, TARGET, begin_step=0, end_step=20, frequency=2)

    def wrap(layer):
        if isinstance(layer, k.layers.InputLayer):
            return layer
        size = block if layer.name in block_layers else (1, 1)
        return sp.prune_low_magnitude(layer, pruning_schedule=schedule, block_size=size)

    pm = k.models.clone_model(model, clone_function=wrap)
    pm.compile("adam", "mse")
    pm.fit(x, y, batch_size=8, epochs=4, verbose=0, callbacks=[sp.UpdatePruningStep()])
    return pm


def unmask_weights(pm, rng):
    """Gives pruned weights nonzero values again (the stored masks still say which are pruned)."""
    for layer in pm.layers:
        for weight, mask, _ in getattr(layer, "pruning_vars", []):
            m = mask.numpy()
            noise = rng.uniform(0.05, 0.2, size=m.shape).astype(np.float32)
            weight.assign(weight.numpy() + (1.0 - m) * noise)


def predict(model, x):
    return np.concatenate([model(x[i:i + 1], training=False).numpy() for i in range(len(x))])


def zero_fraction(model):
    zeros = total = 0
    for layer in model.layers:
        for w in layer.get_weights()[:1]:
            if w.ndim == 2:
                zeros += int((w == 0).sum())
                total += w.size
    return zeros / max(total, 1)


def sparse_tensors(content):
    from tensorflow.lite.python import schema_py_generated as s
    m = s.ModelT.InitFromObj(s.Model.GetRootAsModel(content, 0))
    out = []
    for t in m.subgraphs[0].tensors:
        if t.sparsity is None:
            continue
        sp = t.sparsity
        out.append({"name": t.name.decode(), "shape": [int(d) for d in t.shape], "type": int(t.type),
                    "traversal_order": [int(v) for v in sp.traversalOrder],
                    "block_map": [int(v) for v in sp.blockMap] if sp.blockMap is not None else [],
                    "dims": [{"format": int(d.format), "dense_size": int(d.denseSize),
                              "index_type": int(d.arrayIndicesType)} for d in sp.dimMetadata]})
    return out


def convert(tf, model, rng, int8):
    c = tf.lite.TFLiteConverter.from_keras_model(model)
    c.optimizations = [tf.lite.Optimize.EXPERIMENTAL_SPARSITY] + ([tf.lite.Optimize.DEFAULT] if int8 else [])
    if int8:
        calib = rng.normal(size=(100, 1, 32)).astype(np.float32)
        c.representative_dataset = lambda: ([r] for r in calib)
        c.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        c.inference_input_type = tf.int8
        c.inference_output_type = tf.int8
    return c.convert()


def run_tflite(content, x):
    from ai_edge_litert import interpreter as lite
    it = lite.Interpreter(model_content=content,
                          experimental_op_resolver_type=lite.OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    inp, outp = it.get_input_details()[0], it.get_output_details()[0]
    rows = []
    for r in x:
        it.set_tensor(inp["index"], r[None])
        it.invoke()
        rows.append(it.get_tensor(outp["index"])[0].copy())
    ops = [o["op_name"] for o in it._get_ops_details()]
    return np.stack(rows), ops, inp, outp


def quantize_input(x, inp):
    scale, zp = inp["quantization"]
    return np.clip(np.round(x / scale) + zp, -128, 127).astype(np.int8)


def keras_cases(out, rng, manifest):
    tf, k, sp = tfmods()
    x = rng.normal(size=(ROWS, 32)).astype(np.float32)
    np.save(os.path.join(out, "inputs.npy"), x)
    tf.random.set_seed(1)
    pm = prune(mlp(k), rng.normal(size=(64, 32)).astype(np.float32), rng.normal(size=(64, 4)).astype(np.float32))
    unmask_weights(pm, rng)
    pm.save(os.path.join(out, "mlp_unstripped.h5"), include_optimizer=False)
    pm.save(os.path.join(out, "mlp_unstripped.keras"))
    pm.save(os.path.join(out, "mlp_unstripped_savedmodel"), save_format="tf", include_optimizer=False)
    expected = predict(pm, x)  # the wrapper's call masks the weights again
    stripped = sp.strip_pruning(pm)
    assert np.allclose(predict(stripped, x), expected, atol=1e-6)
    stripped.save(os.path.join(out, "mlp_stripped.h5"), include_optimizer=False)
    stripped.save(os.path.join(out, "mlp_stripped.keras"))
    np.save(os.path.join(out, "expected_mlp.npy"), expected)
    zf = zero_fraction(stripped)
    for name, fmt, unstripped in [("mlp_unstripped.h5", "keras2-h5", True), ("mlp_unstripped.keras", "keras3", True),
                                  ("mlp_unstripped_savedmodel", "savedmodel", True),
                                  ("mlp_stripped.h5", "keras2-h5", False), ("mlp_stripped.keras", "keras3", False)]:
        manifest.append({"name": name.replace(".", "_"), "file": name, "format": fmt, "unstripped": unstripped,
                         "inputs": ["inputs.npy"], "outputs": ["expected_mlp.npy"], "rtol": 1e-5, "atol": 1e-5,
                         "zero_fraction": zf})
    for f in ("mlp_unstripped.keras", "mlp_stripped.keras"):
        shrink_keras(os.path.join(out, f))
    shutil.rmtree(os.path.join(out, "mlp_unstripped_savedmodel", "assets"), ignore_errors=True)

    xl = rng.normal(size=(ROWS, 8, 4)).astype(np.float32)
    np.save(os.path.join(out, "lstm_inputs.npy"), xl)
    tf.random.set_seed(2)
    pl = prune(lstm(k), rng.normal(size=(32, 8, 4)).astype(np.float32), rng.normal(size=(32, 2)).astype(np.float32))
    unmask_weights(pl, rng)
    pl.save(os.path.join(out, "lstm_unstripped.keras"))
    shrink_keras(os.path.join(out, "lstm_unstripped.keras"))
    expected = predict(pl, xl)
    stripped = sp.strip_pruning(pl)
    assert np.allclose(predict(stripped, xl), expected, atol=1e-6)
    stripped.save(os.path.join(out, "lstm_stripped.h5"), include_optimizer=False)
    np.save(os.path.join(out, "expected_lstm.npy"), expected)
    for name, fmt, unstripped in [("lstm_unstripped.keras", "keras3", True), ("lstm_stripped.h5", "keras2-h5", False)]:
        manifest.append({"name": name.replace(".", "_"), "file": name, "format": fmt, "unstripped": unstripped,
                         "inputs": ["lstm_inputs.npy"], "outputs": ["expected_lstm.npy"], "rtol": 1e-5, "atol": 1e-5,
                         "zero_fraction": zero_fraction(stripped)})
    return x


def shrink_keras(path):
    """Drops the optimizer and metric variables from a .keras archive (fixture size only)."""
    import h5py
    import zipfile
    with zipfile.ZipFile(path) as z:
        entries = {n: z.read(n) for n in z.namelist()}
    tmp = path + ".weights.h5"
    with open(tmp, "wb") as f:
        f.write(entries["model.weights.h5"])
    with h5py.File(tmp, "r") as src, h5py.File(tmp + ".small", "w") as dst:
        for key in src:
            if key in ("layers", "vars", "_layer_checkpoint_dependencies"):
                src.copy(key, dst)
    with open(tmp + ".small", "rb") as f:
        entries["model.weights.h5"] = f.read()
    os.remove(tmp)
    os.remove(tmp + ".small")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for n, b in entries.items():
            z.writestr(n, b)


def tflite_cases(out, rng, x, manifest):
    tf, k, sp = tfmods()
    data = (rng.normal(size=(64, 32)).astype(np.float32), rng.normal(size=(64, 4)).astype(np.float32))
    variants = [("mlp_sparse_float", None, (), False), ("mlp_sparse_int8", None, (), True),
                ("mlp_block4_float", (4, 1), ("d1", "d2", "out"), False),
                # tfmot's block expansion fails on the 16-row output kernel; the hidden layers carry it.
                ("mlp_block16_int8", (16, 1), ("d1", "d2"), True)]
    for i, (name, block, block_layers, int8) in enumerate(variants):
        tf.random.set_seed(10 + i)
        stripped = sp.strip_pruning(prune(mlp(k), *data, block=block, block_layers=block_layers))
        content = convert(tf, stripped, np.random.default_rng(5), int8)
        with open(os.path.join(out, name + ".tflite"), "wb") as f:
            f.write(content)
        feed = x
        inputs = "inputs.npy"
        if int8:
            from ai_edge_litert import interpreter as lite
            it = lite.Interpreter(model_content=content)
            feed = quantize_input(x, it.get_input_details()[0])
            inputs = name + "_inputs.npy"
            np.save(os.path.join(out, inputs), feed)
        y, ops, _, _ = run_tflite(content, feed)
        np.save(os.path.join(out, "expected_" + name + ".npy"), y)
        manifest.append({"name": name, "file": name + ".tflite", "format": "tflite", "int8": int8,
                         "inputs": [inputs], "outputs": ["expected_" + name + ".npy"],
                         "rtol": 0 if int8 else 1e-5, "atol": 0 if int8 else 1e-5,
                         "zero_fraction": zero_fraction(stripped), "ops": ops, "sparse_tensors": sparse_tensors(content)})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="tests/fixtures/pruned")
    args = ap.parse_args()
    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    rng = np.random.default_rng(0)
    manifest = []
    x = keras_cases(args.out, rng, manifest)
    tflite_cases(args.out, rng, x, manifest)
    import tensorflow as tf
    import tensorflow_model_optimization as tfmot
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump({"generator": "tools/make_pruned_fixtures.py", "target_sparsity": TARGET,
                   "versions": {"tensorflow": tf.__version__, "tfmot": tfmot.__version__}, "cases": manifest},
                  f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
