#!/usr/bin/env python3
"""TFLite fixtures with expected outputs from the TFLite interpreter itself.

For each model (Keras 2 API via tf_keras, batch size 1, seeded random weights) this writes
  <out>/<model>/model.h5                    the Keras model (a start for the quantizer)
  <out>/<model>/calibration[_<i>].npy        the 200 representative samples (one file per input)
  <out>/<model>/{float,dynamic,int8}.tflite  plain / Optimize.DEFAULT / full int8 (int8 in and out)
  <out>/<model>/inputs_<mode>_<i>.npy        N input rows per model input, batch stacked on axis 0
  <out>/<model>/expected_ref_<mode>_<j>.npy  outputs of ai_edge_litert's BUILTIN_REF kernels
  <out>/<model>/expected_default_<mode>_<j>.npy  outputs of the default resolver (for information)
and <out>/manifest.json: versions, and per model and mode the file, inputs/outputs (name, dtype,
shape, quantization), every tensor as the interpreter reports it and the op list in order.

The reference resolver (BUILTIN_REF) is the one the C++ interpreter is matched against bit for
bit; variables (LSTM state) are reset before every invoke, which is what the Keras model computes
for each window. A conversion that fails (or crashes the converter, as int8 GRU does) is recorded
in the manifest instead of failing the run; each risky conversion runs in a child process.

Usage: make_tflite_fixtures.py [--out DIR] [--count N] [--only MODEL]
"""
import argparse
import concurrent.futures
import json
import multiprocessing
import os
import subprocess
import sys
import zlib

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tf.keras = tf_keras (Keras 2): LSTMs fuse
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

CALIBRATION_ROWS = 200
MODES = ("float", "dynamic", "int8")
SCALED_ROW_EVERY = 8  # every 8th float input row is scaled by 5 to reach saturation


# ------------------------------------------------------------------------------------------------
# Models. Each builder returns a tf_keras model with fixed batch size 1.
# ------------------------------------------------------------------------------------------------
def _inp(k, shape, name):
    return k.Input(shape=shape, batch_size=1, name=name)


def m_mlp_small(k):
    x = i = _inp(k, (10,), "x")
    for w in (128, 64, 32):
        x = k.layers.Dense(w, activation="relu")(x)
    return k.Model(i, k.layers.Dense(1, activation="sigmoid")(x), name="mlp_small")


def m_lstm_window(k):
    i = _inp(k, (32, 10), "x")
    x = k.layers.LSTM(64)(i)
    return k.Model(i, k.layers.Dense(1, activation="sigmoid")(x), name="lstm_window")


def m_tcn(k):
    x = i = _inp(k, (64, 10), "x")
    for d in (1, 2, 4, 8):
        x = k.layers.Conv1D(32, 3, padding="causal", dilation_rate=d, activation="relu")(x)
    x = k.layers.GlobalAveragePooling1D()(x)
    return k.Model(i, k.layers.Dense(1)(x), name="tcn")


def m_lstm_tiny(k):
    i = _inp(k, (1, 128), "x")
    x = k.layers.LSTM(128, return_sequences=True)(i)
    x = k.layers.LSTM(128)(x)
    return k.Model(i, k.layers.Dense(32)(x), name="lstm_tiny")


def m_conv_pool(k):
    i = _inp(k, (16, 4), "x")
    x = k.layers.Conv1D(8, 3, activation="relu")(i)
    x = k.layers.MaxPooling1D(2)(x)
    x = k.layers.AveragePooling1D(2)(x)
    x = k.layers.Flatten()(x)
    return k.Model(i, k.layers.Dense(3, activation="softmax")(x), name="conv_pool")


def m_lnorm(k):
    i = _inp(k, (8,), "x")
    x = k.layers.Dense(16)(i)
    x = k.layers.LayerNormalization()(x)
    return k.Model(i, k.layers.Dense(4, activation="tanh")(x), name="lnorm")


def m_merge(k):
    a = _inp(k, (6,), "a")
    b = _inp(k, (6,), "b")
    da = k.layers.Dense(8)(a)
    db = k.layers.Dense(8)(b)
    s = k.layers.Add()([da, db])
    p = k.layers.Multiply()([da, db])
    c = k.layers.Concatenate()([s, p])
    out0 = k.layers.Dense(2, name="head")(c)
    out1 = k.layers.Dense(1, activation="sigmoid", name="score")(s)
    return k.Model([a, b], [out0, out1], name="merge")


