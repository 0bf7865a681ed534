#!/usr/bin/env python3
"""Float TFLite fixtures from Keras 3 models, for the TFLite -> graph lift.

The converter writes a Keras 3 model differently from a tf_keras one (tools/make_tflite_fixtures.py
covers those): other tensor names, keep_num_dims FULLY_CONNECTED on sequences, its own spelling of
strided, dilated and causal Conv1D and of the pools. Each model here (batch 1, seeded random
weights, odd sizes) is exported with `model.export()` and converted by
`TFLiteConverter.from_saved_model`, the documented Keras 3 path. This writes
  <out>/<model>/float.tflite
  <out>/<model>/inputs_float_<i>.npy         N input rows per model input, batch stacked on axis 0
  <out>/<model>/expected_ref_float_<j>.npy   outputs of ai_edge_litert's BUILTIN_REF kernels (the
                                             default kernels for a model with an op BUILTIN_REF
                                             lacks, ELU, without delegates; the entry's "resolver" says which)
and <out>/manifest.json in the layout of tools/make_tflite_fixtures.py (models -> modes -> float:
file, input_files, expected_ref_files, inputs, outputs, ops), plus per model "lift": whether the
engine is expected to lift it ("yes") or which op it is expected to refuse.

Usage: make_tflite_lift_fixtures.py --out DIR [--count N]
"""
import argparse
import json
import os
import shutil
import tempfile
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402


