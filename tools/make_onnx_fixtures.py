#!/usr/bin/env python3
"""Build the ONNX reference fixtures: small random-weight models converted to ONNX the way users
convert them, and the outputs onnxruntime computes for the converted files.

Why this script exists: tickinfer's ONNX importer must agree with the runtime that defines the
format, on files written by the real exporters (tf2onnx, torch.onnx.export), not on files we
shaped ourselves.

Usage:
  make_onnx_fixtures.py --out DIR [--only NAME...]            tf2onnx cases (Keras 3, tf_keras)
  make_onnx_fixtures.py --out DIR --torch [--only NAME...]    PyTorch cases (needs torch and, for the
                                                             dynamo cases, onnxscript: the environment
                                                             bench/compare/setup_venv.sh --with-torch makes)

Exporters: Keras 3 models go through `model.export(path, format="onnx")` (tf2onnx's
from_function underneath); tf_keras models through `tf2onnx.convert.from_keras`. PyTorch models
through `torch.onnx.export` (TorchScript exporter, `dynamo=False`, unless --torch-dynamo).

Reference: onnxruntime (CPU, one thread, all graph optimizations off) runs every row as its own
batch-1 call on the written file. For recurrent cases a variable-length twin of the same weights
is exported to a scratch directory and run on every prefix x[n, :t+1] (stream fixtures).

Tolerance per case: rtol 1e-5; atol is the larger of 1e-6 * max|out| and 4x the distance of
onnxruntime's float32 result from the source framework's float64 result on the same weights
(the rounding noise any correct float32 engine shows).

Layout under DIR: manifest.json (the format of tests/fixtures/manifest.json, plus "unsupported":
files the importer must refuse, with the words the error must contain), <case>/model.onnx,
in*.npy, out*.npy[, stream_in.npy, stream_out.npy]. A --torch run merges its cases into an
existing manifest.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["CUDA_VISIBLE_DEVICES"] = ""
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
os.environ.pop("TF_USE_LEGACY_KERAS", None)
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402

ROWS = 8
RTOL = 1e-5
TORCH_UNSUPPORTED: list = []  # filled by torch_cases() (the classes need torch)


@dataclass
class Case:
    """`build(T)` returns a model; T is the sequence length (None: the variable-length twin)."""
    name: str
    kind: str  # "k3" (Keras 3 export), "k2" (tf_keras + tf2onnx), "torch"
    build: Callable
    T: int | None = None
    stream: bool = False
    expect_error: list = field(default_factory=list)
    in_shapes: list = field(default_factory=list)  # torch: per-input feature shape (T as None)
    dynamo: bool = False  # torch: the dynamo exporter (torch.export) instead of TorchScript
    window: int | None = None  # Keras: the model's time axis is None; inputs use this length
    # Keras 3: converted at a fixed batch of 1 by tf2onnx.convert.from_function (the call the
    # compare runs make), where tf2onnx leaves an LSTM as its tf.while Loop.
    batch1: bool = False


# ------------------------------------------------------------------------------------------------
# Keras builders (tf2onnx). Sizes are odd on purpose.
# ------------------------------------------------------------------------------------------------
def keras_mods(kind):
    if kind == "k3":
        import keras
        return keras
    import tf_keras
    return tf_keras


def k_dense_stack(K, T):
    L = K.layers
    return K.Sequential([K.Input((9,)), L.Dense(13, activation="relu"), L.Dense(7, activation="tanh"),
                         L.Dense(3)])


def k_activations(K, T):
    L = K.layers
    x = K.Input((6,))
    acts = ["relu", "sigmoid", "tanh", "elu", "selu", "softplus", "softsign", "relu6", "softmax"]
    branches = [L.Dense(5, activation=a)(x) for a in acts]
    branches.append(L.LeakyReLU(negative_slope=0.2)(L.Dense(5)(x)) if K.__name__ == "keras"
                    else L.LeakyReLU(alpha=0.2)(L.Dense(5)(x)))
    return K.Model(x, L.Concatenate()(branches))


def k_norms(K, T):
    L = K.layers
    return K.Sequential([K.Input((7,)), L.Dense(11), L.BatchNormalization(), L.Activation("relu"),
                         L.LayerNormalization(), L.Dense(5)])


def k_conv_strided_dilated(K, T):
    L = K.layers
    return K.Sequential([K.Input((T, 3)), L.Conv1D(5, 3, strides=2, padding="same"),
                         L.Conv1D(4, 2, dilation_rate=2, activation="relu"), L.MaxPooling1D(2),
                         L.GlobalAveragePooling1D(), L.Dense(3)])


def k_conv_pool_flatten(K, T):
    L = K.layers
    return K.Sequential([K.Input((T, 4)), L.Conv1D(6, 3, activation="tanh"), L.BatchNormalization(),
                         L.AveragePooling1D(2, strides=2, padding="same"), L.Flatten(), L.Dense(3)])


def k_conv_seq_out(K, T):
    L = K.layers
    return K.Sequential([K.Input((T, 3)), L.Conv1D(4, 3, padding="same", dilation_rate=2),
                         L.Conv1D(2, 1, activation="sigmoid")])


def k_lstm_stacked(K, T):
    L = K.layers
    return K.Sequential([K.Input((T, 3)), L.LSTM(5, return_sequences=True), L.LSTM(4), L.Dense(2)])


def k_lstm_seq(K, T):
    L = K.layers
    return K.Sequential([K.Input((T, 4)), L.LSTM(3, return_sequences=True)])


def k_gru_stacked(K, T):
    L = K.layers
    return K.Sequential([K.Input((T, 3)), L.GRU(5, return_sequences=True), L.GRU(4), L.Dense(2)])


def k_gru_reset_before(K, T):
    L = K.layers
    return K.Sequential([K.Input((T, 3)), L.GRU(4, reset_after=False)])


def k_gru_reset_before_stacked(K, T):
    L = K.layers
    return K.Sequential([K.Input((T, 3)), L.GRU(4, reset_after=False, return_sequences=True),
                         L.GRU(3, reset_after=False), L.Dense(2)])


def k_gru_no_bias_seq(K, T):  # the last layer returns its sequence: the model output is [T, units]
    L = K.layers
    return K.Sequential([K.Input((T, 4)), L.GRU(5, use_bias=False, return_sequences=True),
                         L.GRU(3, return_sequences=True)])


def k_bidirectional_seq(K, T):  # the concatenated sequence of both directions, read by a Dense
    L = K.layers
    return K.Sequential([K.Input((T, 3)), L.Bidirectional(L.LSTM(5, return_sequences=True)), L.Dense(3)])


def k_bidirectional_stacked(K, T):  # a summed GRU sequence into an LSTM's last state (both ways)
    L = K.layers
    return K.Sequential([K.Input((T, 3)), L.Bidirectional(L.GRU(4, return_sequences=True), merge_mode="sum"),
                         L.Bidirectional(L.LSTM(5)), L.Dense(3)])


def k_bidirectional_last(K, T):  # both directions' final h (the backward one's is its first step in Y)
    L = K.layers
    return K.Sequential([K.Input((T, 3)), L.Bidirectional(L.LSTM(5)), L.Dense(3)])


def k_go_backwards(K, T):  # tf2onnx: a ReverseSequence over the window, then the layer
    L = K.layers
    return K.Sequential([K.Input((T, 3)), L.LSTM(5, go_backwards=True, return_sequences=True),
                         L.GRU(4, go_backwards=True), L.Dense(2)])


def k_conv2d_stack(K, T):  # 'same' with a stride and odd sizes, dilation, explicit ZeroPadding2D, pools
    L = K.layers
    return K.Sequential([K.Input((T, 10, 2)), L.Conv2D(4, (3, 2), strides=(1, 2), padding="same"),
                         L.LeakyReLU(negative_slope=0.01), L.ZeroPadding2D(((2, 0), (1, 1))),
                         L.Conv2D(3, (2, 2), dilation_rate=(2, 1), activation="relu"),
                         L.MaxPooling2D((2, 1), padding="same"), L.AveragePooling2D((1, 2)),
                         L.Flatten(), L.Dense(3)])


def k_depthwise2d(K, T):
    L = K.layers
    return K.Sequential([K.Input((T, 6, 3)), L.DepthwiseConv2D((3, 2), depth_multiplier=2, padding="same"),
                         L.Conv2D(4, (1, 1), activation="tanh"), L.Flatten(), L.Dense(2)])


def k_deeplob_tiny(K, T):  # DeepLOB's layer sequence (lob-models facts 1.2) at 2 levels, few channels
    L = K.layers

    def conv(h, filters, kernel, strides=(1, 1), padding="valid"):
        return L.LeakyReLU(negative_slope=0.01)(L.Conv2D(filters, kernel, strides=strides, padding=padding)(h))

    x = K.Input((T, 8, 1))
    h = x
    for kernel, strides in (((1, 2), (1, 2)), ((1, 2), (1, 2)), ((1, 2), (1, 1))):
        h = conv(conv(conv(h, 4, kernel, strides), 4, (4, 1), padding="same"), 4, (4, 1), padding="same")
    a = conv(conv(h, 4, (1, 1), padding="same"), 4, (3, 1), padding="same")
    b = conv(conv(h, 4, (1, 1), padding="same"), 4, (5, 1), padding="same")
    c = conv(L.MaxPooling2D((3, 1), strides=(1, 1), padding="same")(h), 4, (1, 1), padding="same")
    h = L.Reshape((T, 12))(L.Concatenate(axis=3)([a, b, c]))
    return K.Model(x, L.Dense(3, activation="softmax")(L.LSTM(5)(h)))


def k_deeplob_multi_horizon(attention):
    """DeepLOB-Seq2Seq / -Attention as make_fixtures.py builds them (an encoder LSTM handing its
    state to a decoder LSTM called once per horizon), at 2 levels and few channels: tf2onnx
    writes each LSTM call as an ONNX LSTM whose initial_h / initial_c are the previous call's
    Y_h / Y_c."""
    def build(K, T):
        import make_fixtures as mf
        kit = mf.KITS["keras3" if K.__name__ == "keras" else "keras2"]
        return mf.deeplob_multi_horizon(conv=4, inception=4, lstm=5, levels=2, horizons=3, attention=attention)(kit, T)
    return build


def k_layernorm_seq(K, T):  # LayerNormalization over a sequence: tf2onnx's GlobalAveragePool means
    L = K.layers
    return K.Sequential([K.Input((T, 5)), L.Conv1D(6, 2, activation="relu"), L.LayerNormalization(epsilon=1e-5),
                         L.Dense(4), L.LayerNormalization(center=False), L.GlobalAveragePooling1D(), L.Dense(2)])


def k_simple_rnn(K, T):
    L = K.layers
    return K.Sequential([K.Input((T, 3)), L.SimpleRNN(4)])


def k_activations_extra(K, T):
    L = K.layers
    x = K.Input((6,))
    acts = ["hard_sigmoid", "swish"]
    return K.Model(x, L.Concatenate()([L.Dense(5, activation=a)(x) for a in acts]))


def k_gelu(K, T):  # tf2onnx writes Erfc, which is no ONNX operator (onnx.checker rejects the file)
    L = K.layers
    return K.Sequential([K.Input((4,)), L.Dense(3, activation="gelu")])


def k_conv_causal(K, T):
    L = K.layers
    return K.Sequential([K.Input((T, 3)), L.Conv1D(4, 3, padding="causal", dilation_rate=2),
                         L.GlobalMaxPooling1D()])


def k_two_in_two_out(K, T):
    L = K.layers
    a, b = K.Input((6,), name="a"), K.Input((6,), name="b")
    ha, hb = L.Dense(5, activation="relu")(a), L.Dense(5)(b)
    s = L.Add()([ha, hb])
    m = L.Multiply()([ha, hb])
    d = L.Subtract()([s, m])
    out1 = L.Dense(3, name="head1")(L.Concatenate()([d, hb]))
    out2 = L.Dense(2, activation="sigmoid", name="head2")(s)
    return K.Model([a, b], [out1, out2])


def k_reshape(K, T):
    L = K.layers
    return K.Sequential([K.Input((12,)), L.Dense(12), L.Reshape((4, 3)), L.Dense(5), L.Flatten(),
                         L.Dense(2)])


def k_attention_encoder(K, T):  # a pre-LN encoder block (the keras.io time-series transformer's)
    L = K.layers
    x = K.Input((T, 6))
    n = L.LayerNormalization(epsilon=1e-6)(x)
    r = L.Add()([x, L.MultiHeadAttention(2, 3, dropout=0.0)(n, n)])
    n = L.Conv1D(6, 1)(L.Conv1D(9, 1, activation="relu")(L.LayerNormalization(epsilon=1e-6)(r)))
    h = L.GlobalAveragePooling1D()(L.Add()([r, n]))
    return K.Model(x, L.Dense(3, activation="softmax")(h))


def k_attention_window(K, T):  # sliding_window: a causal band (w 5) and a two-sided one (w 3)
    L = K.layers
    x = K.Input((T, 5))
    h = L.Dense(8)(x)
    a = L.MultiHeadAttention(2, 3, sliding_window=5)(h, h, use_causal_mask=True)
    b = L.MultiHeadAttention(2, 4, sliding_window=3)(h, h)
    return K.Model(x, L.Dense(2)(L.GlobalAveragePooling1D()(L.Concatenate()([a, b]))))


def k_attention_causal(K, T):
    """TransLOB's shape at toy size: causal dilated Conv1Ds, LayerNormalization, a zero channel
    padded on and a [T, d] table added (Keras 3 operations, so the pad and the add are ONNX Pad
    and Add of a constant), then one post-LN block with shared weights applied twice: causal
    self-attention without biases, residual, LN, feed-forward, residual, LN; a Flatten head."""
    import keras
    L = K.layers
    x = K.Input((T, 4))
    h = L.Conv1D(5, 2, padding="causal", activation="relu")(x)
    h = L.LayerNormalization(epsilon=1e-5)(L.Conv1D(5, 2, padding="causal", dilation_rate=2, activation="relu")(h))
    # Every column of the table differs (the layout of the engine's constant is checked whole);
    # the last one is TransLOB's -1..1 position ramp.
    table = 0.2 * np.cos(np.arange(T * 6, dtype=np.float32).reshape(T, 6))
    table[:, 5] = np.linspace(-1.0, 1.0, T)
    h = keras.ops.pad(h, [[0, 0], [0, 0], [0, 1]]) + table.astype(np.float32)
    attn = L.MultiHeadAttention(2, 3, use_bias=False)
    ln1, ln2 = L.LayerNormalization(epsilon=1e-5), L.LayerNormalization(epsilon=1e-5)
    ff1, ff2 = L.Dense(8, activation="relu"), L.Dense(6)
    for _ in range(2):
        h = ln1(L.Add()([h, attn(h, h, use_causal_mask=True)]))
        h = ln2(L.Add()([h, ff2(ff1(h))]))
    return K.Model(x, L.Dense(3, activation="softmax")(L.Flatten()(h)))


def tf2onnx_cases() -> list[Case]:
    return [
        Case("dense_stack_k3", "k3", k_dense_stack),
        Case("activations_k3", "k3", k_activations),
        Case("norms_k3", "k3", k_norms),
        Case("norms_k2", "k2", k_norms),
        Case("conv_strided_dilated_k3", "k3", k_conv_strided_dilated, T=17),
        Case("conv_pool_flatten_k3", "k3", k_conv_pool_flatten, T=11),
        Case("conv_seq_out_k2", "k2", k_conv_seq_out, T=9),
        Case("lstm_stacked_k3", "k3", k_lstm_stacked, T=6, stream=True),
        # A one-step window (the bench suite's lstm_tiny shape): tf2onnx writes its transpose
        # to time-major as a Reshape of unit axes.
        Case("lstm_one_step_k3", "k3", k_lstm_stacked, T=1, stream=True),
        Case("lstm_seq_k2", "k2", k_lstm_seq, T=5),
        Case("lstm_variable_length_k3", "k3", k_lstm_stacked, window=7, stream=True),
        Case("gru_stacked_k2", "k2", k_gru_stacked, T=6, stream=True),
        # Keras 3 GRUs (and tf_keras ones without reset_after) become ONNX Loops over the
        # converted tf.while body; the importer lifts them onto the engine's GRU.
        Case("gru_loop_k3", "k3", k_gru_stacked, T=6, stream=True),
        Case("gru_loop_reset_before_k3", "k3", k_gru_reset_before_stacked, T=7, stream=True),
        Case("gru_loop_reset_before_k2", "k2", k_gru_reset_before, T=5, stream=True),
        Case("gru_loop_no_bias_seq_k3", "k3", k_gru_no_bias_seq, T=5),
        Case("gru_loop_one_step_k3", "k3", k_gru_stacked, T=1, stream=True),
        Case("gru_loop_variable_length_k3", "k3", k_gru_stacked, window=8, stream=True),
        # At a fixed batch of 1 tf2onnx leaves a Keras 3 LSTM as its Loop too (DeepLOB's LSTM
        # in the compare runs' ONNX file); the importer lifts it onto the engine's LSTM.
        Case("lstm_loop_batch1_k3", "k3", k_lstm_stacked, T=6, stream=True, batch1=True),
        Case("lstm_loop_seq_batch1_k3", "k3", k_lstm_seq, T=5, batch1=True),
        Case("lstm_loop_variable_length_batch1_k3", "k3", k_lstm_stacked, window=7, stream=True, batch1=True),
        # Bidirectional(LSTM|GRU): tf2onnx writes one ONNX LSTM/GRU with direction
        # "bidirectional" and Slices each direction out of Y; a Keras 3 GRU stays a Loop each
        # way, the backward one over a ReverseSequence of the window, as go_backwards is.
        Case("bidirectional_seq_k3", "k3", k_bidirectional_seq, T=6),
        Case("bidirectional_seq_k2", "k2", k_bidirectional_seq, T=5),
        Case("bidirectional_stacked_k3", "k3", k_bidirectional_stacked, T=7),
        Case("bidirectional_stacked_k2", "k2", k_bidirectional_stacked, T=6),
        Case("bidirectional_variable_length_k3", "k3", k_bidirectional_last, window=7),
        Case("go_backwards_k3", "k3", k_go_backwards, T=6),
        Case("go_backwards_k2", "k2", k_go_backwards, T=5),
        Case("go_backwards_variable_length_k3", "k3", k_go_backwards, window=7),
        Case("two_in_two_out_k3", "k3", k_two_in_two_out),
        # Conv2D stacks: tf2onnx keeps NHWC at the boundary and writes NCHW Conv / MaxPool /
        # AveragePool between Transposes, which the importer's views cancel.
        Case("layernorm_seq_k3", "k3", k_layernorm_seq, T=8),
        Case("conv2d_stack_k3", "k3", k_conv2d_stack, T=9),
        Case("depthwise2d_k3", "k3", k_depthwise2d, T=7),
        Case("deeplob_tiny_k3", "k3", k_deeplob_tiny, T=10),
        Case("deeplob_tiny_batch1_k3", "k3", k_deeplob_tiny, T=10, batch1=True),
        Case("deeplob_seq2seq_k3", "k3", k_deeplob_multi_horizon(False), T=9),
        Case("deeplob_attention_k3", "k3", k_deeplob_multi_horizon(True), T=9),
        Case("deeplob_attention_k2", "k2", k_deeplob_multi_horizon(True), T=9),
        # At a fixed batch of 1 each LSTM call stays a Loop, the decoders' started from the
        # previous Loop's carried h and c.
        Case("deeplob_attention_batch1_k3", "k3", k_deeplob_multi_horizon(True), T=9, batch1=True),
        Case("activations_extra_k3", "k3", k_activations_extra),
        Case("conv_causal_k3", "k3", k_conv_causal, T=10),
        Case("reshape_k3", "k3", k_reshape),
        # Keras MultiHeadAttention: tf2onnx writes its einsums as Transpose / Reshape / MatMul
        # chains (batch and heads merged into one leading axis); the importer folds them back.
        Case("attention_encoder_k3", "k3", k_attention_encoder, T=8),
        Case("attention_causal_k3", "k3", k_attention_causal, T=7),
        # Sliding-window attention (Keras 3's sliding_window): both sides, and causal.
        Case("attention_window_k3", "k3", k_attention_window, T=21),
    ]


def tf2onnx_unsupported() -> list[Case]:
    return [
        Case("simple_rnn_k3_loop", "k3", k_simple_rnn, T=6, expect_error=["(Loop)", "not a Keras GRU"]),
        Case("gelu_k3_erfc", "k3", k_gelu, expect_error=["(Erfc)", "operator Erfc is not supported"]),
    ]


# ------------------------------------------------------------------------------------------------
# Operator-semantics cases built with onnx.helper: attribute values no exporter above writes
# (Gemm alpha/beta/transA, HardSigmoid/LeakyRelu parameters, constant Sub/Div operands, Neg, a GRU with
# linear_before_reset=0, the LayerNormalization and BatchNormalization ops).
# onnxruntime still computes every expected output; there is no float64 twin, so atol is
# 1e-6 * max(1, max|out|).
# ------------------------------------------------------------------------------------------------
def _tensor(rng, name, shape, scale=None):
    from onnx import numpy_helper
    v = rng.standard_normal(shape) * (scale if scale is not None else 1.0 / np.sqrt(max(shape[-1], 1)))
    return numpy_helper.from_array(v.astype(np.float32), name)


def _model(nodes, inputs, outputs, inits, opset):
    from onnx import helper
    g = helper.make_graph(nodes, "semantics", inputs, outputs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _io(name, dims):
    from onnx import TensorProto, helper
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)


def h_gemm_math(rng, T):
    from onnx import helper
    nodes = [helper.make_node("Transpose", ["x"], ["xt"], perm=[1, 0]),
             helper.make_node("Gemm", ["xt", "W", "C"], ["g"], alpha=0.5, beta=2.0, transA=1, transB=1),
             helper.make_node("Div", ["g", "three"], ["d"]),
             helper.make_node("Sub", ["cvec", "d"], ["s"]),
             helper.make_node("HardSigmoid", ["s"], ["hs"], alpha=0.3, beta=0.4),
             helper.make_node("LeakyRelu", ["g"], ["lr"], alpha=0.07),
             helper.make_node("Mul", ["hs", "lr"], ["m"]),
             helper.make_node("Clip", ["m", "zero", "six"], ["c"]),
             helper.make_node("Neg", ["c"], ["ng"]),
             helper.make_node("Cast", ["ng"], ["cf"], to=onnx.TensorProto.FLOAT),
             helper.make_node("Sub", ["cf", "cvec"], ["y"])]
    inits = [_tensor(rng, "W", (7, 5)), _tensor(rng, "C", (7,), 0.5), _tensor(rng, "cvec", (1, 7), 0.5),
             onnx.numpy_helper.from_array(np.array(3.0, np.float32), "three"),
             onnx.numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
             onnx.numpy_helper.from_array(np.array(6.0, np.float32), "six")]
    return _model(nodes, [_io("x", ["N", 5])], [_io("y", ["N", 7])], inits, 15)


def h_rnn_layouts(rng, T):
    from onnx import helper
    H1, H2, I = 4, 3, 3
    # onnxruntime runs layout=0 only: time-major through Transposes, as torch writes batch_first.
    nodes = [helper.make_node("Transpose", ["x"], ["xt"], perm=[1, 0, 2]),
             helper.make_node("LSTM", ["xt", "W1", "R1", "B1"], ["y1"], hidden_size=H1),
             helper.make_node("Squeeze", ["y1", "ax1"], ["s1"]),
             helper.make_node("GRU", ["s1", "W2", "R2", "B2"], ["", "h2"], hidden_size=H2,
                              linear_before_reset=0),
             helper.make_node("Squeeze", ["h2", "ax0"], ["y"])]
    inits = [_tensor(rng, "W1", (1, 4 * H1, I)), _tensor(rng, "R1", (1, 4 * H1, H1)), _tensor(rng, "B1", (1, 8 * H1), 0.5),
             _tensor(rng, "W2", (1, 3 * H2, H1)), _tensor(rng, "R2", (1, 3 * H2, H2)), _tensor(rng, "B2", (1, 6 * H2), 0.5),
             onnx.numpy_helper.from_array(np.array([1], np.int64), "ax1"),
             onnx.numpy_helper.from_array(np.array([0], np.int64), "ax0")]
    return _model(nodes, [_io("x", ["N", T if T else "T", I])], [_io("y", ["N", H2])], inits, 15)


def h_rnn_directions(rng, T):
    from onnx import helper
    H1, H2, I = 4, 3, 3
    # A reverse LSTM (Y and Y_h both read) into a bidirectional GRU (linear_before_reset=0, its
    # own activations per direction, HardSigmoid's alpha and beta handed out in order) whose Y
    # and Y_h are read as PyTorch reads them: the direction axis moved next to the hidden one and
    # merged with it.
    nodes = [helper.make_node("Transpose", ["x"], ["xt"], perm=[1, 0, 2]),
             helper.make_node("LSTM", ["xt", "W1", "R1", "B1"], ["y1", "h1"], hidden_size=H1, direction="reverse"),
             helper.make_node("Squeeze", ["y1", "ax1"], ["s1"]),
             helper.make_node("GRU", ["s1", "W2", "R2", "B2"], ["y2", "h2"], hidden_size=H2, direction="bidirectional",
                              linear_before_reset=0, activations=["HardSigmoid", "Tanh", "HardSigmoid", "Relu"],
                              activation_alpha=[0.15, 0.3], activation_beta=[0.45, 0.55]),
             helper.make_node("Transpose", ["y2"], ["y2t"], perm=[0, 2, 1, 3]),
             helper.make_node("Reshape", ["y2t", "seq_shape"], ["y2r"]),
             helper.make_node("Gather", ["y2r", "last"], ["y2last"], axis=0),
             helper.make_node("Gather", ["y2r", "first"], ["y2first"], axis=0),
             helper.make_node("Transpose", ["h2"], ["h2t"], perm=[1, 0, 2]),
             helper.make_node("Reshape", ["h2t", "state_shape"], ["h2r"]),
             helper.make_node("Squeeze", ["h1", "ax0"], ["h1s"]),
             helper.make_node("Concat", ["y2last", "y2first", "h2r", "h1s"], ["y"], axis=1)]
    inits = [_tensor(rng, "W1", (1, 4 * H1, I)), _tensor(rng, "R1", (1, 4 * H1, H1)), _tensor(rng, "B1", (1, 8 * H1), 0.5),
             _tensor(rng, "W2", (2, 3 * H2, H1)), _tensor(rng, "R2", (2, 3 * H2, H2)), _tensor(rng, "B2", (2, 6 * H2), 0.5),
             onnx.numpy_helper.from_array(np.array([1], np.int64), "ax1"),
             onnx.numpy_helper.from_array(np.array([0], np.int64), "ax0"),
             onnx.numpy_helper.from_array(np.array([0, 0, 2 * H2], np.int64), "seq_shape"),
             onnx.numpy_helper.from_array(np.array([-1, 2 * H2], np.int64), "state_shape"),
             onnx.numpy_helper.from_array(np.array(-1, np.int64), "last"),
             onnx.numpy_helper.from_array(np.array(0, np.int64), "first")]
    return _model(nodes, [_io("x", ["N", T if T else "T", I])], [_io("y", ["N", 4 * H2 + 2 * H2 + H1])], inits, 15)


def h_norm_ops(rng, T):
    from onnx import helper
    C = 6
    nodes = [helper.make_node("LayerNormalization", ["x", "g", "b"], ["ln"], axis=-1, epsilon=1e-3),
             helper.make_node("BatchNormalization", ["ln", "s", "bb", "mu", "var"], ["bn"], epsilon=1e-4),
             helper.make_node("Softmax", ["bn"], ["y"], axis=1)]
    inits = [_tensor(rng, "g", (C,), 1.0), _tensor(rng, "b", (C,), 0.5), _tensor(rng, "s", (C,), 1.0),
             _tensor(rng, "bb", (C,), 0.5), _tensor(rng, "mu", (C,), 0.5),
             onnx.numpy_helper.from_array(rng.uniform(0.5, 2.0, C).astype(np.float32), "var")]
    return _model(nodes, [_io("x", ["N", C])], [_io("y", ["N", C])], inits, 17)


def semantics_cases() -> list[Case]:
    return [
        Case("gemm_math_ops", "helper", h_gemm_math),
        Case("rnn_time_major_gru_before_reset", "helper", h_rnn_layouts, T=5, stream=True),
        Case("norm_ops_opset17", "helper", h_norm_ops),
        Case("rnn_directions", "helper", h_rnn_directions, T=6),
        Case("rnn_directions_variable_length", "helper", h_rnn_directions, window=6),
    ]


# ------------------------------------------------------------------------------------------------
# PyTorch builders (--torch).
# ------------------------------------------------------------------------------------------------
def torch_cases() -> list[Case]:
    import torch
    nn = torch.nn

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(9, 13), nn.ReLU(), nn.Linear(13, 7), nn.Tanh(),
                                     nn.Linear(7, 3), nn.Sigmoid())

        def forward(self, x):
            return self.net(x)

    class Conv(nn.Module):  # features-last input, transposed to NCW inside, as users write it
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv1d(3, 5, 3, stride=2, padding=1)
            self.c2 = nn.Conv1d(5, 4, 2, dilation=2)

        def forward(self, x):
            y = torch.relu(self.c1(x.transpose(1, 2)))
            return self.c2(y).transpose(1, 2)

    class Lstm(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(3, 5, num_layers=2, batch_first=True)
            self.head = nn.Linear(5, 2)

        def forward(self, x):
            y, _ = self.rnn(x)
            return self.head(y[:, -1, :])

    class Gru(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(4, 5, batch_first=True)

        def forward(self, x):
            _, h = self.rnn(x)
            return h[0]

    class Norms(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.ln, self.bn = nn.Linear(7, 11), nn.LayerNorm(11), nn.BatchNorm1d(11)
            self.fc2 = nn.Linear(11, 4)

        def forward(self, x):
            y = nn.functional.gelu(self.bn(self.ln(self.fc1(x))))
            return torch.softmax(self.fc2(y), dim=-1)

    class ConvNcw(nn.Module):  # channels-first model input straight into the conv: refused
        def __init__(self):
            super().__init__()
            self.c = nn.Conv1d(3, 4, 3)

        def forward(self, x):
            return self.c(x).flatten(1)

    class BiLstm(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(3, 4, batch_first=True, bidirectional=True)

        def forward(self, x):
            return self.rnn(x)[0][:, -1, :]

    class BiGruStacked(nn.Module):  # two bidirectional layers; the last step of Y and both final h
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(4, 5, num_layers=2, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(20, 3)

        def forward(self, x):
            y, h = self.rnn(x)
            return self.fc(torch.cat([y[:, -1, :], h[-2], h[-1]], dim=1))

    class DeepLobTiny(nn.Module):
        """DeepLOB as its PyTorch ports write it (NCHW input [B, 1, T, 4 x levels], 'same' convs,
        permute + reshape into the LSTM), at 2 levels and few channels, like k_deeplob_tiny."""

        def __init__(self):
            super().__init__()

            def conv(cin, cout, k, s=(1, 1), p=0):
                return nn.Sequential(nn.Conv2d(cin, cout, k, stride=s, padding=p), nn.LeakyReLU(0.01))

            self.blocks = nn.Sequential(
                conv(1, 4, (1, 2), (1, 2)), conv(4, 4, (4, 1), p="same"), conv(4, 4, (4, 1), p="same"),
                conv(4, 4, (1, 2), (1, 2)), conv(4, 4, (4, 1), p="same"), conv(4, 4, (4, 1), p="same"),
                conv(4, 4, (1, 2)), conv(4, 4, (4, 1), p="same"), conv(4, 4, (4, 1), p="same"))
            self.inc_a = nn.Sequential(conv(4, 4, (1, 1)), conv(4, 4, (3, 1), p=(1, 0)))
            self.inc_b = nn.Sequential(conv(4, 4, (1, 1)), conv(4, 4, (5, 1), p=(2, 0)))
            self.inc_c = nn.Sequential(nn.MaxPool2d((3, 1), stride=(1, 1), padding=(1, 0)), conv(4, 4, (1, 1)))
            self.lstm = nn.LSTM(12, 5, batch_first=True)
            self.fc = nn.Linear(5, 3)

        def features(self, x):  # [B, 1, T, 8] -> [B, T, 12]
            h = self.blocks(x)
            h = torch.cat([self.inc_a(h), self.inc_b(h), self.inc_c(h)], dim=1).permute(0, 2, 1, 3)
            return torch.reshape(h, (-1, h.shape[1], h.shape[2]))

        def forward(self, x):
            y, _ = self.lstm(self.features(x))
            return torch.softmax(self.fc(y[:, -1, :]), dim=-1)

    class DeepLobMultiHorizon(nn.Module):
        """DeepLOB-Seq2Seq / -Attention as a PyTorch port writes them (make_fixtures.py's
        deeplob_multi_horizon computes the same in Keras): DeepLobTiny's features encoded by an
        nn.LSTM whose (h, c) start a decoder nn.LSTM called once per horizon on a one-step input,
        concat(previous prediction, context); a shared Linear + softmax per horizon. Seq2Seq's
        context is the encoder's last h; Attention's is Luong dot attention over the encoder's
        sequence (bmm, softmax, bmm) and one BatchNorm1d per horizon on it."""

        def __init__(self, attention, horizons=3):
            super().__init__()
            self.attention, self.horizons = attention, horizons
            self.features = DeepLobTiny()
            self.encoder = nn.LSTM(12, 5, batch_first=True)
            self.decoder = nn.LSTM(3 + 5, 5, batch_first=True)
            self.head = nn.Linear(10, 3)
            self.norms = nn.ModuleList(nn.BatchNorm1d(5) for _ in range(horizons if attention else 0))

        def forward(self, x, start):
            encoded, (h, c) = self.encoder(self.features.features(x))
            context = h.transpose(0, 1)  # [B, 1, 5]
            step_in, state, predictions = torch.cat([start, context], dim=2), (h, c), []
            for k in range(self.horizons):
                out, state = self.decoder(step_in, state)
                if self.attention:
                    scores = torch.softmax(torch.bmm(out, encoded.transpose(1, 2)), dim=-1)
                    context = self.norms[k](torch.bmm(scores, encoded).transpose(1, 2)).transpose(1, 2)
                    prediction = torch.softmax(self.head(torch.cat([context, out], dim=2)), dim=-1)
                else:
                    prediction = torch.softmax(self.head(torch.cat([out, context], dim=2)), dim=-1)
                predictions.append(prediction)
                step_in = torch.cat([prediction, context], dim=2)
            return torch.cat(predictions, dim=1)

    class Encoder(nn.Module):  # one post-LN encoder layer over [B, T, d], mean over time, a head
        def __init__(self):
            super().__init__()
            self.enc = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
            self.head = nn.Linear(8, 3)

        def forward(self, x):
            return self.head(self.enc(x).mean(dim=1))

    class CausalMha(nn.Module):
        """Causal self-attention as users write it: a float -inf mask built in forward (the exporter
        writes ConstantOfShape / Trilu), then a bool mask with is_causal=True (Expand / Trilu /
        Equal / Where); the importer folds both to the constant added to the scores."""

        def __init__(self):
            super().__init__()
            self.inp = nn.Linear(5, 8)
            self.a1 = nn.MultiheadAttention(8, 2, batch_first=True)
            self.a2 = nn.MultiheadAttention(8, 4, batch_first=True)
            self.head = nn.Linear(8, 3)

        def forward(self, x):
            T = x.shape[1]
            h = self.inp(x)
            additive = torch.full((T, T), float("-inf"), dtype=h.dtype).triu(1)
            h = h + self.a1(h, h, h, attn_mask=additive, need_weights=False)[0]
            blocked = torch.ones(T, T, dtype=torch.bool).triu(1)
            h = h + self.a2(h, h, h, attn_mask=blocked, need_weights=False, is_causal=True)[0]
            return self.head(h.mean(dim=1))

    # The TorchScript exporter cannot export the fused fast path (lob-models facts, 5.4).
    torch.backends.mha.set_fastpath_enabled(False)
    global TORCH_UNSUPPORTED
    TORCH_UNSUPPORTED = [
        Case("torch_conv1d_channels_first", "torch", lambda T: ConvNcw(), T=8, in_shapes=[(3, None)],
             expect_error=["(Conv)", "not stored channels-last", "no transpose"]),
    ]
    return [
        Case("torch_mlp", "torch", lambda T: Mlp(), in_shapes=[(9,)]),
        Case("torch_norms", "torch", lambda T: Norms(), in_shapes=[(7,)]),
        Case("torch_mlp_dynamo", "torch", lambda T: Mlp(), in_shapes=[(9,)], dynamo=True),
        Case("torch_lstm_dynamo", "torch", lambda T: Lstm(), T=6, in_shapes=[(None, 3)], dynamo=True),
        Case("torch_gru_dynamo", "torch", lambda T: Gru(), T=5, in_shapes=[(None, 4)], dynamo=True),
        Case("torch_conv1d", "torch", lambda T: Conv(), T=13, in_shapes=[(None, 3)]),
        Case("torch_lstm_stacked", "torch", lambda T: Lstm(), T=6, stream=True, in_shapes=[(None, 3)]),
        Case("torch_gru", "torch", lambda T: Gru(), T=5, stream=True, in_shapes=[(None, 4)]),
        # bidirectional=True: one ONNX LSTM/GRU per layer with direction "bidirectional"; Y's
        # direction axis moved beside the hidden one and merged with it (Transpose + Reshape).
        Case("torch_lstm_bidirectional", "torch", lambda T: BiLstm(), T=5, in_shapes=[(None, 3)]),
        Case("torch_lstm_bidirectional_dynamo", "torch", lambda T: BiLstm(), T=5, in_shapes=[(None, 3)], dynamo=True),
        Case("torch_gru_bidirectional_stacked", "torch", lambda T: BiGruStacked(), T=6, in_shapes=[(None, 4)]),
        Case("torch_deeplob_tiny", "torch", lambda T: DeepLobTiny(), T=10, in_shapes=[(1, None, 8)]),
        Case("torch_deeplob_seq2seq", "torch", lambda T: DeepLobMultiHorizon(False), T=9,
             in_shapes=[(1, None, 8), (1, 3)]),
        Case("torch_deeplob_attention", "torch", lambda T: DeepLobMultiHorizon(True), T=9,
             in_shapes=[(1, None, 8), (1, 3)]),
        Case("torch_deeplob_attention_dynamo", "torch", lambda T: DeepLobMultiHorizon(True), T=9,
             in_shapes=[(1, None, 8), (1, 3)], dynamo=True),
        Case("torch_transformer_encoder", "torch", lambda T: Encoder(), T=6, in_shapes=[(None, 8)]),
        Case("torch_mha_causal", "torch", lambda T: CausalMha(), T=7, in_shapes=[(None, 5)]),
    ]


# ------------------------------------------------------------------------------------------------
# Weights, inputs, export, reference.
# ------------------------------------------------------------------------------------------------
def case_seed(name: str) -> int:
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def random_value(rng, name: str, shape) -> np.ndarray:
    shape = tuple(shape)
    if "moving_variance" in name:
        return rng.uniform(0.5, 2.0, shape)
    if "gamma" in name:
        return rng.uniform(0.5, 1.5, shape)
    if any(k in name for k in ("bias", "beta", "moving_mean")):
        return 0.5 * rng.standard_normal(shape)
    fan_in = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
    return rng.standard_normal(shape) / np.sqrt(max(fan_in, 1))


def randomize_keras(model, rng):
    for layer in model.layers:
        ws = layer.weights
        if ws:
            layer.set_weights([random_value(rng, w.path if hasattr(w, "path") else w.name, w.shape)
                               .astype(np.float32) for w in ws])


def make_input(rng, shape) -> np.ndarray:
    """[ROWS, *shape]: N(0,1) rows, a large row (+-[5, 20]), tiny values, zeros, negatives, a mix."""
    feat = tuple(shape)
    rows = [rng.standard_normal(feat) for _ in range(3)]
    rows.append(rng.choice([-1.0, 1.0], feat) * rng.uniform(5.0, 20.0, feat))
    rows.append(rng.choice([1e-30, -1e-30, 1e-7, -1e-7, 0.0], feat))
    rows.append(np.zeros(feat))
    rows.append(-np.abs(rng.standard_normal(feat)))
    pick = rng.randint(0, 3, feat)
    rows.append(np.select([pick == 0, pick == 1], [rng.standard_normal(feat), np.zeros(feat)],
                          rng.uniform(-8.0, 8.0, feat)))
    return np.stack(rows).astype(np.float32)


def ort_rows(path: Path, inputs: list[np.ndarray]) -> list[np.ndarray]:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    per_out = None
    for r in range(inputs[0].shape[0]):
        ys = sess.run(None, {n: x[r:r + 1] for n, x in zip(names, inputs)})
        per_out = per_out or [[] for _ in ys]
        for acc, y in zip(per_out, ys):
            acc.append(np.asarray(y, np.float32)[0])
    return [np.stack(a) for a in per_out]


def needed_atol(ref, got) -> float:
    return float(np.max(np.maximum(0.0, np.abs(got - ref) - RTOL * np.abs(ref)))) if ref.size else 0.0


class KerasSource:
    """A Keras model (either version) with its float64 twin for the noise floor."""

    def __init__(self, case: Case):
        self.case, self.K = case, keras_mods(case.kind)

    def build(self, T, floatx="float32"):
        K = self.K
        K.backend.clear_session()
        K.backend.set_floatx(floatx)
        try:
            return self.case.build(K, T)
        finally:
            K.backend.set_floatx("float32")

    def create(self, rng):
        self.model = self.build(None if self.case.window else self.case.T)
        randomize_keras(self.model, rng)
        self.weights = self.model.get_weights()
        T = self.case.window or self.case.T
        return [tuple(T if d is None else d for d in tuple(t.shape)[1:]) for t in self.model.inputs]

    def export(self, model, path: Path, T):
        if self.case.batch1:
            import tensorflow as tf
            import tf2onnx
            if len(model.inputs) == 1:
                spec = tf.TensorSpec((1,) + tuple(model.inputs[0].shape[1:]), tf.float32, name="x")
                fn = tf.function(lambda x: model(x, training=False), input_signature=[spec])
                tf2onnx.convert.from_function(fn, input_signature=[spec], opset=17, output_path=str(path))
            else:  # the inputs in Keras' order, as x0, x1, ...
                specs = [tf.TensorSpec((1,) + tuple(t.shape[1:]), tf.float32, name=f"x{i}") for i, t in enumerate(model.inputs)]
                fn = tf.function(lambda *x: model(list(x), training=False), input_signature=specs)
                tf2onnx.convert.from_function(fn, input_signature=specs, opset=17, output_path=str(path))
        elif self.case.kind == "k3":
            model([np.zeros((1,) + tuple(d or 1 for d in t.shape[1:]), np.float32) for t in model.inputs]
                  if len(model.inputs) > 1 else
                  np.zeros((1,) + tuple(d or 1 for d in model.inputs[0].shape[1:]), np.float32))
            model.export(str(path), format="onnx", verbose=False)
        else:
            import tensorflow as tf
            import tf2onnx
            spec = [tf.TensorSpec((None,) + tuple(i.shape[1:]), tf.float32, name=i.name.split(":")[0])
                    for i in model.inputs]
            tf2onnx.convert.from_keras(model, input_signature=spec, opset=15, output_path=str(path))

    def write(self, path: Path):
        self.export(self.model, path, None if self.case.window else self.case.T)

    def write_variable_length(self, path: Path):
        twin = self.build(None)
        twin.set_weights(self.weights)
        self.export(twin, path, None)

    def float64(self, inputs):
        m64 = self.build(None if self.case.window else self.case.T, "float64")
        m64.set_weights([w.astype(np.float64) for w in self.weights])
        outs = []
        for r in range(inputs[0].shape[0]):
            args = [x[r:r + 1].astype(np.float64) for x in inputs]
            y = m64(args if len(args) > 1 else args[0], training=False)
            outs.append([np.asarray(t)[0] for t in (y if isinstance(y, (list, tuple)) else [y])])
        return [np.stack([o[k] for o in outs]) for k in range(len(outs[0]))]


class TorchSource:
    def __init__(self, case: Case, dynamo: bool):
        self.case, self.dynamo = case, dynamo

    def create(self, rng):
        import torch
        torch.manual_seed(case_seed(self.case.name))
        self.model = self.case.build(self.case.T).eval()
        with torch.no_grad():
            for name, p in self.model.named_parameters():
                p.copy_(torch.from_numpy(random_value(rng, name, p.shape[::-1]).T.astype(np.float32).copy()))
            for name, b in self.model.named_buffers():  # BatchNorm statistics
                if b.dtype.is_floating_point:
                    key = name.replace("running_mean", "moving_mean").replace("running_var", "moving_variance")
                    b.copy_(torch.from_numpy(random_value(rng, key, b.shape).astype(np.float32)))
        return [tuple(self.case.T if d is None else d for d in s) for s in self.case.in_shapes]

    def _export(self, path: Path, T):
        import torch
        shapes = [(1,) + tuple((T or self.case.T) if d is None else d for d in s) for s in self.case.in_shapes]
        args = tuple(torch.zeros(s) for s in shapes)
        names = [f"x{i}" for i in range(len(shapes))]
        axes = {n: ({0: "batch", 1: "time"} if T is None and None in s else {0: "batch"})
                for n, s in zip(names, self.case.in_shapes)}
        if self.dynamo:  # fixed shapes (the batch becomes 1), as a plain dynamo export writes them
            torch.onnx.export(self.model, args, str(path), input_names=names, output_names=["y"],
                              dynamo=True, external_data=False)
        else:
            torch.onnx.export(self.model, args, str(path), input_names=names, output_names=["y"],
                              dynamic_axes=axes, dynamo=False)

    def write(self, path: Path):
        self._export(path, self.case.T)

    def write_variable_length(self, path: Path):
        self._export(path, None)

    def float64(self, inputs):
        import copy
        import torch
        m64 = copy.deepcopy(self.model).double()
        with torch.no_grad():
            outs = [m64(*[torch.from_numpy(x[r:r + 1].astype(np.float64)) for x in inputs]).numpy()[0]
                    for r in range(inputs[0].shape[0])]
        return [np.stack(outs)]


class HelperSource:
    def __init__(self, case: Case):
        self.case = case

    def create(self, rng):
        self.rng_state = rng.get_state()
        self.model = self.case.build(rng, self.case.T)
        dims = [[d.dim_value or None for d in i.type.tensor_type.shape.dim] for i in self.model.graph.input]
        return [tuple((self.case.T or self.case.window) if d is None else d for d in ds[1:]) for ds in dims]

    def write(self, path: Path):
        onnx.save(self.model, str(path))

    def write_variable_length(self, path: Path):
        rng = np.random.RandomState()
        rng.set_state(self.rng_state)  # the same weights
        onnx.save(self.case.build(rng, None), str(path))

    def float64(self, inputs):
        return None


def strip_debug_info(path: Path):
    """Drops doc strings and metadata (the dynamo exporter records Python stack traces with
    the machine's file paths in them); the computation is untouched."""
    m = onnx.load(str(path))

    def clean(g):
        g.doc_string = ""
        for n in g.node:
            n.doc_string = ""
            del n.metadata_props[:]
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    clean(a.g)
        for vi in list(g.input) + list(g.output) + list(g.value_info):
            vi.doc_string = ""
            del vi.metadata_props[:]
        for t in g.initializer:
            t.doc_string = ""
            del t.metadata_props[:]
        del g.metadata_props[:]

    m.doc_string = ""
    del m.metadata_props[:]
    clean(m.graph)
    onnx.save(m, str(path))


def save_npy(path: Path, a):
    np.save(path, np.ascontiguousarray(a, dtype=np.float32))


def make_case(case: Case, root: Path, rel: str, dynamo: bool) -> dict:
    seed = case_seed(case.name)
    rng = np.random.RandomState(seed)
    if case.kind == "torch":
        src = TorchSource(case, dynamo or case.dynamo)
    elif case.kind == "helper":
        src = HelperSource(case)
    else:
        src = KerasSource(case)
    if case.kind in ("k3", "k2"):
        src.K.utils.set_random_seed(seed)
    in_shapes = src.create(rng)
    d = root / rel
    d.mkdir(parents=True, exist_ok=True)
    model_file = d / "model.onnx"
    src.write(model_file)
    strip_debug_info(model_file)
    if not case.expect_error:
        onnx.checker.check_model(str(model_file))
    m = onnx.load(str(model_file))
    entry = {"name": case.name,
             "format": "onnx-" + {"k3": "keras3", "k2": "tf_keras", "torch": "torch", "helper": "onnx.helper"}[case.kind],
             "file": f"{rel}/model.onnx",
             "opset": max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx")),
             "producer": f"{m.producer_name} {m.producer_version}".strip(),
             "ops": sorted({n.op_type for n in m.graph.node})}
    if case.expect_error:
        entry["expect_error_contains"] = case.expect_error
        return entry
    in_rng = np.random.RandomState(seed ^ 0x5EED)
    inputs = [make_input(in_rng, s) for s in in_shapes]
    outs = ort_rows(model_file, inputs)
    ref64 = src.float64(inputs) or outs
    for o, r in zip(outs, ref64):
        if not np.all(np.isfinite(o)):
            raise SystemExit(f"{case.name}: non-finite reference output")
        if not np.allclose(o, r, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(r).max()))):
            raise SystemExit(f"{case.name}: onnxruntime disagrees with the source framework")
    max_abs = max(float(np.abs(o).max()) for o in outs)
    noise = max(needed_atol(r.astype(np.float64), o.astype(np.float64)) for o, r in zip(outs, ref64))
    atol = max(1e-6 * max_abs, 4.0 * noise, 1e-30)
    entry.update({"seed": seed, "inputs": [], "outputs": [], "rtol": RTOL,
                  "atol": float(f"{atol:.3g}"), "stream": None})
    for i, x in enumerate(inputs):
        save_npy(d / f"in{i}.npy", x)
        entry["inputs"].append(f"{rel}/in{i}.npy")
    for i, y in enumerate(outs):
        save_npy(d / f"out{i}.npy", y)
        entry["outputs"].append(f"{rel}/out{i}.npy")
    if case.window:
        entry["window_length"] = case.window  # the model's time axis is symbolic
    if case.stream:
        entry["stream"] = make_stream(case, src, in_rng, d, rel, atol, outs)
    return entry