def m_gru(k):
    i = _inp(k, (8, 4), "x")
    x = k.layers.GRU(16)(i)
    return k.Model(i, k.layers.Dense(1)(x), name="gru")


def m_gru_wide(k):
    # Large enough (W 96 x 40, U 96 x 32) that Optimize.DEFAULT makes the loop body's
    # FULLY_CONNECTEDs hybrid: the reference for the int8-dynamic SEQUENCE_GRU.
    i = _inp(k, (16, 40), "x")
    x = k.layers.GRU(32)(i)
    return k.Model(i, k.layers.Dense(1)(x), name="gru_wide")


def m_gru_wide_before(k):
    # reset_after=False: the candidate's product FC(r * h, U_h) is a third hybrid FULLY_CONNECTED.
    i = _inp(k, (16, 40), "x")
    x = k.layers.GRU(32, reset_after=False)(i)
    return k.Model(i, k.layers.Dense(1)(x), name="gru_wide_before")


MODELS = {
    "mlp_small": m_mlp_small,
    "lstm_window": m_lstm_window,
    "tcn": m_tcn,
    "lstm_tiny": m_lstm_tiny,
    "conv_pool": m_conv_pool,
    "lnorm": m_lnorm,
    "merge": m_merge,
    "gru": m_gru,  # converts to a WHILE loop (no fused GRU op): lifted by tflite/rewrite/gru_loop.cpp
    "gru_wide": m_gru_wide,
    "gru_wide_before": m_gru_wide_before,
}
# Conversions known to fail or crash the converter run only in a child process.
ISOLATED = {("gru", "dynamic"), ("gru", "int8"), ("gru_wide", "dynamic"), ("gru_wide", "int8"),
            ("gru_wide_before", "dynamic"), ("gru_wide_before", "int8")}


def seed_of(*parts) -> int:
    return zlib.crc32("/".join(parts).encode()) & 0x7FFFFFFF


def randomize(model, rng):
    """Glorot-like kernels (N(0,1)/sqrt(fan_in)), nonzero biases, LayerNorm gamma near 1."""
    for layer in model.layers:
        vals = []
        for w in layer.weights:
            short = w.name.split("/")[-1].split(":")[0]
            shape = tuple(w.shape)
            if short == "gamma":
                v = rng.uniform(0.5, 1.5, shape)
            elif short in ("bias", "beta"):
                v = 0.5 * rng.standard_normal(shape)
            else:
                fan_in = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
                v = rng.standard_normal(shape) / np.sqrt(max(fan_in, 1))
            vals.append(v.astype(np.float32))
        if vals:
            layer.set_weights(vals)


def float_rows(rng, n, shape):
    x = rng.standard_normal((n, *shape)).astype(np.float32)
    x[SCALED_ROW_EVERY - 1 :: SCALED_ROW_EVERY] *= 5.0
    return x


# ------------------------------------------------------------------------------------------------
# Conversion.
# ------------------------------------------------------------------------------------------------
def convert(tf, model, mode, calibration):
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    if mode in ("dynamic", "int8"):
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
    if mode == "int8":
        def representative():
            for r in range(CALIBRATION_ROWS):
                yield [c[r : r + 1] for c in calibration]

        conv.representative_dataset = representative
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    return conv.convert()


def convert_isolated(dir_, mode):
    """Converts model.h5 in a child process; returns (bytes or None, error text)."""
    out = os.path.join(dir_, f".{mode}.tflite.tmp")
    cmd = [sys.executable, os.path.abspath(__file__), "--convert-child", dir_, mode, out]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode == 0 and os.path.exists(out):
        with open(out, "rb") as f:
            data = f.read()
        os.remove(out)
        return data, None
    if os.path.exists(out):
        os.remove(out)
    if proc.returncode < 0:
        why = f"converter crashed (signal {-proc.returncode})"
    else:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        why = f"converter failed (exit {proc.returncode}): {tail[:300]}"
    return None, why