def models(keras):
    L = keras.layers

    def conv_strided():
        x = keras.Input((21, 5), batch_size=1, name="x")
        h = L.Conv1D(6, 3, strides=2, padding="same", activation="relu")(x)
        h = L.MaxPooling1D(2, padding="same")(h)
        h = L.Conv1D(4, 2, padding="valid", activation="tanh")(h)
        h = L.AveragePooling1D(2, strides=1)(h)
        h = L.Flatten()(h)
        return keras.Model(x, L.Dense(3, activation="softmax")(h)), "yes"

    def conv_causal():
        x = keras.Input((19, 3), batch_size=1, name="x")
        h = L.Conv1D(5, 3, padding="causal", activation="relu")(x)
        h = L.Conv1D(5, 2, padding="causal", dilation_rate=2)(h)
        h = L.Conv1D(4, 3, padding="same", activation="elu")(h)
        h = L.GlobalAveragePooling1D()(h)
        return keras.Model(x, L.Dense(2)(h)), "yes"

    def seq_dense():
        x = keras.Input((7, 4), batch_size=1, name="x")
        h = L.Dense(6, activation="gelu")(x)
        h = L.LeakyReLU(negative_slope=0.25)(h)
        h = L.Dense(5, activation="sigmoid")(h)
        h = L.GlobalAveragePooling1D()(h)
        return keras.Model(x, L.Dense(3, activation="relu6")(h)), "yes"

    def hard_swish():
        x = keras.Input((6, 4), batch_size=1, name="x")
        h = L.Dense(8, activation="hard_silu")(x)
        h = L.Conv1D(5, 2, activation="swish")(h)
        h = L.GlobalAveragePooling1D()(h)
        return keras.Model(x, L.Dense(3, activation="tanh")(h)), "yes"

    def multi_io():
        a = keras.Input((6,), batch_size=1, name="a")
        b = keras.Input((5,), batch_size=1, name="b")
        ha = L.Dense(7, activation="tanh")(a)
        hb = L.Dense(7)(b)
        d = L.Subtract()([ha, hb])
        m = L.Multiply()([ha, L.Activation("softmax")(hb)])
        c = L.Concatenate()([d, m, ha])
        y1 = L.Dense(2, name="score")(c)
        y2 = L.Dense(1, activation="sigmoid", name="prob")(L.Add()([d, m]))
        return keras.Model([a, b], [y1, y2]), "yes"

    def conv2d_book():
        # The book models' 2-D forms: Conv2D over (time, levels) with strides, SAME padding along
        # time, a dilated kernel, 2-D pools, a one-column Inception-style concat.
        x = keras.Input((9, 8, 2), batch_size=1, name="x")
        h = L.Conv2D(6, (1, 2), strides=(1, 2), activation="relu")(x)
        h = L.LeakyReLU(negative_slope=0.01)(L.Conv2D(5, (3, 1), padding="same")(h))
        h = L.Conv2D(7, (2, 2), dilation_rate=(2, 1), padding="same")(h)
        h = L.AveragePooling2D((2, 2), strides=(1, 2), padding="same")(h)
        h = L.Conv2D(6, (1, 2))(h)
        a = L.Conv2D(5, (3, 1), padding="same", activation="tanh")(h)
        b = L.Conv2D(5, (1, 1))(L.MaxPooling2D((3, 1), strides=(1, 1), padding="same")(h))
        h = L.Concatenate(axis=3)([a, b])
        h = L.Flatten()(L.MaxPooling2D((2, 1))(h))
        return keras.Model(x, L.Dense(3, activation="softmax")(h)), "yes"

    def deeplob_tiny():
        # DeepLOB's shape at toy sizes (lob-models facts 1.2): Conv2D blocks, an Inception
        # module, Reshape to (T, channels), LSTM, Dense softmax; the LSTM a WHILE loop.
        x = keras.Input((10, 16, 1), batch_size=1, name="x")
        h = x
        for kernel, strides in (((1, 2), (1, 2)), ((1, 2), (1, 2)), ((1, 4), (1, 1))):
            h = L.LeakyReLU(negative_slope=0.01)(L.Conv2D(6, kernel, strides=strides)(h))
            h = L.LeakyReLU(negative_slope=0.01)(L.Conv2D(6, (4, 1), padding="same")(h))
        a = L.Conv2D(5, (3, 1), padding="same")(L.Conv2D(5, (1, 1), padding="same")(h))
        b = L.Conv2D(5, (1, 1), padding="same")(L.MaxPooling2D((3, 1), strides=(1, 1), padding="same")(h))
        h = L.Reshape((10, 10))(L.Concatenate(axis=3)([a, b]))
        h = L.LSTM(7)(h)
        return keras.Model(x, L.Dense(3, activation="softmax")(h)), "yes"

    def layer_norm():
        x = keras.Input((9,), batch_size=1, name="x")
        h = L.LayerNormalization()(L.Dense(8)(x))
        return keras.Model(x, L.Dense(2)(h)), "yes"

    def attention_encoder(dropout):
        # The keras.io time-series encoder block (lob-models facts 4.4, pre-LN) at toy sizes:
        # dropout 0 is Keras' dot_product_attention path (scores scaled), dropout > 0 the one that
        # scales the query first; both convert to TRANSPOSE / BATCH_MATMUL / SOFTMAX chains.
        def build():
            x = keras.Input((9, 6), batch_size=1, name="x")
            n = L.LayerNormalization(epsilon=1e-6)(x)
            n = L.MultiHeadAttention(2, 3, dropout=dropout)(n, n)
            r = L.Add()([x, n])
            n = L.LayerNormalization(epsilon=1e-6)(r)
            n = L.Conv1D(6, 1)(L.Conv1D(10, 1, activation="relu")(n))
            h = L.GlobalAveragePooling1D()(L.Add()([r, n]))
            return keras.Model(x, L.Dense(3, activation="softmax")(h)), "yes"
        return build

    def attention_causal():
        # TransLOB's shape (lob-models facts 3) at toy sizes: causal dilated Conv1D, LayerNorm,
        # the position channel (a channel PAD and a table ADD), one post-LN block with causal
        # attention without biases applied twice, a Flatten head. The mask is a SELECT_V2.
        T = 10
        x = keras.Input((T, 8), batch_size=1, name="x")
        h = L.Conv1D(5, 2, padding="causal", dilation_rate=2, activation="relu")(L.Conv1D(5, 2, padding="causal", activation="relu")(x))
        h = L.LayerNormalization(epsilon=1e-5)(h)
        table = np.zeros((T, 6), np.float32)
        table[:, 5] = np.linspace(-1.0, 1.0, T, dtype=np.float32)
        h = keras.ops.pad(h, [[0, 0], [0, 0], [0, 1]]) + table
        attn = L.MultiHeadAttention(3, 2, use_bias=False)
        ln1, ln2 = L.LayerNormalization(epsilon=1e-5), L.LayerNormalization(epsilon=1e-5)
        ff1, ff2 = L.Dense(12, activation="relu"), L.Dense(6)
        for _ in range(2):
            h = ln1(L.Add()([h, attn(h, h, use_causal_mask=True)]))
            h = ln2(L.Add()([h, ff2(ff1(h))]))
        return keras.Model(x, L.Dense(3, activation="softmax")(L.Flatten()(h))), "yes"

    def attention_sliding():
        # A causal sliding window (sliding_window=3 with use_causal_mask: the mask is a band) and
        # a two-sided one, as SELECT_V2 masks; the fusion reads the band's width.
        x = keras.Input((9, 5), batch_size=1, name="x")
        h = L.Dense(6)(x)
        a = L.MultiHeadAttention(2, 3, sliding_window=3)(h, h, use_causal_mask=True)
        b = L.MultiHeadAttention(2, 2, sliding_window=2)(h, h)
        h = L.LayerNormalization()(L.Add()([h, L.Add()([a, b])]))
        return keras.Model(x, L.Dense(3)(L.GlobalAveragePooling1D()(h))), "yes"

    return {"k3_attention_sliding": attention_sliding, "k3_conv_strided": conv_strided, "k3_conv_causal": conv_causal, "k3_seq_dense": seq_dense,
            "k3_hard_swish": hard_swish, "k3_conv2d_book": conv2d_book, "k3_deeplob_tiny": deeplob_tiny,
            "k3_multi_io": multi_io, "k3_layer_norm": layer_norm,
            "k3_attention_encoder": attention_encoder(0.0), "k3_attention_dropout": attention_encoder(0.1),
            "k3_attention_causal": attention_causal}


