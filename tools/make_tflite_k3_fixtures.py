#!/usr/bin/env python3
"""TFLite fixtures from Keras 3 models, as the current converter writes them.

Keras 3 recurrent layers convert to WHILE loops over cond/body subgraphs (not the fused LSTM op),
stateful layers to CALL_ONCE + VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE, Flatten and dilated
Conv1D to SHAPE / PACK / SPACE_TO_BATCH_ND ..., ops.matmul to BATCH_MATMUL. For each model
(Keras 3, Input(batch_size=1): a dynamic batch fails the converter for recurrent layers) and
each converter entry point (`keras`: TFLiteConverter.from_keras_model; `saved`: model.export()
then from_saved_model) and mode (float, dynamic = Optimize.DEFAULT, int8 = full integer with
int8 in/out) this writes
  <out>/<model>/<source>_<mode>.tflite
  <out>/<model>/<source>_<mode>_in_<i>.npy        N input rows per model input (axis 0)
  <out>/<model>/<source>_<mode>_expected_<j>.npy  the TFLite interpreter's outputs
and <out>/manifest.json with, per case, the file, which resolver produced the expected outputs
(BUILTIN_REF where the reference kernels have every op, else AUTO, the default builtin
resolver), the op list of every subgraph, and whether the model is stateful (then the rows are
one stream: state carries from row to row, and the expected outputs were produced that way;
otherwise variables are reset before every row). A conversion the converter refuses is recorded
with its error instead.

Usage: make_tflite_k3_fixtures.py --out DIR [--count N] [--only MODEL]
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import zlib

os.environ["TF_USE_LEGACY_KERAS"] = "0"  # Keras 3, whatever the caller's environment says
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

CALIBRATION_ROWS = 64
MODES = ("float", "dynamic", "int8")
SOURCES = ("keras", "saved")


def seed_of(*parts) -> int:
    return zlib.crc32("/".join(parts).encode()) & 0x7FFFFFFF


# ------------------------------------------------------------------------------------------------
# Models (Keras 3, batch size 1, odd sizes).
# ------------------------------------------------------------------------------------------------
def _inp(keras, shape, name):
    return keras.Input(shape=shape, batch_size=1, name=name)


def m_lstm_last(keras):
    i = _inp(keras, (7, 5), "x")
    return keras.Model(i, keras.layers.Dense(3)(keras.layers.LSTM(9)(i)), name="lstm_last")


def m_lstm_wide(keras):
    """Weights above the converter's 1024-element threshold, so Optimize.DEFAULT really writes
    int8 weights (hybrid FULLY_CONNECTED in the loop body); the small models stay float."""
    i = _inp(keras, (4, 16), "x")  # W [68, 16] and U [68, 17]: 1088 and 1156 elements
    return keras.Model(i, keras.layers.Dense(2)(keras.layers.LSTM(17)(i)), name="lstm_wide")


def m_lstm_long(keras):
    """A longer dynamic-range loop (21 steps: chunks of 8, 8 and 5 rows for the lowered loop's
    input products) that writes every h_t (return_sequences), int8 W [96, 40] and U [96, 24]."""
    i = _inp(keras, (21, 40), "x")
    x = keras.layers.LSTM(24, return_sequences=True)(i)
    return keras.Model(i, keras.layers.Dense(3)(x), name="lstm_long")


def m_lstm_seq(keras):
    i = _inp(keras, (6, 4), "x")
    x = keras.layers.LSTM(5, return_sequences=True)(i)
    return keras.Model(i, keras.layers.Dense(2)(x), name="lstm_seq")


def m_lstm_stacked(keras):
    i = _inp(keras, (5, 3), "x")
    x = keras.layers.LSTM(7, return_sequences=True)(i)
    x = keras.layers.LSTM(6)(x)
    return keras.Model(i, keras.layers.Dense(1, activation="sigmoid")(x), name="lstm_stacked")


def m_gru_after(keras):
    i = _inp(keras, (6, 4), "x")
    return keras.Model(i, keras.layers.Dense(2)(keras.layers.GRU(7, reset_after=True)(i)), name="gru_after")


def m_gru_before(keras):
    i = _inp(keras, (6, 4), "x")
    return keras.Model(i, keras.layers.Dense(2)(keras.layers.GRU(7, reset_after=False)(i)), name="gru_before")


def m_gru_wide(keras):
    # Large enough (W 96 x 24, U 96 x 32, U_h 32 x 32 with reset_after=False) that dynamic range
    # makes the loop body's FULLY_CONNECTEDs hybrid: the Keras 3 loop's column slices, both forms.
    i = _inp(keras, (10, 24), "x")
    x = keras.layers.GRU(32, return_sequences=True, reset_after=True)(i)
    x = keras.layers.GRU(32, reset_after=False)(x)
    return keras.Model(i, keras.layers.Dense(2)(x), name="gru_wide")


def m_gru_stacked(keras):
    """A sequence-returning GRU (the loop writes every h_t) under a reset_before one."""
    i = _inp(keras, (5, 3), "x")
    x = keras.layers.GRU(6, return_sequences=True, reset_after=True)(i)
    x = keras.layers.GRU(4, reset_after=False)(x)
    return keras.Model(i, keras.layers.Dense(2)(x), name="gru_stacked")


def m_bidirectional(keras):
    """Bidirectional: the backward layer's WHILE reads a REVERSE_V2 of the time-major input, and
    its sequence is reversed back before the concatenation (an LSTM) or the sum (a GRU)."""
    i = _inp(keras, (5, 3), "x")
    x = keras.layers.Bidirectional(keras.layers.LSTM(4, return_sequences=True))(i)
    x = keras.layers.Bidirectional(keras.layers.GRU(3), merge_mode="sum")(x)
    return keras.Model(i, keras.layers.Dense(2)(x), name="lstm_bidirectional")


def m_go_backwards(keras):
    """go_backwards: REVERSE_V2 before the loop; the sequence stays last tick first."""
    i = _inp(keras, (6, 3), "x")
    x = keras.layers.LSTM(5, go_backwards=True, return_sequences=True)(i)
    return keras.Model(i, keras.layers.Dense(2)(keras.layers.GRU(4, go_backwards=True)(x)), name="lstm_go_backwards")


def m_lstm_stateful(keras):
    i = _inp(keras, (3, 4), "x")
    x = keras.layers.LSTM(6, stateful=True)(i)
    return keras.Model(i, keras.layers.Dense(2)(x), name="lstm_stateful")


def m_lstm_stream(keras):
    """One time step per invoke, state in resource variables: the stream-mode form."""
    i = _inp(keras, (1, 4), "x")
    x = keras.layers.LSTM(5, stateful=True)(i)
    return keras.Model(i, keras.layers.Dense(1)(x), name="lstm_stream")


def m_tcn_flatten(keras):
    i = _inp(keras, (9, 3), "x")
    x = keras.layers.Conv1D(5, 3, padding="causal", dilation_rate=2, activation="relu")(i)
    x = keras.layers.Flatten()(x)
    return keras.Model(i, keras.layers.Dense(2)(x), name="tcn_flatten")


def m_tcn_dynamic_batch(keras):
    """No batch_size: the converter keeps the batch dynamic and writes the dilation as
    SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND and Flatten as SHAPE / STRIDED_SLICE / PACK / RESHAPE."""
    i = keras.Input(shape=(9, 3), name="x")
    x = keras.layers.Conv1D(5, 3, padding="causal", dilation_rate=2, activation="relu")(i)
    x = keras.layers.Flatten()(x)
    return keras.Model(i, keras.layers.Dense(2)(x), name="tcn_dynamic_batch")


def m_matmul_dynamic_batch(keras):
    i = keras.Input(shape=(5, 4), name="x")
    g = keras.layers.Lambda(lambda x: keras.ops.matmul(x, keras.ops.transpose(x, (0, 2, 1))))(i)
    return keras.Model(i, keras.layers.Dense(3)(g), name="matmul_dynamic_batch")


def m_conv_strided(keras):
    i = _inp(keras, (11, 3), "x")
    x = keras.layers.Conv1D(6, 3, strides=2, activation="relu")(i)
    x = keras.layers.GlobalAveragePooling1D()(x)
    return keras.Model(i, keras.layers.Dense(2)(x), name="conv_strided")


def m_matmul(keras):
    i = _inp(keras, (5, 4), "x")
    g = keras.layers.Lambda(lambda x: keras.ops.matmul(x, keras.ops.transpose(x, (0, 2, 1))))(i)
    x = keras.layers.Flatten()(g)
    return keras.Model(i, keras.layers.Dense(3)(x), name="matmul")


def m_two_inputs(keras):
    a = _inp(keras, (6,), "a")
    b = _inp(keras, (4, 3), "b")
    da = keras.layers.Dense(5, activation="tanh")(a)
    db = keras.layers.Dense(5)(keras.layers.Flatten()(b))
    s = keras.layers.Add()([da, db])
    c = keras.layers.Concatenate()([s, keras.layers.Multiply()([da, db])])
    return keras.Model([a, b], [keras.layers.Dense(2, name="head")(c), keras.layers.Dense(1, name="score")(s)],
                       name="two_inputs")


def m_attention_encoder(keras):
    # A pre-LN Transformer encoder block (lob-models facts 4.4) at toy sizes: the converter's
    # attention (TRANSPOSE, BATCH_MATMUL, SOFTMAX) and LayerNormalization (MEAN, RSQRT, ...).
    L = keras.layers
    i = _inp(keras, (8, 6), "x")
    n = L.LayerNormalization(epsilon=1e-6)(i)
    r = L.Add()([i, L.MultiHeadAttention(2, 3)(n, n)])
    n = L.Conv1D(6, 1)(L.Conv1D(10, 1, activation="relu")(L.LayerNormalization(epsilon=1e-6)(r)))
    x = L.GlobalAveragePooling1D()(L.Add()([r, n]))
    return keras.Model(i, L.Dense(3, activation="softmax")(x), name="attention_encoder")


def m_attention_causal(keras):
    # TransLOB's block (lob-models facts 3) at toy sizes: causal attention without biases (the
    # mask a SELECT_V2, whose -2.4e38 fill int8 calibration takes into the scores' range).
    L = keras.layers
    i = _inp(keras, (8, 5), "x")
    h = L.LayerNormalization(epsilon=1e-5)(L.Conv1D(5, 2, padding="causal", activation="relu")(i))
    attn = L.MultiHeadAttention(3, 2, use_bias=False)
    h = L.LayerNormalization(epsilon=1e-5)(L.Add()([h, attn(h, h, use_causal_mask=True)]))
    x = L.Flatten()(L.Dense(5)(L.Dense(10, activation="relu")(h)))
    return keras.Model(i, L.Dense(3, activation="softmax")(x), name="attention_causal")


class _Batch1:
    """The keras module with Input(batch_size=1): make_fixtures.py's builders at a static batch."""

    def __init__(self, keras):
        self._keras = keras

    def __getattr__(self, name):
        return getattr(self._keras, name)

    def Input(self, shape, **kw):  # noqa: N802 - keras' name
        return self._keras.Input(shape, batch_size=1, **kw)