def convert_child(dir_, mode, out):
    import tensorflow as tf

    model = tf.keras.models.load_model(os.path.join(dir_, "model.h5"), compile=False)
    cal = load_calibration(dir_, len(model.inputs))
    with open(out, "wb") as f:
        f.write(convert(tf, model, mode, cal))


def calibration_files(n_inputs):
    return ["calibration.npy"] if n_inputs == 1 else [f"calibration_{i}.npy" for i in range(n_inputs)]


def load_calibration(dir_, n_inputs):
    return [np.load(os.path.join(dir_, f)) for f in calibration_files(n_inputs)]


# ------------------------------------------------------------------------------------------------
# Interpreter runs and the manifest.
# ------------------------------------------------------------------------------------------------
def quant_of(d):
    q = d.get("quantization_parameters", {})
    return {
        "scales": [float(s) for s in q.get("scales", [])],
        "zero_points": [int(z) for z in q.get("zero_points", [])],
        "quantized_dimension": int(q.get("quantized_dimension", 0)),
    }


def io_of(d):
    return {"name": d["name"], "index": int(d["index"]), "dtype": np.dtype(d["dtype"]).name,
            "shape": [int(s) for s in d["shape"]], **quant_of(d)}


def describe(path):
    """What the TFLite interpreter itself reads from the file (before allocate_tensors, so only
    the file's own tensors are listed)."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    it = Interpreter(model_path=path, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    tensors = []
    for d in it.get_tensor_details():
        tensors.append({"index": int(d["index"]), "name": d["name"], "dtype": np.dtype(d["dtype"]).name,
                        "shape": [int(s) for s in d["shape"]], **quant_of(d)})
    ops = [{"op": o["op_name"], "inputs": [int(t) for t in o["inputs"]],
            "outputs": [int(t) for t in o["outputs"]]} for o in it._get_ops_details()]
    return {
        "inputs": [io_of(d) for d in it.get_input_details()],
        "outputs": [io_of(d) for d in it.get_output_details()],
        "tensors": tensors,
        "ops": ops,
    }


def run_rows(path, inputs, resolver):
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_path=path, experimental_op_resolver_type=resolver, num_threads=1)
    it.allocate_tensors()
    ins, outs = it.get_input_details(), it.get_output_details()
    n = inputs[0].shape[0]
    results = [np.zeros((n, *o["shape"][1:]), dtype=o["dtype"]) for o in outs]
    for r in range(n):
        it.reset_all_variables()  # zero LSTM state: one window per invoke, as Keras computes
        for d, x in zip(ins, inputs):
            it.set_tensor(d["index"], x[r : r + 1])
        it.invoke()
        for j, o in enumerate(outs):
            results[j][r] = it.get_tensor(o["index"])[0]
    return results


def run_and_save(dir_, mode, kind, input_files):
    """One interpreter pass over the saved inputs (in a worker process); returns the output file
    names, or raises."""
    from ai_edge_litert.interpreter import OpResolverType

    resolver = OpResolverType.BUILTIN_REF if kind == "ref" else OpResolverType.AUTO
    inputs = [np.load(os.path.join(dir_, f)) for f in input_files]
    names = []
    for j, y in enumerate(run_rows(os.path.join(dir_, f"{mode}.tflite"), inputs, resolver)):
        names.append(f"expected_{kind}_{mode}_{j}.npy")
        np.save(os.path.join(dir_, names[-1]), y)
    return names


def collect(dir_, m, futures):
    """Fills a mode's manifest entry from its finished interpreter runs."""
    for kind, fut in futures:
        try:
            m[f"expected_{kind}_files"] = fut.result()
        except Exception as e:  # noqa: BLE001 - recorded, not fatal
            m[f"{kind}_error"] = f"{type(e).__name__}: {str(e)[:300]}"
            print(f"  {dir_}/{m['file']}: {kind} interpreter failed: {m[f'{kind}_error']}")
    if m["expected_ref_files"] and m["expected_default_files"]:
        m["ref_vs_default_max_abs_diff"] = [
            float(np.max(np.abs(np.load(os.path.join(dir_, a)).astype(np.float64) -
                                np.load(os.path.join(dir_, b)).astype(np.float64))))
            for a, b in zip(m["expected_ref_files"], m["expected_default_files"])]


