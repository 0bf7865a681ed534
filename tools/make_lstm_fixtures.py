#!/usr/bin/env python3
"""Expected outputs of TFLite's UNIDIRECTIONAL_SEQUENCE_LSTM for tests/quant_lstm_test.cpp.

Builds small tf_keras models with one LSTM layer, converts each with the TFLiteConverter in
float, dynamic-range ("hybrid": int8 weights, float activations) and full-int8 (8x8_16 LSTM)
modes, runs them with the ai_edge_litert interpreter using the reference kernels
(OpResolverType.BUILTIN_REF) and saves, per variant, in tests/fixtures/quant_lstm/<name>/:

  model.tflite              the converted model
  manifest.json             the LSTM op: options, intermediates and all operand tensors
                            (index, name, dtype, shape, quantization, is_variable, data file)
  t<index>.bin              raw little-endian data of each constant operand tensor
  input.bin / lstm_out.bin  per sample: the LSTM op's input and output tensors, as the
                            interpreter held them (experimental_preserve_all_tensors=True)
  model_in.bin / model_out.bin  the model's own input and output per sample

Variable tensors are reset (reset_all_variables) before every invoke, so each sample starts from
zero state, which is what the Keras model computes for a window.

Run from the repository root:  .venv/bin/python tools/make_lstm_fixtures.py
"""
import json
import os
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402
from ai_edge_litert import interpreter as litert  # noqa: E402
from tensorflow.lite.python import schema_py_generated as schema_fb  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "quant_lstm")
SAMPLES = 4
LSTM_CODE = 44  # BuiltinOperator.UNIDIRECTIONAL_SEQUENCE_LSTM

DTYPES = {np.float32: "float32", np.int8: "int8", np.int16: "int16", np.int32: "int32"}


def build_model(seed, time_steps, features, units, return_sequences):
    keras.utils.set_random_seed(seed)
    inp = keras.Input(shape=(time_steps, features), batch_size=1)
    out = keras.layers.LSTM(units, return_sequences=return_sequences)(inp)
    model = keras.Model(inp, out)
    # Non-trivial biases (Keras starts them at 0 / 1 for the forget gate).
    weights = model.get_weights()
    rng = np.random.default_rng(seed)
    weights[2] = weights[2] + rng.normal(0.0, 0.3, weights[2].shape).astype(np.float32)
    model.set_weights(weights)
    return model


def round_to_bf16(a):
    """Rounds float32 values to the nearest bfloat16 (ties to even), kept as float32."""
    bits = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


def bf16_weight_model(model):
    """The same model with its kernel and recurrent kernel rounded to bfloat16: a float model
    whose TFLite output is what fp32 math on bf16 weights (widened exactly) must give."""
    weights = model.get_weights()
    model.set_weights([round_to_bf16(weights[0]), round_to_bf16(weights[1]), weights[2]])
    return model


def sample_inputs(seed, n, time_steps, features):
    rng = np.random.default_rng(seed + 1000)
    return rng.normal(0.0, 1.0, (n, 1, time_steps, features)).astype(np.float32)


def convert(model, mode, rep_data):
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    if mode == "dynamic":
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
    elif mode == "int8":
        conv.optimizations = [tf.lite.Optimize.DEFAULT]

        def rep():
            for x in rep_data:
                yield [x]

        conv.representative_dataset = rep
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    return conv.convert()


def lstm_op_of(flat):
    model = schema_fb.Model.GetRootAsModel(flat, 0)
    graph = model.Subgraphs(0)
    for i in range(graph.OperatorsLength()):
        op = graph.Operators(i)
        code = model.OperatorCodes(op.OpcodeIndex())
        if max(code.DeprecatedBuiltinCode(), code.BuiltinCode()) == LSTM_CODE:
            opts = schema_fb.UnidirectionalSequenceLSTMOptions()
            table = op.BuiltinOptions()
            opts.Init(table.Bytes, table.Pos)
            return {
                "op_index": i,
                "inputs": [int(v) for v in op.InputsAsNumpy()],
                "outputs": [int(v) for v in op.OutputsAsNumpy()],
                "intermediates": [int(v) for v in op.IntermediatesAsNumpy()] if op.IntermediatesLength() else [],
                "options": {
                    "fused_activation_function": int(opts.FusedActivationFunction()),
                    "cell_clip": float(opts.CellClip()),
                    "proj_clip": float(opts.ProjClip()),
                    "time_major": bool(opts.TimeMajor()),
                    "asymmetric_quantize_inputs": bool(opts.AsymmetricQuantizeInputs()),
                },
                "is_variable": {
                    int(t): bool(graph.Tensors(t).IsVariable()) for t in range(graph.TensorsLength())
                },
            }
    raise RuntimeError("no UNIDIRECTIONAL_SEQUENCE_LSTM in the converted model")