def m_deeplob_seq2seq(keras):
    """DeepLOB-Seq2Seq at toy sizes: its encoder returns only its state, so the converter writes
    that LSTM as a WHILE over five variables (no output buffer)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import make_fixtures as mf
    build = mf.deeplob_multi_horizon(conv=6, inception=6, lstm=17, levels=4, horizons=3)
    return build(mf.Kit("keras3", _Batch1(keras)), 8)


def m_deeplob_attention(keras):
    """DeepLOB-Attention (make_fixtures.py's deeplob_multi_horizon: an encoder LSTM handing its
    state to a decoder LSTM called per horizon, Luong attention between) at toy sizes: every LSTM
    call a WHILE whose states come from the previous one, the attention BATCH_MATMULs. The LSTM
    matrices exceed 1024 elements, so dynamic range quantizes them."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import make_fixtures as mf
    build = mf.deeplob_multi_horizon(conv=6, inception=6, lstm=17, levels=4, horizons=3, attention=True)
    return build(mf.Kit("keras3", _Batch1(keras)), 8)


MODELS = {
    "lstm_last": m_lstm_last,
    "lstm_wide": m_lstm_wide,
    "lstm_long": m_lstm_long,
    "lstm_seq": m_lstm_seq,
    "lstm_stacked": m_lstm_stacked,
    "gru_after": m_gru_after,
    "gru_wide": m_gru_wide,
    "gru_before": m_gru_before,
    "gru_stacked": m_gru_stacked,
    "lstm_bidirectional": m_bidirectional,
    "lstm_go_backwards": m_go_backwards,
    "lstm_stateful": m_lstm_stateful,
    "lstm_stream": m_lstm_stream,
    "tcn_flatten": m_tcn_flatten,
    "tcn_dynamic_batch": m_tcn_dynamic_batch,
    "conv_strided": m_conv_strided,
    "matmul_dynamic_batch": m_matmul_dynamic_batch,
    "matmul": m_matmul,
    "two_inputs": m_two_inputs,
    "attention_encoder": m_attention_encoder,
    "attention_causal": m_attention_causal,
    "deeplob_seq2seq": m_deeplob_seq2seq,
    "deeplob_attention": m_deeplob_attention,
}
STATEFUL = {"lstm_stateful", "lstm_stream"}