def make_stream(case, src, rng, d: Path, rel: str, atol: float, window_outs) -> dict:
    """stream_out[n, t] = onnxruntime on the prefix x[n, :t+1] (variable-length twin)."""
    with tempfile.TemporaryDirectory() as tmp:
        twin = Path(tmp) / "twin.onnx"
        src.write_variable_length(twin)
        feat = None
        m = onnx.load(str(twin))
        dims = m.graph.input[0].type.tensor_type.shape.dim
        feat = tuple(x.dim_value for x in dims[2:])
        steps = case.T or case.window
        x = make_input(rng, (steps,) + feat)
        out = np.stack([np.stack([ort_rows(twin, [x[n:n + 1, :t + 1]])[0][0] for t in range(steps)])
                        for n in range(x.shape[0])])
        full = ort_rows(d / "model.onnx", [x])[0]
        if not np.allclose(out[:, -1], full, rtol=RTOL, atol=atol):
            raise SystemExit(f"{case.name}: the variable-length twin disagrees with the model")
    save_npy(d / "stream_in.npy", x)
    save_npy(d / "stream_out.npy", out)
    s_atol = max(atol, 1e-6 * float(np.abs(out).max()))
    return {"inputs": f"{rel}/stream_in.npy", "outputs": f"{rel}/stream_out.npy", "atol": float(f"{s_atol:.3g}")}