def make_inputs(rng, desc, n):
    rows = []
    for d in desc["inputs"]:
        shape = d["shape"][1:]
        if d["dtype"] == "int8":
            rows.append(rng.randint(-128, 128, size=(n, *shape)).astype(np.int8))
        else:
            rows.append(float_rows(rng, n, shape))
    return rows


def build_model(tf, name, dir_):
    model = MODELS[name](tf.keras)
    randomize(model, np.random.RandomState(seed_of(name, "weights")))
    cal_rng = np.random.RandomState(seed_of(name, "calibration"))
    calibration = [float_rows(cal_rng, CALIBRATION_ROWS, tuple(i.shape[1:])) for i in model.inputs]
    model.save(os.path.join(dir_, "model.h5"), save_format="h5")
    for f, c in zip(calibration_files(len(calibration)), calibration):
        np.save(os.path.join(dir_, f), c)
    return model, calibration


def make_model(tf, name, out, count, pool, pending):
    dir_ = os.path.join(out, name)
    os.makedirs(dir_, exist_ok=True)
    model, calibration = build_model(tf, name, dir_)
    entry = {"calibration": calibration_files(len(calibration)), "modes": {}}
    for mode in MODES:
        if (name, mode) in ISOLATED:
            data, why = convert_isolated(dir_, mode)
        else:
            try:
                data, why = convert(tf, model, mode, calibration), None
            except Exception as e:  # noqa: BLE001 - recorded, not fatal
                data, why = None, f"converter failed: {type(e).__name__}: {str(e)[:300]}"
        if data is None:
            entry["modes"][mode] = {"error": why}
            print(f"  {name}/{mode}: {why}")
            continue
        path = os.path.join(dir_, f"{mode}.tflite")
        with open(path, "wb") as f:
            f.write(data)
        desc = describe(path)
        inputs = make_inputs(np.random.RandomState(seed_of(name, mode, "inputs")), desc, count)
        m = {"file": f"{mode}.tflite", **desc, "count": count,
             "input_files": [], "expected_ref_files": [], "expected_default_files": []}
        for i, x in enumerate(inputs):
            np.save(os.path.join(dir_, f"inputs_{mode}_{i}.npy"), x)
            m["input_files"].append(f"inputs_{mode}_{i}.npy")
        # The interpreter runs go to the worker pool; conversion of the next mode goes on.
        futures = [(kind, pool.submit(run_and_save, dir_, mode, kind, m["input_files"])) for kind in ("ref", "default")]
        pending.append((dir_, m, futures))
        entry["modes"][mode] = m
        print(f"  {name}/{mode}: {len(desc['ops'])} ops: {' '.join(o['op'] for o in desc['ops'])}")
    return entry


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--convert-child":
        convert_child(*sys.argv[2:5])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "tflite"))
    ap.add_argument("--count", type=int, default=200, help="input rows per model and mode")
    ap.add_argument("--only", choices=sorted(MODELS), help="regenerate one model, keep the others' entries")
    args = ap.parse_args()

    import tensorflow as tf
    import tf_keras
    import ai_edge_litert

    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    manifest_path = os.path.join(out, "manifest.json")
    manifest = {"models": {}}
    if args.only and os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
    manifest["versions"] = {"tensorflow": tf.__version__, "tf_keras": tf_keras.__version__,
                            "ai_edge_litert": getattr(ai_edge_litert, "__version__", "?"),
                            "numpy": np.__version__}
    manifest["generator"] = "tools/make_tflite_fixtures.py"
    manifest["reference"] = "ai_edge_litert Interpreter, OpResolverType.BUILTIN_REF, reset_all_variables() before each invoke"
    # Interpreter passes (most of the time at --count 10000) run in worker processes beside the
    # conversions; spawn, so the workers do not inherit TensorFlow's threads.
    pending = []
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, os.cpu_count() or 1), mp_context=ctx) as pool:
        for name in [args.only] if args.only else MODELS:
            print(f"{name}:")
            tf.keras.backend.clear_session()
            manifest["models"][name] = make_model(tf, name, out, args.count, pool, pending)
        for dir_, m, futures in pending:
            collect(dir_, m, futures)
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