def randomize(model, rng):
    """N(0,1)/sqrt(fan_in) kernels, nonzero biases (every weight of every layer), positive
    BatchNormalization variances."""
    for layer in model.layers:
        vals = []
        for w in layer.weights:
            shape = tuple(w.shape)
            if len(shape) <= 1:
                v = 0.5 * rng.standard_normal(shape)
                if "moving_variance" in w.path:  # a variance is positive (a negative one makes NaNs)
                    v = np.abs(v) + 0.5
            else:
                v = rng.standard_normal(shape) / np.sqrt(max(int(np.prod(shape[:-1])), 1))
            vals.append(v.astype(np.float32))
        if vals:
            layer.set_weights(vals)


def float_rows(rng, n, shape):
    x = rng.standard_normal((n, *shape)).astype(np.float32)
    x[7::8] *= 4.0  # reach saturation now and then
    return x


# ------------------------------------------------------------------------------------------------
# Conversion.
# ------------------------------------------------------------------------------------------------
def converter(tf, model, source, workdir):
    if source == "keras":
        return tf.lite.TFLiteConverter.from_keras_model(model)
    path = os.path.join(workdir, "export")
    # The exported signature would have a dynamic batch, which the converter refuses for
    # recurrent layers ("Lowering tensor list ops is failed"): pin it to the model's batch of 1.
    spec = [tf.TensorSpec(tuple(i.shape), i.dtype, name=i.name) for i in model.inputs]
    model.export(path, verbose=False, input_signature=[spec] if len(spec) > 1 else spec)
    return tf.lite.TFLiteConverter.from_saved_model(path)


