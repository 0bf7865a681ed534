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

import flatbuffers
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
    flat = convert(model, mode, rep)
    dump_variant(name, flat, mode, xs, bf16_weights)
    return flat


def dump_variant(name, flat, mode, xs, bf16_weights=False):
    out_dir = os.path.join(OUT, name)
    os.makedirs(out_dir, exist_ok=True)
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


# --- variants the converter never emits for a Keras LSTM --------------------------------------
# CIFG, peepholes, projection (with clipping) and layer norm: the converted model is edited with
# the flatbuffer object API (operands added or removed, random constants), then run by TFLite as
# usual, so its kernel still supplies the expected outputs.

TENSOR_TYPE = {np.float32: 0, np.int32: 2, np.int16: 7, np.int8: 9}


def add_constant(model, graph, name, values, scale=None):
    buf = schema_fb.BufferT()
    buf.data = np.frombuffer(np.ascontiguousarray(values).tobytes(), dtype=np.uint8)
    model.buffers.append(buf)
    t = schema_fb.TensorT()
    t.shape = np.array(values.shape, dtype=np.int32)
    t.type = TENSOR_TYPE[values.dtype.type]
    t.buffer = len(model.buffers) - 1
    t.name = name.encode()
    if scale is not None:
        q = schema_fb.QuantizationParametersT()
        q.scale = np.array([scale], dtype=np.float32)
        q.zeroPoint = np.array([0], dtype=np.int64)
        t.quantization = q
    graph.tensors.append(t)
    return len(graph.tensors) - 1


def edit_lstm(flat, edit):
    model = schema_fb.ModelT.InitFromPackedBuf(flat, 0)
    graph = model.subgraphs[0]
    for op in graph.operators:
        code = model.operatorCodes[op.opcodeIndex]
        if max(code.deprecatedBuiltinCode, code.builtinCode) == LSTM_CODE:
            op.inputs = [int(v) for v in op.inputs] + [-1] * (24 - len(op.inputs))
            edit(model, graph, op)
            op.inputs = np.array(op.inputs, dtype=np.int32)
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def lstm_edit(seed, kind, cifg=False, peephole=False, projection=False, layer_norm=False,
              cell_clip=None, proj_clip=None, asymmetric=None):
    """kind: 'float', 'hybrid' (int8 weights, float rest) or 'int8' (8x8_16 operand types)."""
    rng = np.random.default_rng(seed)

    def edit(model, graph, op):
        n_cell = int(graph.tensors[op.inputs[4]].shape[0])
        if cifg:
            for i in (1, 5, 9, 12, 20):
                op.inputs[i] = -1
        if peephole:
            for i in ((10, 11) if cifg else (9, 10, 11)):
                v = rng.uniform(-0.5, 0.5, n_cell)
                if kind == "float":
                    op.inputs[i] = add_constant(model, graph, "peephole%d" % i, v.astype(np.float32))
                elif kind == "hybrid":
                    s = float(np.abs(v).max()) / 127
                    op.inputs[i] = add_constant(model, graph, "peephole%d" % i, np.round(v / s).astype(np.int8), s)
                else:
                    s = float(np.abs(v).max()) / 32767
                    op.inputs[i] = add_constant(model, graph, "peephole%d" % i, np.round(v / s).astype(np.int16), s)
        if projection:  # [n_output = n_cell, n_cell], keeping every other shape
            w = rng.normal(0.0, 0.4, (n_cell, n_cell))
            b = rng.normal(0.0, 0.1, n_cell)
            if kind == "float":
                op.inputs[16] = add_constant(model, graph, "projection", w.astype(np.float32))
                op.inputs[17] = add_constant(model, graph, "projection_bias", b.astype(np.float32))
            else:
                s = float(np.abs(w).max()) / 127
                op.inputs[16] = add_constant(model, graph, "projection", np.round(w / s).astype(np.int8), s)
                if kind == "hybrid":
                    op.inputs[17] = add_constant(model, graph, "projection_bias", b.astype(np.float32))
                else:
                    hidden = graph.tensors[op.intermediates[4]].quantization.scale[0]
                    bs = float(s * hidden)
                    op.inputs[17] = add_constant(model, graph, "projection_bias", np.round(b / bs).astype(np.int32), bs)
        if layer_norm:
            for g in range(4):
                if cifg and g == 0:
                    continue
                v = rng.uniform(0.5, 1.5, n_cell).astype(np.float32)
                op.inputs[20 + g] = add_constant(model, graph, "layer_norm%d" % g, v)
        o = op.builtinOptions
        if cell_clip is not None:
            o.cellClip = cell_clip
        if proj_clip is not None:
            o.projClip = proj_clip
        if asymmetric is not None:
            o.asymmetricQuantizeInputs = asymmetric

    return edit


def edited_variants(flats, xs_of):
    variants = [
        # name, base, kind, edit arguments
        ("cifg_float", "small_seq_float", "float", dict(cifg=True)),
        ("peephole_float", "small_seq_float", "float", dict(peephole=True, cell_clip=0.6)),
        ("projection_float", "small_seq_float", "float", dict(projection=True, proj_clip=0.15)),
        ("layer_norm_float", "small_seq_float", "float", dict(layer_norm=True)),
        ("all_float", "small_seq_float", "float",
         dict(cifg=True, peephole=True, projection=True, layer_norm=True, cell_clip=0.5, proj_clip=0.2)),
        ("all_dynamic", "wide_seq_dynamic", "hybrid",
         dict(cifg=True, peephole=True, projection=True, layer_norm=True, cell_clip=0.5, proj_clip=0.2)),
        ("symmetric_dynamic", "wide_seq_dynamic", "hybrid", dict(peephole=True, asymmetric=False)),
        ("cifg_int8", "small_seq_int8", "int8", dict(cifg=True)),
        ("peephole_int8", "big_seq_int8", "int8", dict(peephole=True)),
        ("projection_int8", "big_seq_int8", "int8", dict(projection=True, proj_clip=0.2)),
    ]
    for i, (name, base, kind, args) in enumerate(variants):
        flat = edit_lstm(flats[base], lstm_edit(100 + i, kind, **args))
        dump_variant(name, flat, "dynamic" if kind == "hybrid" else kind, xs_of[base])


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
    flats, xs_of = {}, {}
    for name, seed, t, feat, units, seq, modes in configs:
        model = build_model(seed, t, feat, units, seq)
        xs = sample_inputs(seed, SAMPLES, t, feat)
        rep = sample_inputs(seed + 500, 200, t, feat)
        for mode in modes:
            variant = "%s_%s" % (name, mode)
            flats[variant] = run_variant(variant, model, mode, xs, rep)
            xs_of[variant] = xs
        if name in ("small_seq", "big"):
            run_variant("%s_bf16" % name, bf16_weight_model(model), "float", xs, rep, bf16_weights=True)
    edited_variants(flats, xs_of)
    return 0


if __name__ == "__main__":
    sys.exit(main())