def randomize(model, rng):
    for layer in model.layers:
        vals = []
        for w in layer.weights:
            shape = tuple(w.shape)
            if len(shape) > 1:
                v = rng.standard_normal(shape) / np.sqrt(max(int(np.prod(shape[:-1])), 1))
            else:
                v = 0.5 * rng.standard_normal(shape) + (1.0 if "gamma" in w.path else 0.0)
            vals.append(v.astype(np.float32))
        if vals:
            layer.set_weights(vals)


def convert(tf, model, path):
    scratch = tempfile.mkdtemp()
    try:
        specs = [tf.TensorSpec((1,) + tuple(i.shape[1:]), tf.float32, name=i.name) for i in model.inputs]
        # The model's call takes one argument: its input, or the list of its inputs.
        model.export(scratch, input_signature=specs if len(specs) == 1 else [specs], verbose=False)
        data = tf.lite.TFLiteConverter.from_saved_model(scratch).convert()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    with open(path, "wb") as f:
        f.write(data)


def run_reference(path, inputs):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    # preserve_all_tensors: every tensor its own memory. With the arena's sharing, the reference
    # kernels of TFLite 2.21 give k3_multi_io's "score" output off by up to 1.2, while the default
    # kernels, and the same reference kernels without sharing, agree with each other and with
    # the score recomputed in numpy from the CONCATENATION output and the weights.
    resolver = "BUILTIN_REF"
    kw = {"num_threads": 1, "experimental_preserve_all_tensors": True}
    try:
        it = Interpreter(model_path=path, experimental_op_resolver_type=OpResolverType.BUILTIN_REF, **kw)
    except ValueError:  # an op the reference kernels lack (ELU): the default kernels then
        resolver = "BUILTIN_WITHOUT_DEFAULT_DELEGATES"
        it = Interpreter(model_path=path, experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
                         **kw)
    it.allocate_tensors()
    ins, outs = it.get_input_details(), it.get_output_details()
    n = inputs[0].shape[0]
    results = [np.zeros((n, *o["shape"][1:]), np.float32) for o in outs]
    for r in range(n):
        for d, x in zip(ins, inputs):
            it.set_tensor(d["index"], x[r : r + 1])
        it.invoke()
        for j, o in enumerate(outs):
            results[j][r] = it.get_tensor(o["index"])[0]
    io = lambda d: {"name": d["name"], "index": int(d["index"]), "shape": [int(s) for s in d["shape"]]}
    return results, [io(d) for d in ins], [io(d) for d in outs], [o["op_name"] for o in it._get_ops_details()], resolver


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--count", type=int, default=64)
    args = ap.parse_args()
    import keras
    import tensorflow as tf

    manifest = {"generator": "tools/make_tflite_lift_fixtures.py",
                "reference": "ai_edge_litert Interpreter, OpResolverType.BUILTIN_REF, experimental_preserve_all_tensors",
                "versions": {"tensorflow": tf.__version__, "keras": keras.__version__}, "models": {}}
    for name, build in models(keras).items():
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        keras.utils.set_random_seed(int(rng.integers(1 << 30)))
        model, lift = build()
        randomize(model, rng)
        d = os.path.join(args.out, name)
        os.makedirs(d, exist_ok=True)
        convert(tf, model, os.path.join(d, "float.tflite"))
        from ai_edge_litert.interpreter import Interpreter
        order = Interpreter(model_path=os.path.join(d, "float.tflite")).get_input_details()
        inputs = []
        for k, det in enumerate(order):
            x = rng.standard_normal((args.count, *det["shape"][1:])).astype(np.float32)
            x[7::8] *= 5.0  # every 8th row large: saturating activations
            inputs.append(x)
        outs, ins, outd, ops, resolver = run_reference(os.path.join(d, "float.tflite"), inputs)
        entry = {"file": "float.tflite", "inputs": ins, "outputs": outd, "ops": [{"op": o} for o in ops],
                 "resolver": resolver,
                 "input_files": [], "expected_ref_files": []}
        for i, x in enumerate(inputs):
            entry["input_files"].append(f"inputs_float_{i}.npy")
            np.save(os.path.join(d, entry["input_files"][-1]), x)
        for j, y in enumerate(outs):
            entry["expected_ref_files"].append(f"expected_ref_float_{j}.npy")
            np.save(os.path.join(d, entry["expected_ref_files"][-1]), y)
        manifest["models"][name] = {"lift": lift, "modes": {"float": entry}}
        print(f"  {name}: {len(ops)} ops: {' '.join(ops)}")
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