def versions(torch_run: bool) -> dict:
    v = {"onnx": onnx.__version__, "onnxruntime": ort.__version__, "numpy": np.__version__}
    if torch_run:
        import torch
        v["torch"] = torch.__version__
    else:
        import keras
        import tensorflow as tf
        import tf2onnx
        import tf_keras
        v.update({"tensorflow": tf.__version__, "keras": keras.__version__, "tf_keras": tf_keras.__version__,
                  "tf2onnx": tf2onnx.__version__})
    return v


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--torch", action="store_true", help="write the PyTorch cases (merged into DIR's manifest)")
    p.add_argument("--torch-dynamo", action="store_true", help="with --torch: the dynamo exporter")
    p.add_argument("--only", nargs="+", metavar="NAME")
    a = p.parse_args(argv)
    cases, unsupported = ((torch_cases(), TORCH_UNSUPPORTED) if a.torch else
                          (tf2onnx_cases() + semantics_cases(), tf2onnx_unsupported()))
    want = set(a.only or [])
    a.out.mkdir(parents=True, exist_ok=True)
    mpath = a.out / "manifest.json"
    manifest = json.loads(mpath.read_text()) if mpath.exists() else {}
    manifest.setdefault("suite", "onnx")
    manifest.setdefault("generator", {}).update(versions(a.torch))
    manifest["reference"] = ("onnxruntime (CPU, 1 thread, optimizations off), one batch-1 call per row on the "
                             "written file; pass if |got-ref| <= atol + rtol*|ref| elementwise")
    names = {c.name for c in cases + unsupported if not want or c.name in want}  # the ones rewritten
    keep = [c for c in manifest.get("cases", []) if c["name"] not in names]
    keep_u = [c for c in manifest.get("unsupported", []) if c["name"] not in names]
    for c in cases:
        if want and c.name not in want:
            continue
        print(f"[onnx] {c.name}", flush=True)
        keep.append(make_case(c, a.out, c.name, a.torch_dynamo))
    for c in unsupported:
        if want and c.name not in want:
            continue
        print(f"[onnx] unsupported/{c.name}", flush=True)
        keep_u.append(make_case(c, a.out, f"unsupported/{c.name}", a.torch_dynamo))
    manifest["cases"], manifest["unsupported"] = keep, keep_u
    mpath.write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