def tensor_entry(details, is_variable, interp, out_dir, index, with_data):
    d = details[index]
    q = d["quantization_parameters"]
    entry = {
        "index": index,
        "name": d["name"],
        "dtype": DTYPES[d["dtype"]],
        "shape": [int(s) for s in d["shape"]],
        "scale": [float(s) for s in q["scales"]],
        "zero_point": [int(z) for z in q["zero_points"]],
        "quantized_dimension": int(q["quantized_dimension"]),
        "is_variable": is_variable.get(index, False),
    }
    if with_data:
        data = interp.get_tensor(index)
        name = "t%d.bin" % index
        data.astype(data.dtype.newbyteorder("<")).tofile(os.path.join(out_dir, name))
        entry["data"] = name
    return entry


def run_variant(name, model, mode, xs, rep, bf16_weights=False):
    out_dir = os.path.join(OUT, name)
    os.makedirs(out_dir, exist_ok=True)
    flat = convert(model, mode, rep)
    with open(os.path.join(out_dir, "model.tflite"), "wb") as f:
        f.write(flat)
    op = lstm_op_of(flat)
    interp = litert.Interpreter(
        model_content=flat,
        experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF,
        experimental_preserve_all_tensors=True,
    )
    interp.allocate_tensors()
    details = {d["index"]: d for d in interp.get_tensor_details()}
    in_det = interp.get_input_details()[0]
    out_det = interp.get_output_details()[0]
    lstm_in, lstm_out = op["inputs"][0], op["outputs"][0]

    model_in, model_out, lstm_ins, lstm_outs = [], [], [], []
    for x in xs:
        if in_det["dtype"] == np.int8:
            s, z = in_det["quantization"]
            q = np.clip(np.round(x / s) + z, -128, 127).astype(np.int8)
        else:
            q = x.astype(np.float32)
        interp.reset_all_variables()
        interp.set_tensor(in_det["index"], q)
        interp.invoke()
        model_in.append(q)
        model_out.append(interp.get_tensor(out_det["index"]).copy())
        lstm_ins.append(interp.get_tensor(lstm_in).copy())
        lstm_outs.append(interp.get_tensor(lstm_out).copy())

    np.stack(model_in).tofile(os.path.join(out_dir, "model_in.bin"))
    np.stack(model_out).tofile(os.path.join(out_dir, "model_out.bin"))
    np.stack(lstm_ins).tofile(os.path.join(out_dir, "input.bin"))
    np.stack(lstm_outs).tofile(os.path.join(out_dir, "lstm_out.bin"))

    operands = []
    for t in op["inputs"]:
        if t < 0:
            operands.append(None)
            continue
        constant = details[t]["name"] and not op["is_variable"].get(t, False) and t != lstm_in
        operands.append(tensor_entry(details, op["is_variable"], interp, out_dir, t, constant))
    manifest = {
        "name": name,
        "mode": mode,
        "samples": len(xs),
        "options": op["options"],
        "inputs": operands,
        "outputs": [tensor_entry(details, op["is_variable"], interp, out_dir, t, False) for t in op["outputs"]],
        "intermediates": [
            tensor_entry(details, op["is_variable"], interp, out_dir, t, False) for t in op["intermediates"]
        ],
        "model_input": tensor_entry(details, op["is_variable"], interp, out_dir, in_det["index"], False),
        "model_output": tensor_entry(details, op["is_variable"], interp, out_dir, out_det["index"], False),
        "bf16_weights": bf16_weights,
        "tf_version": tf.__version__,
    }
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print("%-22s %-8s lstm in %s out %s" % (name, mode, details[lstm_in]["dtype"].__name__,
                                            details[lstm_out]["dtype"].__name__))


def main():
    configs = [
        # name, seed, T, features, units, return_sequences, modes
        ("small", 1, 5, 3, 4, False, ["float", "int8"]),
        ("small_seq", 2, 5, 3, 4, True, ["float", "int8"]),
        ("big", 3, 32, 10, 64, False, ["float", "int8"]),
        ("big_seq", 4, 32, 10, 64, True, ["int8"]),
        # The converter quantizes only weights of >= 1024 elements (here 64 x 32 per gate), so
        # the dynamic-range models need a wider input than "big".
        ("wide", 5, 32, 32, 64, False, ["float", "dynamic"]),
        ("wide_seq", 6, 32, 32, 64, True, ["dynamic"]),
    ]
    for name, seed, t, feat, units, seq, modes in configs:
        model = build_model(seed, t, feat, units, seq)
        xs = sample_inputs(seed, SAMPLES, t, feat)
        rep = sample_inputs(seed + 500, 200, t, feat)
        for mode in modes:
            run_variant("%s_%s" % (name, mode), model, mode, xs, rep)
        if name in ("small_seq", "big"):
            run_variant("%s_bf16" % name, bf16_weight_model(model), "float", xs, rep, bf16_weights=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