def convert(tf, model, source, mode, calibration):
    with tempfile.TemporaryDirectory() as workdir:
        conv = converter(tf, model, source, workdir)
        if mode in ("dynamic", "int8"):
            conv.optimizations = [tf.lite.Optimize.DEFAULT]
        if mode == "int8":
            names = [i.name for i in model.inputs]

            def representative():
                # By name: the converted signature may order several inputs differently.
                for r in range(CALIBRATION_ROWS):
                    yield {n: c[r : r + 1] for n, c in zip(names, calibration)}

            conv.representative_dataset = representative
            conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
            conv.inference_input_type = tf.int8
            conv.inference_output_type = tf.int8
        return conv.convert()


# ------------------------------------------------------------------------------------------------
# Interpreter runs.
# ------------------------------------------------------------------------------------------------
def subgraph_ops(path):
    """Op names per subgraph, read from the flatbuffer with the schema TensorFlow ships."""
    from tensorflow.lite.python import schema_py_generated as schema

    with open(path, "rb") as f:
        m = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(f.read(), 0))
    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    out = []
    for g in m.subgraphs:
        ops = []
        for o in g.operators or []:
            c = m.operatorCodes[o.opcodeIndex]
            ops.append(names.get(max(c.builtinCode, c.deprecatedBuiltinCode), str(c.builtinCode)))
        out.append(ops)
    return out


def run_rows(path, inputs, resolver, stateful):
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_path=path, experimental_op_resolver_type=resolver, num_threads=1)
    it.allocate_tensors()
    ins, outs = it.get_input_details(), it.get_output_details()
    n = inputs[0].shape[0]
    results = [np.zeros((n, *o["shape"][1:]), dtype=o["dtype"]) for o in outs]
    for r in range(n):
        if not stateful:
            it.reset_all_variables()
        for d, x in zip(ins, inputs):
            it.set_tensor(d["index"], x[r : r + 1])
        it.invoke()
        for j, o in enumerate(outs):
            results[j][r] = it.get_tensor(o["index"])[0]
    return results, ins, outs


def io_of(d):
    q = d.get("quantization_parameters", {})
    return {"name": d["name"], "dtype": np.dtype(d["dtype"]).name, "shape": [int(s) for s in d["shape"]],
            "scales": [float(s) for s in q.get("scales", [])],
            "zero_points": [int(z) for z in q.get("zero_points", [])]}


def make_inputs(rng, path, n):
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_path=path)
    rows = []
    for d in it.get_input_details():
        shape = tuple(int(s) for s in d["shape"][1:])
        if np.dtype(d["dtype"]) == np.int8:
            rows.append(rng.randint(-128, 128, size=(n, *shape)).astype(np.int8))
        else:
            rows.append(float_rows(rng, n, shape))
    return rows


def expected(path, inputs, stateful):
    """BUILTIN_REF where it runs the model, else the default resolver; returns (resolver, outputs)."""
    from ai_edge_litert.interpreter import OpResolverType

    errors = []
    for name, resolver in (("BUILTIN_REF", OpResolverType.BUILTIN_REF), ("AUTO", OpResolverType.AUTO)):
        try:
            ys, ins, outs = run_rows(path, inputs, resolver, stateful)
            return name, ys, ins, outs, errors
        except Exception as e:  # noqa: BLE001 - the next resolver is tried
            errors.append(f"{name}: {type(e).__name__}: {str(e)[:200]}")
    raise RuntimeError("; ".join(errors))


def build(tf, keras, name):
    """The model with its seeded weights and calibration rows (the same in every process)."""
    keras.utils.clear_session()
    model = MODELS[name](keras)
    randomize(model, np.random.RandomState(seed_of(name, "weights")))
    cal_rng = np.random.RandomState(seed_of(name, "calibration"))
    calibration = [float_rows(cal_rng, CALIBRATION_ROWS, tuple(i.shape[1:])) for i in model.inputs]
    return model, calibration


def convert_child(name, dir_, cases):
    """Converts the cases ("source_mode", in order) of one model in this one process: TensorFlow
    is imported once per model, not once per case. Each result is renamed into place when it is
    whole; a converter exception is written next to it as <case>.error and the next case goes on."""
    import tensorflow as tf
    import keras

    for case in cases.split(","):
        source, mode = case.split("_")
        path = os.path.join(dir_, case + ".tflite")
        try:
            model, calibration = build(tf, keras, name)
            data = convert(tf, model, source, mode, calibration)
        except Exception as e:  # noqa: BLE001 - recorded for the manifest, the next case goes on
            last = (str(e).strip().splitlines() or ["?"])[-1]
            with open(path + ".error", "w") as f:
                f.write(f"converter failed: {type(e).__name__}: {last[:300]}")
            continue
        with open(path + ".part", "wb") as f:
            f.write(data)
        os.replace(path + ".part", path)


def convert_model(name, dir_, stems):
    """Converts every case of one model in as few child processes as the converter allows: it
    crashes on some Keras 3 models (int8 recurrent ones), so a child that dies is charged with the
    first case it left unfinished and a new child takes the rest. Returns {stem: None or why}."""
    why = {}
    pending = list(stems)
    while pending:
        cmd = [sys.executable, os.path.abspath(__file__), "--convert-child", name, dir_, ",".join(pending)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900 * len(pending))
            failure = None if proc.returncode == 0 else proc
        except subprocess.TimeoutExpired:
            failure = "timeout"
        while pending:  # what the child finished, in order
            stem = pending[0]
            path = os.path.join(dir_, stem + ".tflite")
            if os.path.exists(path):
                why[stem] = None
            elif os.path.exists(path + ".error"):
                with open(path + ".error") as f:
                    why[stem] = f.read()
                os.remove(path + ".error")
            else:
                break
            pending.pop(0)
        if not pending:
            break
        stem = pending.pop(0)  # the case the child was converting when it stopped
        if failure == "timeout":
            why[stem] = "converter did not finish in 900 s"
        elif failure is not None and failure.returncode < 0:
            why[stem] = f"converter crashed (signal {-failure.returncode})"
        else:
            lines = [ln for ln in (failure.stderr if failure else "").strip().splitlines() if ln.strip()] or ["?"]
            code = failure.returncode if failure else 0
            why[stem] = f"converter failed (exit {code}): {lines[-1][:300]}"
        if os.path.exists(os.path.join(dir_, stem + ".tflite.part")):  # half-written by the dead child
            os.remove(os.path.join(dir_, stem + ".tflite.part"))
    return why


def make_case(name, source, mode, dir_, count, why):
    stem = f"{source}_{mode}"
    path = os.path.join(dir_, stem + ".tflite")
    if why:
        return {"error": why}
    stateful = name in STATEFUL
    inputs = make_inputs(np.random.RandomState(seed_of(name, stem, "inputs")), path, count)
    entry = {"file": stem + ".tflite", "stateful": stateful, "count": count, "subgraph_ops": subgraph_ops(path)}
    try:
        resolver, ys, ins, outs, errors = expected(path, inputs, stateful)
    except Exception as e:  # noqa: BLE001
        entry["interpreter_error"] = str(e)[:400]
        return entry
    entry.update({"resolver": resolver, "inputs": [io_of(d) for d in ins], "outputs": [io_of(d) for d in outs],
                  "input_files": [], "expected_files": []})
    if errors:
        entry["ref_error"] = errors[0]
    for i, x in enumerate(inputs):
        entry["input_files"].append(f"{stem}_in_{i}.npy")
        np.save(os.path.join(dir_, entry["input_files"][-1]), x)
    for j, y in enumerate(ys):
        entry["expected_files"].append(f"{stem}_expected_{j}.npy")
        np.save(os.path.join(dir_, entry["expected_files"][-1]), y)
    return entry


def has_int8_tensor(path):
    from tensorflow.lite.python import schema_py_generated as schema

    with open(path, "rb") as f:
        m = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(f.read(), 0))
    return any(t.type == schema.TensorType.INT8 for g in m.subgraphs for t in g.tensors)


def drop_duplicates(dir_, cases):
    """Keeps the committed fixtures small: a dynamic-range case whose file has no int8 tensor
    (Optimize.DEFAULT leaves weights under 1024 elements float, so it computes what the float
    case does) and a case byte-identical to an earlier one keep only a note."""
    import hashlib

    seen = {}
    for key in [f"{s}_{m}" for s in SOURCES for m in MODES if f"{s}_{m}" in cases]:
        c = cases[key]
        if "file" not in c:
            continue
        path = os.path.join(dir_, c["file"])
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        if key.endswith("_dynamic") and not has_int8_tensor(path):
            note = {"float_weights": "Optimize.DEFAULT left every weight float (all under 1024 elements)"}
        elif digest in seen:
            note = {"same_file_as": seen[digest]}
        else:
            seen[digest] = key
            continue
        for name in [c["file"]] + c.get("input_files", []) + c.get("expected_files", []):
            os.remove(os.path.join(dir_, name))
        cases[key] = note


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--convert-child":
        convert_child(*sys.argv[2:5])
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--count", type=int, default=24, help="input rows per case")
    ap.add_argument("--only", choices=sorted(MODELS), action="append")
    ap.add_argument("--jobs", type=int, default=max(1, min(4, os.cpu_count() or 1)))
    args = ap.parse_args()

    import tensorflow as tf
    import keras
    import ai_edge_litert

    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    manifest = {"versions": {"tensorflow": tf.__version__, "keras": keras.__version__,
                             "ai_edge_litert": getattr(ai_edge_litert, "__version__", "?"), "numpy": np.__version__},
                "generator": "tools/make_tflite_k3_fixtures.py", "models": {}}
    manifest_path = os.path.join(out, "manifest.json")
    if args.only and os.path.exists(manifest_path):  # regenerate some models, keep the others
        with open(manifest_path) as f:
            manifest["models"] = json.load(f)["models"]
    names = args.only or list(MODELS)
    # int8 last: the converter crashes there on recurrent models, and a crash costs a new child.
    stems = [f"{source}_{mode}" for mode in MODES for source in SOURCES]

    def make_model(name):
        dir_ = os.path.join(out, name)
        os.makedirs(dir_, exist_ok=True)
        why = convert_model(name, dir_, stems)
        return {stem: make_case(name, *stem.split("_"), dir_, args.count, why[stem]) for stem in stems}

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {name: pool.submit(make_model, name) for name in names}
        done = set()
        for name, fut in futures.items():
            manifest["models"][name] = {"cases": fut.result()}
            done.add(name)
            for stem, c in manifest["models"][name]["cases"].items():
                what = c.get("error") or c.get("interpreter_error") or " | ".join(" ".join(g) for g in c["subgraph_ops"])
                print(f"{name}/{stem}: {c.get('resolver', '-')}: {what}", flush=True)
    for name in done:
        drop_duplicates(os.path.join(out, name), manifest["models"][name]["cases"])
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    sys.exit(main())
