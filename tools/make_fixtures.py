#!/usr/bin/env python3
"""Build the reference fixtures: small Keras models with random weights and the outputs that
real TensorFlow/Keras computes for them.

Why this script exists: the engine's correctness is anchored outside the project. Every expected
output here comes from the framework that wrote the model file, never from our own code.

Usage:
  make_fixtures.py --out DIR [--bench-out DIR] [--book-bench-out DIR] [--book-multi-horizon-out DIR]
                   [--only NAME...]
                                                                   write fixture suites
  make_fixtures.py --check DIR                                     regenerate and compare

For each case the script builds the model, randomizes every weight (kernels, biases, BatchNorm
moving statistics, normalization gamma/beta), saves it (Keras 3 `.keras` or Keras 2 / tf_keras
legacy `.h5`), loads the saved file back and computes the expected outputs from the *reloaded*
model, so the outputs describe exactly what the file says.

Reference evaluation: `model(x[i:i+1], training=False)` row by row (batch size 1), which matches
the engine's per-row runs. Layout written under DIR:
  DIR/manifest.json, DIR/<case>/{model.keras|model.h5, in*.npy, out*.npy[, stream_*.npy, slide_*.npy]},
  DIR/unsupported/<case>/model.* (models the engine must reject with a named error).

Tolerance (per case, in the manifest): rtol is 1e-5. atol is an absolute floor for outputs that
are near zero through cancellation, where a relative bound means nothing. It is the larger of
1e-6 * max|out| and 4x the float32 rounding noise of Keras itself, measured by running the same
weights and inputs through a float64 copy of the model (the smallest atol that lets Keras'
float32 result pass against float64 at rtol 1e-5). An engine that is as accurate as Keras passes;
a wrong weight, activation or option is off by orders of magnitude more.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

# Must be set before TensorFlow is imported: quiet logs, CPU only, no oneDNN reordering of
# float sums, single-threaded kernels, so the same seeds give the same bits.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["CUDA_VISIBLE_DEVICES"] = ""
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
os.environ["TF_DETERMINISTIC_OPS"] = "1"
os.environ.pop("TF_USE_LEGACY_KERAS", None)  # `keras` must be Keras 3, `tf_keras` Keras 2
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
import tf_keras  # noqa: E402

tf.get_logger().setLevel("ERROR")
tf_keras.utils.disable_interactive_logging()
try:
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
except RuntimeError:  # imported (for its model builders) by a script whose TensorFlow already runs
    pass

ROWS = 8  # leading batch dim N of every in*/out* array
RTOL = 1e-5

# Activation identifiers accepted by both Keras versions. gelu(approximate=True) is absent: in
# both versions `Activation`/`activation=` store the function by name only, so the approximate
# form cannot be expressed in a saved model without a Lambda layer (which we do not support).
ACTIVATIONS = ["linear", "relu", "relu6", "leaky_relu", "elu", "selu", "sigmoid", "hard_sigmoid",
               "tanh", "softmax", "gelu", "swish", "silu", "softplus", "softsign"]


# ------------------------------------------------------------------------------------------------
# Framework adapter: one builder function serves both Keras versions.
# ------------------------------------------------------------------------------------------------
@dataclass
class Kit:
    """What a builder needs from one Keras version. `fmt` is "keras3" or "keras2"."""
    fmt: str
    K: object  # the keras module (keras or tf_keras)

    @property
    def L(self):
        return self.K.layers

    def leaky_relu(self, slope: float, **kw):
        # Keras 3 spells the slope `negative_slope`; Keras 2 spells it `alpha`.
        if self.fmt == "keras3":
            return self.L.LeakyReLU(negative_slope=slope, **kw)
        return self.L.LeakyReLU(alpha=slope, **kw)

    def model(self, inputs, outputs):
        return self.K.Model(inputs, outputs)

    def seq(self, input_shape, layers):
        return self.K.Sequential([self.K.Input(input_shape)] + layers)


KITS = {"keras3": Kit("keras3", keras), "keras2": Kit("keras2", tf_keras)}
FILE_NAME = {"keras3": "model.keras", "keras2": "model.h5"}


@dataclass
class Case:
    """One fixture. `build(kit, T)` returns a model; T is the sequence length (None for the
    variable-length streaming clone; ignored by non-sequence models)."""
    name: str
    fmt: str
    build: Callable
    T: int | None = None
    stream: bool = False  # recurrent-only sequence part whose last output is not a sequence
    large: tuple = (20.0, 50.0)  # |value| range of the "large magnitude" input entries
    stream_T: int | None = None  # prefix count for stream fixtures (default T)
    window: int | None = None  # T is None (variable length): the window the inputs use
    expect_error: list = field(default_factory=list)  # unsupported cases only
    slide: int = 0  # > 0: a sliding-window fixture of slide + 1 windows (incremental updates)


# ------------------------------------------------------------------------------------------------
# Model builders. Keep every test model tiny; names are explicit only where a test looks for them.
# ------------------------------------------------------------------------------------------------
def b_dense_act(k, T):
    x = k.K.Input((10,))
    h = k.L.Dense(12, activation="relu")(x)
    h = k.L.Dense(12, use_bias=False)(h)
    h = k.L.Activation("tanh")(h)
    return k.model(x, k.L.Dense(4, activation="sigmoid")(h))


def _activation_fanout(k, as_layer: bool, acts):
    # One Dense branch per activation, concatenated: every activation sees the same varied
    # pre-activations (including large and tiny ones) without feeding into the next.
    x = k.K.Input((6,))
    branches = []
    for act in acts:
        if as_layer:
            branches.append(k.L.Activation(act)(k.L.Dense(5)(x)))
        else:
            branches.append(k.L.Dense(5, activation=act)(x))
    return k.model(x, k.L.Concatenate()(branches))


def b_activation_layers(k, T):
    return _activation_fanout(k, True, ACTIVATIONS)


def b_dense_activations(k, T):
    return _activation_fanout(k, False, ACTIVATIONS)


def b_exponential(k, T):
    # Separate case so exp's large outputs do not set the atol floor of the other activations;
    # the tanh keeps exp's arguments within a few units even for the large input rows.
    x = k.K.Input((4,))
    h = k.L.Dense(3)(k.L.Dense(4, activation="tanh")(x))
    a = k.L.Activation("exponential")(h)
    b = k.L.Dense(3, activation="exponential")(h)
    return k.model(x, k.L.Concatenate()([a, b]))


def b_relu_layers(k, T):
    return k.seq((8,), [
        k.L.Dense(12), k.L.ReLU(max_value=6.0, negative_slope=0.1, threshold=0.5),
        k.L.Dense(12), k.L.ReLU(),
        k.L.Dense(12), k.L.ReLU(max_value=3.0, threshold=0.25),
        k.L.Dense(12), k.leaky_relu(0.15),
        k.L.Dense(12), k.L.ELU(alpha=0.7),
        k.L.Dense(6), k.L.Softmax(),
    ])


def b_batchnorm(k, T):
    return k.seq((10,), [
        k.L.Dense(16), k.L.BatchNormalization(),  # linear Dense -> foldable into the Dense
        k.L.Dense(16, activation="relu"), k.L.BatchNormalization(center=False),  # not foldable
        k.L.Dense(12, activation="relu"), k.L.BatchNormalization(scale=False, epsilon=1e-2),
        k.L.Dense(8), k.L.BatchNormalization(center=False, scale=False),
        k.L.Dense(3),
    ])


def b_layernorm(k, T):
    return k.seq((10,), [
        k.L.Dense(16), k.L.LayerNormalization(),
        k.L.Dense(16, activation="relu"), k.L.LayerNormalization(center=False, epsilon=1e-2),
        k.L.Dense(12), k.L.LayerNormalization(scale=False),
        k.L.Dense(8), k.L.LayerNormalization(center=False, scale=False, epsilon=1e-5),
        k.L.Dense(3),
    ])


def b_dense_seq(k, T):
    # Dense on a [T, C] input acts on the last axis; LayerNorm per time step; then Flatten.
    return k.seq((T, 6), [
        k.L.Dense(8, activation="relu"), k.L.Dense(5, use_bias=False),
        k.L.LayerNormalization(), k.L.Flatten(), k.L.Dense(3),
    ])


def b_inference_noops(k, T):
    return k.seq((8,), [
        k.L.Dense(16, activation="relu"), k.L.Dropout(0.5), k.L.GaussianNoise(0.3),
        k.L.ActivityRegularization(l1=0.01, l2=0.01), k.L.Dense(4),
    ])


def b_lstm_last(k, T):
    return k.seq((T, 4), [k.L.Dense(6, activation="relu"), k.L.LSTM(8), k.L.Dense(3)])


def b_lstm_seq(k, T):
    return k.seq((T, 4), [k.L.LSTM(8, return_sequences=True), k.L.Dense(2)])


def b_lstm_stacked(k, T):
    return k.seq((T, 4), [
        k.L.LSTM(8, return_sequences=True, use_bias=False),
        k.L.LSTM(6, recurrent_activation="hard_sigmoid", activation="relu"),
        k.L.Dense(2),
    ])


def b_gru_reset_after(k, T):
    return k.seq((T, 4), [k.L.GRU(8, reset_after=True), k.L.Dense(2)])


def b_gru_reset_before(k, T):
    return k.seq((T, 4), [k.L.GRU(8, reset_after=False), k.L.Dense(2)])


def b_gru_stacked(k, T):
    return k.seq((T, 4), [
        k.L.GRU(8, return_sequences=True),
        k.L.GRU(6, reset_after=False, use_bias=False, activation="relu"),
        k.L.Dense(2),
    ])


def b_gru_seq(k, T):
    return k.seq((T, 4), [k.L.GRU(6, return_sequences=True, reset_after=False),
                          k.L.Dense(2, activation="tanh")])


def b_conv1d(k, T):
    # Lengths: 16 -valid k3-> 14 -same s2-> 7 -causal d2-> 7 -causal d4-> 7 -valid s2 d1-> 3.
    return k.seq((T, 3), [
        k.L.Conv1D(6, 3, padding="valid"),
        k.L.Conv1D(6, 3, padding="same", strides=2),
        k.L.Conv1D(5, 3, padding="causal", dilation_rate=2, activation="relu"),
        k.L.Conv1D(4, 2, padding="causal", dilation_rate=4, use_bias=False),
        k.L.Conv1D(4, 2, padding="valid", strides=2, activation="tanh"),
        k.L.Flatten(), k.L.Dense(3),
    ])


def b_conv2d(k, T):
    # A book-shaped input, T snapshots x 8 levels x 2 (price, size), through the Conv2D forms the
    # book models use. Shapes: (T,8,2) -(1,2) s(1,2)-> (T,4,4) -(3,1) same-> (T,4,4) [BatchNorm
    # folds into it] -(2,2) valid d(2,1)-> (T-2,3,3) -(3,3) same s2-> (ceil((T-2)/2),2,2).
    return k.seq((T, 8, 2), [
        k.L.Conv2D(4, (1, 2), strides=(1, 2), activation="relu"),
        k.L.Conv2D(4, (3, 1), padding="same", use_bias=False),
        k.L.BatchNormalization(),
        k.L.Conv2D(3, (2, 2), padding="valid", dilation_rate=(2, 1), activation="tanh"),
        k.L.Conv2D(2, (3, 3), padding="same", strides=2),
        k.L.Flatten(), k.L.Dense(3),
    ])


def b_conv2d_wide(k, T):
    # Conv2D with more than 4 filters (the blocked GEMM path, not the dot form): along the width
    # with padding, width-dilated, a 1 x W merge, then down a one-pixel-wide column with padding.
    # (T,10,3) -(3,2) same s(1,2)-> (T,5,7) -(2,3) same d(1,2)-> (T,5,6) -(1,5)-> (T,1,9)
    # -(3,1) same-> (T,1,5).
    return k.seq((T, 10, 3), [
        k.L.Conv2D(7, (3, 2), strides=(1, 2), padding="same", activation="relu"),
        k.L.Conv2D(6, (2, 3), dilation_rate=(1, 2), padding="same"),
        k.L.Conv2D(9, (1, 5), activation="tanh"),
        k.L.Conv2D(5, (3, 1), padding="same"),
        k.L.Flatten(), k.L.Dense(2),
    ])


def b_depthwise(k, T):
    # DepthwiseConv2D with a depth multiplier, same padding and a fused relu, then dilated without
    # a bias; SeparableConv2D strided with same padding, and one with a multiplier of its own.
    # (T,6,3) -(3,2) m2 same-> (T,6,6) -(2,2) d(2,1)-> (T-2,5,6) -sep (3,3) s2 same m2->
    # (ceil((T-2)/2),3,5) -sep (1,2)-> (.,2,4).
    return k.seq((T, 6, 3), [
        k.L.DepthwiseConv2D((3, 2), depth_multiplier=2, padding="same", activation="relu"),
        k.L.DepthwiseConv2D((2, 2), dilation_rate=(2, 1), use_bias=False),
        k.L.SeparableConv2D(5, (3, 3), strides=2, padding="same", depth_multiplier=2, activation="tanh"),
        k.L.SeparableConv2D(4, (1, 2), activation="relu"),
        k.L.Flatten(), k.L.Dense(2),
    ])


def b_pool2d(k, T):
    # MaxPooling2D and AveragePooling2D in valid and same forms, with strides apart per axis:
    # (T,6,3) -max (2,3) s(1,2) same-> (T,3,3) -avg (3,2) s(2,1) same-> (ceil(T/2),3,3)
    # -avg 2x2 valid-> (floor((ceil(T/2)-2)/2)+1,1,3).
    return k.seq((T, 6, 3), [
        k.L.Conv2D(3, (1, 1), activation="tanh"),
        k.L.MaxPooling2D((2, 3), strides=(1, 2), padding="same"),
        k.L.AveragePooling2D((3, 2), strides=(2, 1), padding="same"),
        k.L.AveragePooling2D(2),
        k.L.Flatten(), k.L.Dense(2),
    ])


def deeplob_features(k, T, conv, inception, levels):
    """DeepLOB's input (T, 4 x levels, 1) and its convolution and Inception blocks up to the
    Reshape to (T, 3 x inception), every Conv2D followed by LeakyReLU(0.01) (deeplob() below)."""
    def conv2d(h, filters, kernel, strides=(1, 1), padding="valid"):
        return k.leaky_relu(0.01)(k.L.Conv2D(filters, kernel, strides=strides, padding=padding)(h))

    x = k.K.Input((T, 4 * levels, 1))
    h = x
    for kernel, strides in (((1, 2), (1, 2)), ((1, 2), (1, 2)), ((1, levels), (1, 1))):
        h = conv2d(h, conv, kernel, strides)
        h = conv2d(h, conv, (4, 1), padding="same")
        h = conv2d(h, conv, (4, 1), padding="same")
    a = conv2d(conv2d(h, inception, (1, 1), padding="same"), inception, (3, 1), padding="same")
    b = conv2d(conv2d(h, inception, (1, 1), padding="same"), inception, (5, 1), padding="same")
    c = k.L.MaxPooling2D((3, 1), strides=(1, 1), padding="same")(h)
    c = conv2d(c, inception, (1, 1), padding="same")
    m = k.L.Concatenate(axis=3)([a, b, c])
    return x, k.L.Reshape((T, 3 * inception))(m)


def deeplob(conv, inception, lstm, levels, mc_dropout=True):
    """DeepLOB as its authors' Keras code builds it (lob-models facts, 1.2): three Conv2D blocks
    (1x2 stride 2, 1x2 stride 2, 1 x levels; each then two 4x1 `same`), every Conv2D followed by
    LeakyReLU(0.01); an Inception module (1x1 -> 3x1, 1x1 -> 5x1, 3x1 max pool -> 1x1) concatenated
    on channels; Reshape to (T, 3 x inception); Dropout called with training=True (Monte Carlo
    dropout, saved in the call); LSTM; Dense(3, softmax). Input (T, 4 x levels, 1). tf_keras
    honours a call's training=True at inference too (a random output), so its form drops the flag
    (mc_dropout=False)."""
    def build(k, T):
        x, m = deeplob_features(k, T, conv, inception, levels)
        dropout = k.L.Dropout(0.2, noise_shape=(None, 1, 3 * inception))
        m = dropout(m, training=True) if mc_dropout else dropout(m)
        m = k.L.LSTM(lstm)(m)
        return k.model(x, k.L.Dense(3, activation="softmax")(m))
    return build


def deeplob_multi_horizon(conv, inception, lstm, levels, horizons=5, attention=False):
    """DeepLOB-Seq2Seq / DeepLOB-Attention (lob-models facts, section 2): DeepLOB's convolution
    and inception blocks encoded by an LSTM (return_state; with attention also its sequence), a
    second input (the decoder's start, [1, 3]), one LSTM(return_sequences, return_state) called
    once per horizon from the previous call's state, fed concat(previous prediction, context);
    one shared Dense(3, softmax) per horizon. Seq2Seq's context is the encoder's last h;
    Attention's is Luong dot attention over the encoder's sequence (Dot, softmax, Dot) with a
    BatchNormalization on it. The authors join the horizons with a Lambda (Python code, which no
    other runtime loads); here a Concatenate on the time axis, which computes the same [horizons, 3]."""
    def build(k, T):
        x, m = deeplob_features(k, T, conv, inception, levels)
        encoder_out, state_h, state_c = k.L.LSTM(lstm, return_state=True, return_sequences=attention)(m)
        start = k.K.Input((1, 3))
        decoder = k.L.LSTM(lstm, return_sequences=True, return_state=True)
        head = k.L.Dense(3, activation="softmax")
        context = k.L.Reshape((1, lstm))(state_h)
        step_in = k.L.Concatenate(axis=2)([start, context])
        states, outputs = [state_h, state_c], []
        for _ in range(horizons):
            out, h_t, c_t = decoder(step_in, initial_state=states)
            if attention:
                scores = k.L.Activation("softmax")(k.L.Dot(axes=2)([out, encoder_out]))
                context = k.L.BatchNormalization(momentum=0.6)(k.L.Dot(axes=[2, 1])([scores, encoder_out]))
                prediction = head(k.L.Concatenate(axis=2)([context, out]))
            else:
                prediction = head(k.L.Concatenate(axis=2)([out, context]))
            outputs.append(prediction)
            step_in = k.L.Concatenate(axis=2)([prediction, context])
            states = [h_t, c_t]
        return k.model([x, start], k.L.Concatenate(axis=1)(outputs))
    return build


def b_attention(k, T):
    """MultiHeadAttention in its call forms: self-attention with a causal mask (one projection
    over [q | k | v] in the plan), cross-attention with the key taken from the value, value_dim
    and output_shape of their own and no biases, and a key apart from the value (three inputs,
    of different widths)."""
    x = k.K.Input((T, 4))
    h = k.L.Dense(8)(x)
    a = k.L.MultiHeadAttention(2, 4, name="self_attn")(h, h, use_causal_mask=True)
    h2 = k.L.LayerNormalization()(k.L.Add()([h, a]))
    c = k.L.MultiHeadAttention(3, 2, value_dim=5, output_shape=6, use_bias=False, name="cross_attn")(h2, x)
    kv = k.L.MultiHeadAttention(1, 3, name="key_apart")(h2, x, h)
    m = k.L.Concatenate()([c, kv])
    return k.model(x, k.L.Dense(3)(k.L.GlobalAveragePooling1D()(m)))


def b_attention_long(k, T):
    """Causal attention over more query rows than one block of the plan (16), with value widths
    in each packed form: 3 (dot form), 8 (one panel), 20 (several panels); and one not causal."""
    x = k.K.Input((T, 5))
    h = k.L.Dense(12)(x)
    outs = [k.L.MultiHeadAttention(2, 3, value_dim=v)(h, h, use_causal_mask=True) for v in (3, 8, 20)]
    outs.append(k.L.MultiHeadAttention(2, 4, value_dim=20)(h, x))
    m = k.L.Concatenate()(outs)
    return k.model(x, k.L.Dense(2)(k.L.GlobalAveragePooling1D()(m)))


def b_attention_window(k, T):
    """Sliding-window attention (MultiHeadAttention's sliding_window: |i - j| < w): a causal one
    over more rows than one block of the plan (16), whose span cuts rows from the front, and one
    not causal, whose span cuts both sides."""
    x = k.K.Input((T, 5))
    h = k.L.Dense(8)(x)
    a = k.L.MultiHeadAttention(2, 3, sliding_window=5)(h, h, use_causal_mask=True)
    b = k.L.MultiHeadAttention(2, 4, sliding_window=3)(h, h)
    m = k.L.Concatenate()([a, b])
    return k.model(x, k.L.Dense(2)(k.L.GlobalAveragePooling1D()(m)))


def b_attention_stream(k, T):
    """A causal Transformer layer with a fixed attention span feeding an LSTM: it streams, one
    tick per call, with the span's key and value rows cached between calls."""
    x = k.K.Input((T, 4))
    h = k.L.Dense(6)(x)
    a = k.L.MultiHeadAttention(2, 3, sliding_window=3)(h, h, use_causal_mask=True)
    h = k.L.LayerNormalization()(k.L.Add()([h, a]))
    return k.model(x, k.L.Dense(3)(k.L.LSTM(5)(h)))


def b_layout(k, T):
    """Padding and axis moves: ZeroPadding1D on the time axis, Permute to (features, time) and a
    TimeDistributed(Dense) over the features' rows, Permute back; ZeroPadding2D in its three
    spellings before a Conv2D over a (time, features, 1) view."""
    x = k.K.Input((T, 5))
    h = k.L.ZeroPadding1D((2, 1))(x)
    h = k.L.Permute((2, 1))(h)
    h = k.L.TimeDistributed(k.L.Dense(4, activation="tanh"))(h)
    h = k.L.Permute((2, 1))(h)
    g = k.L.Reshape((4, 5, 1))(h)
    g = k.L.ZeroPadding2D(1)(g)
    g = k.L.ZeroPadding2D((2, 0))(g)
    g = k.L.ZeroPadding2D(((0, 1), (2, 1)))(g)
    g = k.L.Conv2D(3, (3, 2), activation="relu")(g)
    return k.model(x, k.L.Dense(2)(k.L.Flatten()(g)))


def b_array_operations(k, T):
    """Keras 3 operations with array arguments (operation nodes, the arrays inline): a table added
    after a channel of zeros (TransLOB's position ramp), a table minus the tensor, the tensor
    times a per-channel row (broadcast over time)."""
    x = k.K.Input((T, 4))
    h = position_ramp(k.L.Dense(3)(x), T, 3)
    h = keras.ops.subtract(np.linspace(-0.5, 0.5, T * 4, dtype=np.float32).reshape(T, 4), h)
    h = keras.ops.multiply(h, np.array([0.5, -1.0, 2.0, 0.25], np.float32))
    return k.model(x, k.L.Dense(2)(k.L.GlobalAveragePooling1D()(h)))


def transformer_encoder(heads, key_dim, ff, blocks, dropout=0.1, features=6, dense=16):
    """The keras.io time-series transformer (lob-models facts, 4.4; pre-LN): per block
    x + Dropout(MHA(LN(x), LN(x))), then + Conv1D(d, 1)(Dropout(Conv1D(ff, 1, relu)(LN(.)))), eps
    1e-6; GlobalAveragePooling1D, Dense(dense, relu), Dropout, Dense(3, softmax). dropout > 0 is
    Keras' other attention path (the query scaled before the scores)."""
    def build(k, T):
        x = k.K.Input((T, features))
        h = x
        for _ in range(blocks):
            n = k.L.LayerNormalization(epsilon=1e-6)(h)
            n = k.L.MultiHeadAttention(heads, key_dim, dropout=dropout)(n, n)
            r = k.L.Add()([h, k.L.Dropout(dropout)(n)])
            n = k.L.LayerNormalization(epsilon=1e-6)(r)
            n = k.L.Conv1D(ff, 1, activation="relu")(n)
            n = k.L.Conv1D(features, 1)(k.L.Dropout(dropout)(n))
            h = k.L.Add()([r, n])
        h = k.L.GlobalAveragePooling1D(data_format="channels_last")(h)
        h = k.L.Dropout(dropout)(k.L.Dense(dense, activation="relu")(h))
        return k.model(x, k.L.Dense(3, activation="softmax")(h))
    return build


def position_ramp(h, T, width):
    """TransLOB's position channel in Keras 3 operations (lob-models facts, 3 and 4.3): one zero
    channel appended by keras.ops.pad, then a constant table added whose last channel is a ramp
    from -1 (oldest) to +1 (newest). Saved as two operation nodes, the table inline."""
    table = np.zeros((T, width + 1), np.float32)
    table[:, width] = np.linspace(-1.0, 1.0, T, dtype=np.float32)
    return keras.ops.pad(h, [[0, 0], [0, 0], [0, 1]]) + table


def translob(levels, filters, heads, key_dim, ff, dense):
    """TransLOB in Keras 3 built-ins (lob-models facts, 3): five causal Conv1D(filters, 2, relu)
    dilated 1..16 over the book columns, LayerNormalization (eps 1e-5), the position channel
    (d = filters + 1), then one post-LN block applied twice with shared weights (masked
    self-attention without biases, residual, LN, feed-forward, residual, LN), Flatten,
    Dense(dense, relu), Dropout, Dense(3, softmax)."""
    def build(k, T):
        x = k.K.Input((T, 4 * levels))
        h = x
        for d in (1, 2, 4, 8, 16):
            h = k.L.Conv1D(filters, 2, padding="causal", dilation_rate=d, activation="relu")(h)
        h = position_ramp(k.L.LayerNormalization(epsilon=1e-5)(h), T, filters)
        attn = k.L.MultiHeadAttention(heads, key_dim, use_bias=False)
        ln1, ln2 = k.L.LayerNormalization(epsilon=1e-5), k.L.LayerNormalization(epsilon=1e-5)
        ff1, ff2 = k.L.Dense(ff, activation="relu"), k.L.Dense(filters + 1)
        for _ in range(2):
            h = ln1(k.L.Add()([h, attn(h, h, use_causal_mask=True)]))
            h = ln2(k.L.Add()([h, ff2(ff1(h))]))
        h = k.L.Dropout(0.1)(k.L.Dense(dense, activation="relu")(k.L.Flatten()(h)))
        return k.model(x, k.L.Dense(3, activation="softmax")(h))
    return build


def b_conv1d_same_dilated(k, T):
    return k.seq((T, 2), [
        k.L.Conv1D(4, 3, padding="same", dilation_rate=2, activation="relu"),
        k.L.Conv1D(3, 1), k.L.GlobalMaxPooling1D(), k.L.Dense(2),
    ])


def b_conv1d_bn(k, T):
    return k.seq((T, 3), [
        k.L.Conv1D(8, 3, padding="causal"), k.L.BatchNormalization(), k.L.ReLU(),
        k.L.GlobalAveragePooling1D(), k.L.Dense(2),
    ])


def b_pooling(k, T):
    # Strides differ from pool sizes on purpose; lengths: 17 -> max(3,s2,valid) 8 ->
    # avg(3,s2,same) 4; 17 -> max(2,s3,same) 6 -> avg(3,s2,valid) 2.
    x = k.K.Input((T, 4))
    c = k.L.Conv1D(6, 1)(x)
    a = k.L.MaxPooling1D(pool_size=3, strides=2, padding="valid")(c)
    a = k.L.AveragePooling1D(pool_size=3, strides=2, padding="same")(a)
    b = k.L.MaxPooling1D(pool_size=2, strides=3, padding="same")(c)
    b = k.L.AveragePooling1D(pool_size=3, strides=2, padding="valid")(b)
    g = k.L.Concatenate()([k.L.GlobalAveragePooling1D()(a), k.L.GlobalMaxPooling1D()(b)])
    return k.model(x, k.L.Dense(3)(g))


def b_global_pool_keepdims(k, T):
    x = k.K.Input((T, 4))
    c = k.L.Conv1D(5, 3, padding="same")(x)
    a = k.L.GlobalAveragePooling1D(keepdims=True)(c)  # [1, 5]
    m = k.L.GlobalMaxPooling1D(keepdims=True)(c)  # [1, 5]
    h = k.L.Concatenate(axis=1)([a, m])  # [2, 5]
    return k.model(x, k.L.Dense(2)(k.L.Reshape((10,))(h)))


def b_reshape(k, T):
    return k.seq((12,), [
        k.L.Dense(24), k.L.Reshape((6, 4)), k.L.Conv1D(3, 2), k.L.Reshape((-1,)),
        k.L.Dense(8), k.L.Reshape((2, 4)), k.L.Flatten(), k.L.Dense(2),
    ])


def b_merge_two_in_two_out(k, T):
    a_in, b_in = k.K.Input((8,)), k.K.Input((5,))
    a, b = k.L.Dense(6)(a_in), k.L.Dense(6, activation="tanh")(b_in)
    c = k.L.Dense(6)(a_in)
    add = k.L.Add()([a, b, c])  # three operands
    sub = k.L.Subtract()([a, b])
    mul = k.L.Multiply()([a, b])
    out0 = k.L.Dense(4)(k.L.Concatenate()([add, sub, mul]))
    out1 = k.L.Dense(2, activation="sigmoid")(sub)
    return k.model([a_in, b_in], [out0, out1])


def b_concat_seq(k, T):
    x = k.K.Input((T, 4))
    c = k.L.Conv1D(5, 3, padding="causal")(x)
    d = k.L.Dense(5)(x)
    time_cat = k.L.Concatenate(axis=1)([c, d])  # [2T, 5]
    chan_cat = k.L.Concatenate(axis=-1)([c, d])  # [T, 10]
    g = k.L.Concatenate()([k.L.GlobalAveragePooling1D()(time_cat), k.L.Flatten()(chan_cat)])
    return k.model(x, k.L.Dense(3)(g))


def b_shared_branch(k, T):
    # A layer applied twice (two inbound nodes) plus a diamond that re-joins.
    x = k.K.Input((8,))
    shared = k.L.Dense(8, activation="tanh")
    h1 = shared(x)
    h2 = shared(k.L.Dense(8)(x))
    m = k.L.Add()([h1, h2])
    y = k.L.Multiply()([m, h1])
    z = k.L.Subtract()([k.L.Dense(8, activation="relu")(y), h2])
    return k.model(x, k.L.Dense(3)(z))


def b_conv_lstm(k, T):
    return k.seq((T, 3), [k.L.Conv1D(4, 3, padding="causal", activation="relu"),
                          k.L.LSTM(6), k.L.Dense(2)])


# Recurrent layers that read the window backwards: go_backwards keeps the sequence in the order
# it was computed (last tick first); Bidirectional turns the backward one back and merges.
def b_go_backwards(k, T):
    return k.seq((T, 3), [k.L.LSTM(4, go_backwards=True, return_sequences=True), k.L.GRU(3, go_backwards=True),
                          k.L.Dense(1)])


def b_bidirectional(k, T):
    return k.seq((T, 3), [k.L.Bidirectional(k.L.LSTM(5, return_sequences=True)),
                          k.L.Bidirectional(k.L.GRU(4), merge_mode="sum"), k.L.Dense(2)])


def b_bidirectional_merges(k, T):
    x = k.K.Input((T, 4))
    a = k.L.Bidirectional(k.L.LSTM(3, return_sequences=True), merge_mode="ave")(x)
    b = k.L.Bidirectional(k.L.GRU(3, return_sequences=True, reset_after=False), merge_mode="mul")(a)
    forward, backward = k.L.Bidirectional(k.L.LSTM(2, use_bias=False), merge_mode=None)(b)
    return k.model(x, [k.L.Dense(1)(forward), backward])


def b_bidirectional_two_outputs(k, T):  # Keras 3: merge_mode=None ends a Sequential, its two outputs
    return k.seq((T, 3), [k.L.Bidirectional(k.L.GRU(3, return_sequences=True), merge_mode=None)])


def b_bidirectional_input_shape(k, T):  # tf_keras: the input shape on the wrapper, as its users write it
    return k.K.Sequential([k.L.Bidirectional(k.L.LSTM(3), input_shape=(T, 3)), k.L.Dense(1)])


def b_go_backwards_state(k, T):  # the sequence (last tick first) and the final states, as Keras hands them out
    x = k.K.Input((T, 3))
    seq, h, c = k.L.LSTM(3, go_backwards=True, return_sequences=True, return_state=True)(x)
    return k.model(x, [k.L.Flatten()(seq), k.L.Concatenate()([h, c])])


# Unsupported models: the engine must refuse them with an error naming the layer and option.
def u_bidirectional_state(k, T):
    return k.seq((T, 3), [k.L.Bidirectional(k.L.LSTM(4, return_state=True), name="bidi_state")])


def u_conv_channels_first(k, T):
    return k.seq((3, T), [k.L.Conv1D(4, 3, data_format="channels_first", name="conv_cf"),
                          k.L.Flatten(), k.L.Dense(1)])


def u_conv2d_grouped(k, T):
    return k.seq((T, 8, 4), [k.L.Conv2D(4, (1, 2), groups=2, name="conv_grouped"), k.L.Flatten(), k.L.Dense(1)])


def u_dense_float64(k, T):
    return k.seq((4,), [k.L.Dense(4, dtype="float64", name="dense_f64"), k.L.Dense(1)])


def u_dense_mixed_float16(k, T):
    return k.seq((4,), [k.L.Dense(4, dtype="mixed_float16", name="dense_mixed"), k.L.Dense(1)])


# Bench suite (Keras 3 only): the models the latency benchmarks run.
def bench_mlp(widths):
    def build(k, T):
        layers = [k.L.Dense(w, activation="relu") for w in widths]
        return k.seq((10,), layers + [k.L.Dense(1, activation="sigmoid")])
    return build


def bench_lstm_window(k, T):
    return k.seq((T, 10), [k.L.LSTM(64), k.L.Dense(1, activation="sigmoid")])


def bench_gru_window(k, T):
    return k.seq((T, 10), [k.L.GRU(64), k.L.Dense(1, activation="sigmoid")])


def bench_tcn(k, T):
    convs = [k.L.Conv1D(32, 3, padding="causal", dilation_rate=d, activation="relu")
             for d in (1, 2, 4, 8)]
    return k.seq((T, 10), convs + [k.L.GlobalAveragePooling1D(), k.L.Dense(1)])


def bench_lstm_tiny(k, T):
    return k.seq((T, 128), [k.L.LSTM(128, return_sequences=True), k.L.LSTM(128), k.L.Dense(32)])


def both(name, build, **kw):
    """The same architecture as a Keras 3 case and a Keras 2 case (own weights, own outputs)."""
    return [Case(f"{name}_k3", "keras3", build, **kw), Case(f"{name}_k2", "keras2", build, **kw)]


def test_cases() -> list[Case]:
    act_large = (20.0, 25.0)  # keeps exp/softplus of the pre-activations finite in float32
    return [
        *both("dense_act", b_dense_act),
        *both("activation_layers", b_activation_layers, large=act_large),
        *both("dense_activations", b_dense_activations, large=act_large),
        *both("exponential", b_exponential),
        *both("relu_layers", b_relu_layers),
        *both("batchnorm", b_batchnorm),
        *both("layernorm", b_layernorm),
        *both("dense_seq", b_dense_seq, T=5),
        *both("inference_noops", b_inference_noops),
        *both("lstm_last", b_lstm_last, T=6, stream=True),
        *both("lstm_variable_length", b_lstm_last, T=None, window=7, stream=True, stream_T=7),
        *both("lstm_seq", b_lstm_seq, T=6),
        *both("lstm_stacked", b_lstm_stacked, T=6, stream=True),
        *both("gru_reset_after", b_gru_reset_after, T=6, stream=True),
        *both("gru_reset_before", b_gru_reset_before, T=6, stream=True),
        *both("gru_stacked", b_gru_stacked, T=6, stream=True),
        *both("gru_seq", b_gru_seq, T=5),
        *both("go_backwards", b_go_backwards, T=6),
        *both("bidirectional", b_bidirectional, T=6),
        *both("bidirectional_variable_length", b_bidirectional, T=None, window=7),
        *both("bidirectional_merges", b_bidirectional_merges, T=5),
        Case("bidirectional_two_outputs_k3", "keras3", b_bidirectional_two_outputs, T=4),
        Case("bidirectional_input_shape_k2", "keras2", b_bidirectional_input_shape, T=4),
        *both("go_backwards_state", b_go_backwards_state, T=5),
        *both("conv1d", b_conv1d, T=16),
        *both("conv1d_same_dilated", b_conv1d_same_dilated, T=9),
        *both("conv1d_bn", b_conv1d_bn, T=12),
        *both("conv2d", b_conv2d, T=10, slide=12),
        *both("conv2d_wide", b_conv2d_wide, T=9),
        *both("pool2d", b_pool2d, T=7, slide=12),
        *both("depthwise", b_depthwise, T=8, slide=12),
        Case("deeplob_tiny_k3", "keras3", deeplob(conv=8, inception=6, lstm=6, levels=4), T=12, slide=16),
        Case("deeplob_tiny_k2", "keras2", deeplob(conv=8, inception=6, lstm=6, levels=4, mc_dropout=False), T=12),
        *both("deeplob_seq2seq_tiny", deeplob_multi_horizon(conv=6, inception=5, lstm=7, levels=4), T=10),
        *both("deeplob_attention_tiny", deeplob_multi_horizon(conv=6, inception=5, lstm=7, levels=4, attention=True), T=10),
        *both("attention", b_attention, T=7),
        Case("attention_long_k3", "keras3", b_attention_long, T=37),
        Case("attention_window_k3", "keras3", b_attention_window, T=21),
        Case("attention_stream_k3", "keras3", b_attention_stream, T=9, stream=True),
        *both("layout", b_layout, T=6),
        Case("array_operations_k3", "keras3", b_array_operations, T=5),
        *both("transformer_encoder", transformer_encoder(heads=2, key_dim=4, ff=8, blocks=2), T=9),
        Case("translob_tiny_k3", "keras3", translob(levels=2, filters=6, heads=3, key_dim=2, ff=12, dense=8), T=10,
             slide=12),
        *both("pooling", b_pooling, T=17),
        *both("global_pool_keepdims", b_global_pool_keepdims, T=7),
        *both("reshape", b_reshape),
        *both("merge_two_in_two_out", b_merge_two_in_two_out),
        *both("concat_seq", b_concat_seq, T=6),
        *both("shared_branch", b_shared_branch),
        *both("conv_lstm", b_conv_lstm, T=8, slide=12),
    ]


def unsupported_cases() -> list[Case]:
    return [
        Case("bidirectional_state_k3", "keras3", u_bidirectional_state, T=5,
             expect_error=["bidi_state", "Bidirectional", "return_state"]),
        Case("conv1d_channels_first_k3", "keras3", u_conv_channels_first, T=8,
             expect_error=["conv_cf", "channels_first"]),
        Case("conv2d_grouped_k3", "keras3", u_conv2d_grouped, T=6, expect_error=["conv_grouped", "groups=2"]),
        Case("dense_float64_k3", "keras3", u_dense_float64, expect_error=["dense_f64", "float64"]),
        Case("dense_mixed_float16_k2", "keras2", u_dense_mixed_float16,
             expect_error=["dense_mixed", "mixed_float16"]),
    ]


def bench_cases() -> list[Case]:
    return [
        Case("mlp_small", "keras3", bench_mlp([128, 64, 32])),
        Case("mlp_large", "keras3", bench_mlp([256, 128, 64, 32, 16])),
        Case("lstm_window", "keras3", bench_lstm_window, T=32, stream=True),
        Case("gru_window", "keras3", bench_gru_window, T=32),
        Case("tcn", "keras3", bench_tcn, T=64),
        # One step per call in streaming use; stream fixtures over 8 ticks.
        Case("lstm_tiny", "keras3", bench_lstm_tiny, T=1, stream=True, stream_T=8),
    ]


def book_bench_cases() -> list[Case]:
    """The order-book models at their published sizes (bench/book_models; lob-models facts):
    kept apart from the bench suite, whose every model the quantizer and the other formats take."""
    return [
        # The authors' Keras code: 32 filters per convolution, 64 per Inception branch, LSTM(64),
        # T = 100 snapshots of 10 levels (142,435 parameters, 39.0 M multiply-adds). Its Dropout
        # without training=True: model.export() keeps a training=True dropout as random ops
        # (StatelessRandomUniformV2), which the peers' TFLite conversion refuses and which would
        # make the served model random; predict() computes this same function either way.
        Case("deeplob", "keras3", deeplob(conv=32, inception=64, lstm=64, levels=10, mc_dropout=False), T=100),
        # The paper's own sizes (16 filters, 32 per Inception branch, LSTM(64); 60,691 parameters).
        Case("deeplob_small", "keras3", deeplob(conv=16, inception=32, lstm=64, levels=10, mc_dropout=False), T=100),
        # TransLOB's sizes (14 filters and the position channel, so d = 15: 3 heads of 5, feed-forward
        # 60, Dense(64) head, T = 100) with Keras 3 built-ins and operations, its one block applied
        # twice; the output projection is MultiHeadAttention's own (the paper has none).
        Case("translob", "keras3", translob(levels=10, filters=14, heads=3, key_dim=5, ff=60, dense=64), T=100),
        # A light Transformer encoder over a tick window (the keras.io time-series model, pre-LN,
        # at inference: dropout 0): 64 ticks of 16 features, 2 blocks of 2 heads of 8, feed-forward 32.
        Case("tiny_transformer", "keras3",
             transformer_encoder(heads=2, key_dim=8, ff=32, blocks=2, dropout=0.0, features=16, dense=32), T=64),
    ]


def book_multi_horizon_cases() -> list[Case]:
    """The multi-horizon DeepLOBs at their published sizes (bench/book_models_multi_horizon; lob-
    models facts, section 2): DeepLOB's convolutions and Inception module (32 / 64 filters) over
    T = 50 snapshots of 10 levels, an LSTM(64) encoder, the decoder LSTM(64) called for 5 horizons.
    A suite of their own: two inputs (the window and the decoder's start), which the single-input
    bench tools (bench-forms, the IR scripts) do not take; `make compare` does."""
    return [
        Case("deeplob_seq2seq", "keras3", deeplob_multi_horizon(conv=32, inception=64, lstm=64, levels=10), T=50),
        Case("deeplob_attention", "keras3",
             deeplob_multi_horizon(conv=32, inception=64, lstm=64, levels=10, attention=True), T=50),
    ]


# ------------------------------------------------------------------------------------------------
# Weights, inputs, evaluation.
# ------------------------------------------------------------------------------------------------
def case_seed(name: str) -> int:
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def random_weight(rng: np.random.RandomState, var_name: str, shape) -> np.ndarray:
    """A random value for one variable, by its short name. Scales keep activations O(1) for
    O(1) inputs so that every layer stays in its interesting (non-saturated) range."""
    shape = tuple(shape)
    if var_name == "moving_variance":
        return rng.uniform(0.5, 2.0, shape)  # must stay positive
    if var_name == "gamma":
        return rng.uniform(0.5, 1.5, shape)
    if var_name in ("bias", "beta", "moving_mean"):
        return 0.5 * rng.standard_normal(shape)
    fan_in = int(np.prod(shape[:-1])) if len(shape) > 1 else 1  # kernels are [..., in, out]
    return rng.standard_normal(shape) / np.sqrt(max(fan_in, 1))


def randomize_weights(model, rng):
    for layer in model.layers:
        ws = layer.weights
        if not ws:
            continue
        # Keras 3: w.name is "kernel"; Keras 2: "dense_1/kernel:0". Keep the short name.
        vals = [random_weight(rng, w.name.split("/")[-1].split(":")[0], w.shape).astype(np.float32)
                for w in ws]
        layer.set_weights(vals)


def make_input(rng: np.random.RandomState, shape, large) -> np.ndarray:
    """[ROWS, *shape] float32. Rows 0-2 N(0,1); 3 large +-[lo,hi]; 4 tiny (1e-30, 1e-7, signed,
    some zeros); 5 exact zeros; 6 negatives; 7 per-element mix of all of these."""
    feat = tuple(shape)
    lo, hi = large

    def large_vals(s):
        return rng.choice([-1.0, 1.0], s) * rng.uniform(lo, hi, s)

    def tiny_vals(s):
        return rng.choice([1e-30, -1e-30, 1e-7, -1e-7, 0.0], s)

    rows = [rng.standard_normal(feat) for _ in range(3)]
    rows += [large_vals(feat), tiny_vals(feat), np.zeros(feat), -np.abs(rng.standard_normal(feat))]
    pick = rng.randint(0, 5, feat)
    mix = np.select([pick == 0, pick == 1, pick == 2, pick == 3],
                    [rng.standard_normal(feat), large_vals(feat), tiny_vals(feat), np.zeros(feat)],
                    -np.abs(rng.standard_normal(feat)))
    rows.append(mix)
    return np.stack(rows).astype(np.float32)


def run_rows(model, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Outputs of `model(x, training=False)` evaluated one row at a time (batch size 1)."""
    per_out = None
    for i in range(inputs[0].shape[0]):
        args = [x[i:i + 1] for x in inputs]
        y = model(args if len(args) > 1 else args[0], training=False)
        ys = [np.asarray(t) for t in (y if isinstance(y, (list, tuple)) else [y])]
        per_out = per_out or [[] for _ in ys]
        for acc, t in zip(per_out, ys):
            acc.append(t[0])
    return [np.stack(acc) for acc in per_out]


def build_with_floatx(case: Case, floatx: str, T):
    kit = KITS[case.fmt]
    kit.K.backend.clear_session()
    kit.K.backend.set_floatx(floatx)
    try:
        return case.build(kit, T)
    finally:
        kit.K.backend.set_floatx("float32")


def needed_atol(ref: np.ndarray, got: np.ndarray) -> float:
    """Smallest atol for which |got - ref| <= atol + RTOL * |ref| everywhere."""
    if ref.size == 0:
        return 0.0
    return float(np.max(np.maximum(0.0, np.abs(got - ref) - RTOL * np.abs(ref))))


def keras_rounding_atol(case: Case, weights, inputs, outs32) -> float:
    """4x the absolute noise of Keras' float32 result against float64 (same weights)."""
    m64 = build_with_floatx(case, "float64", case.T)
    m64.set_weights([w.astype(np.float64) for w in weights])
    outs64 = run_rows(m64, [x.astype(np.float64) for x in inputs])
    return 4.0 * max(needed_atol(o64, o32.astype(np.float64)) for o64, o32 in zip(outs64, outs32))


def layer_list(model) -> list[str]:
    """Class names, plus "Class:activation" for activation layers and non-linear activation=."""
    seen = []

    def add(s):
        if s not in seen:
            seen.append(s)

    for layer in model.layers:
        cls = type(layer).__name__
        if cls == "InputLayer":
            continue
        add(cls)
        act = layer.get_config().get("activation")
        if isinstance(act, str) and (cls == "Activation" or act != "linear"):
            add(f"{cls}:{act}")
    return seen


def load_saved(fmt: str, path: Path):
    if fmt == "keras3":
        return keras.models.load_model(path, compile=False)
    return tf_keras.models.load_model(path, compile=False)


def save_npy(path: Path, arr: np.ndarray):
    np.save(path, np.ascontiguousarray(arr, dtype=np.float32))


def make_case(case: Case, root: Path, rel: str) -> dict:
    """Writes one case under root/rel and returns its manifest entry."""
    seed = case_seed(case.name)
    kit = KITS[case.fmt]
    kit.K.utils.set_random_seed(seed)
    model = build_with_floatx(case, "float32", case.T)
    randomize_weights(model, np.random.RandomState(seed))
    case_dir = root / rel
    case_dir.mkdir(parents=True, exist_ok=True)
    model_file = case_dir / FILE_NAME[case.fmt]
    model.save(model_file)
    entry = {"name": case.name, "format": case.fmt, "file": f"{rel}/{model_file.name}"}
    if case.expect_error:
        entry["expect_error_contains"] = case.expect_error
        return entry

    loaded = load_saved(case.fmt, model_file)
    in_rng = np.random.RandomState(seed ^ 0x5EED)
    inputs = [make_input(in_rng, tuple(case.window if d is None else d for d in tuple(t.shape)[1:]),
                         case.large) for t in loaded.inputs]
    outs = run_rows(loaded, inputs)
    for o in outs:
        if not np.all(np.isfinite(o)):
            raise SystemExit(f"{case.name}: non-finite reference output; narrow its inputs")
    # The file must mean what the built model meant (nothing lost in serialization).
    for o_built, o_file in zip(run_rows(model, inputs), outs):
        if not np.allclose(o_built, o_file, rtol=RTOL, atol=1e-6 * max(1.0, np.abs(o_file).max())):
            raise SystemExit(f"{case.name}: saved file computes something else than the model")
    weights = loaded.get_weights()
    max_abs = max(float(np.abs(o).max()) for o in outs)
    atol = max(1e-6 * max_abs, keras_rounding_atol(case, weights, inputs, outs), 1e-30)

    entry.update({
        "seed": seed,
        "inputs": [], "outputs": [],
        "rtol": RTOL, "atol": float(f"{atol:.3g}"),
        "layers": layer_list(loaded),
        "stream": None,
    })
    if case.window:
        entry["window_length"] = case.window  # the model's time axis is None
    for i, x in enumerate(inputs):
        save_npy(case_dir / f"in{i}.npy", x)
        entry["inputs"].append(f"{rel}/in{i}.npy")
    for i, y in enumerate(outs):
        save_npy(case_dir / f"out{i}.npy", y)
        entry["outputs"].append(f"{rel}/out{i}.npy")
    if case.stream:
        entry["stream"] = make_stream(case, loaded, weights, in_rng, case_dir, rel, atol)
    if case.slide:
        entry["slide"] = make_slide(case, loaded, in_rng, case_dir, rel, atol)
    return entry


def make_slide(case, loaded, rng, case_dir, rel, atol) -> dict:
    """slide_out[n, w] = Keras on the window x[n, w:w+T] of one sequence: the windows a feed that
    appends one snapshot per event gives a window model (what incremental updates must match)."""
    T = case.window or case.T
    feat = tuple(loaded.inputs[0].shape)[2:]
    x = make_input(rng, (T + case.slide,) + feat, case.large)[[0, 7]]  # a normal and a mixed sequence
    windows = np.stack([x[:, w:w + T] for w in range(case.slide + 1)], axis=1)  # [2, S + 1, T, ...]
    out = run_rows(loaded, [windows.reshape((-1,) + windows.shape[2:])])[0]
    out = out.reshape((x.shape[0], case.slide + 1) + out.shape[1:])
    save_npy(case_dir / "slide_in.npy", x)
    save_npy(case_dir / "slide_out.npy", out)
    s_atol = max(atol, 1e-6 * float(np.abs(out).max()))
    return {"inputs": f"{rel}/slide_in.npy", "outputs": f"{rel}/slide_out.npy", "atol": float(f"{s_atol:.3g}")}


def make_stream(case, loaded, weights, rng, case_dir, rel, atol) -> dict:
    """stream_out[n, t] = the same weights run by Keras on the prefix x[n, :t+1, :]: what an
    engine that carries recurrent state from tick to tick must output at tick t."""
    clone = build_with_floatx(case, "float32", None)  # Input(shape=(None, F))
    clone.set_weights(weights)
    steps = case.stream_T or case.T
    feat = tuple(loaded.inputs[0].shape)[2:]
    x = make_input(rng, (steps,) + feat, case.large)  # [N, T, F]
    out = np.stack([
        np.stack([run_rows(clone, [x[n:n + 1, :t + 1]])[0][0] for t in range(steps)])
        for n in range(x.shape[0])
    ])  # [N, T, out...]
    # Check the clone against the fixed-length model on the full window (last tick).
    full = run_rows(loaded, [x])[0] if steps == case.T else None
    if full is not None and not np.allclose(out[:, -1], full, rtol=RTOL, atol=atol):
        raise SystemExit(f"{case.name}: streaming clone disagrees with the model")
    save_npy(case_dir / "stream_in.npy", x)
    save_npy(case_dir / "stream_out.npy", out)
    s_atol = max(atol, 1e-6 * float(np.abs(out).max()))
    return {"inputs": f"{rel}/stream_in.npy", "outputs": f"{rel}/stream_out.npy",
            "atol": float(f"{s_atol:.3g}")}


def generator_versions() -> dict:
    return {"tensorflow": tf.__version__, "keras": keras.__version__,
            "tf_keras": tf_keras.__version__, "numpy": np.__version__}


def write_suite(suite: str, out: Path, cases, unsupported, only) -> None:
    want = set(only or [])
    pick = [c for c in cases if not want or c.name in want]
    pick_u = [c for c in unsupported if not want or c.name in want]
    out.mkdir(parents=True, exist_ok=True)
    manifest = {
        "suite": suite,
        "generator": generator_versions(),
        "reference": "model(x[i:i+1], training=False) per row on the reloaded file; "
                     "pass if |got-ref| <= atol + rtol*|ref| elementwise",
        "cases": [],
    }
    for c in pick:
        print(f"[{suite}] {c.name}", flush=True)
        manifest["cases"].append(make_case(c, out, c.name))
    if unsupported:
        manifest["unsupported"] = []
        for c in pick_u:
            print(f"[{suite}] unsupported/{c.name}", flush=True)
            e = make_case(c, out, f"unsupported/{c.name}")
            manifest["unsupported"].append({"name": e["name"], "format": e["format"],
                                            "file": e["file"],
                                            "expect_error_contains": e["expect_error_contains"]})
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


# ------------------------------------------------------------------------------------------------
# --check: regenerate and compare.
# ------------------------------------------------------------------------------------------------
def compare_arrays(name, what, ref_path: Path, new_path: Path, rtol, atol) -> bool:
    ref, new = np.load(ref_path), np.load(new_path)
    if ref.shape != new.shape:
        print(f"  MISMATCH {name} {what}: shape {ref.shape} vs {new.shape}")
        return False
    d = np.abs(new.astype(np.float64) - ref.astype(np.float64))
    max_abs = float(d.max()) if d.size else 0.0
    rel = d / np.maximum(np.abs(ref.astype(np.float64)), 1e-30)
    max_rel = float(rel.max()) if d.size else 0.0
    ok = bool(np.all(d <= atol + rtol * np.abs(ref)))
    print(f"  {'ok      ' if ok else 'MISMATCH'} {name} {what}: max abs {max_abs:.3g} "
          f"max rel {max_rel:.3g}")
    return ok


def check(dir_: Path) -> int:
    manifest = json.loads((dir_ / "manifest.json").read_text())
    suite = manifest.get("suite", "tests")
    cases, unsup = {"bench": (bench_cases(), []), "book": (book_bench_cases(), [])}.get(
        suite, (test_cases(), unsupported_cases()))
    names = [c["name"] for c in manifest["cases"]] + [u["name"] for u in
                                                      manifest.get("unsupported", [])]
    known = {c.name for c in cases + unsup}
    ok = all(n in known for n in names)
    for n in names:
        if n not in known:
            print(f"  MISMATCH {n}: no longer generated by this script")
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp)
        write_suite(suite, fresh, cases, unsup, names)
        new_cases = {c["name"]: c for c in json.loads((fresh / "manifest.json").read_text())["cases"]}
        for c in manifest["cases"]:
            n = new_cases.get(c["name"])
            if n is None:
                continue
            pairs = [(f"in{i}", a, b, 0.0, 0.0) for i, (a, b) in enumerate(zip(c["inputs"], n["inputs"]))]
            pairs += [(f"out{i}", a, b, c["rtol"], c["atol"])
                      for i, (a, b) in enumerate(zip(c["outputs"], n["outputs"]))]
            if c.get("stream"):
                s, t = c["stream"], n["stream"]
                pairs += [("stream_in", s["inputs"], t["inputs"], 0.0, 0.0),
                          ("stream_out", s["outputs"], t["outputs"], c["rtol"], s["atol"])]
            if c.get("slide"):
                s, t = c["slide"], n["slide"]
                pairs += [("slide_in", s["inputs"], t["inputs"], 0.0, 0.0),
                          ("slide_out", s["outputs"], t["outputs"], c["rtol"], s["atol"])]
            for what, a, b, rtol, atol in pairs:
                ok &= compare_arrays(c["name"], what, dir_ / a, fresh / b, rtol, atol)
    print("check:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, help="write the test fixture suite here")
    p.add_argument("--bench-out", type=Path, help="write the bench model suite here")
    p.add_argument("--book-bench-out", type=Path, help="write the order-book bench models here (bench/book_models)")
    p.add_argument("--book-multi-horizon-out", type=Path,
                   help="write the multi-horizon order-book models here (bench/book_models_multi_horizon)")
    p.add_argument("--only", nargs="+", metavar="NAME",
                   help="only these case names (the written manifest then lists only them)")
    p.add_argument("--check", type=Path, metavar="DIR",
                   help="regenerate DIR's suite in a temp dir and compare expected outputs")
    a = p.parse_args(argv)
    if a.check:
        return check(a.check)
    if not a.out and not a.bench_out and not a.book_bench_out and not a.book_multi_horizon_out:
        p.error("give --out, --bench-out, --book-bench-out and/or --book-multi-horizon-out (or --check DIR)")
    known = {c.name for c in test_cases() + unsupported_cases() + bench_cases() + book_bench_cases() +
             book_multi_horizon_cases()}
    unknown = sorted(set(a.only or []) - known)
    if unknown:
        p.error(f"--only: unknown case name(s) {unknown}; known: {sorted(known)}")
    for suite, out, cases, unsup in (("tests", a.out, test_cases(), unsupported_cases()),
                                     ("bench", a.bench_out, bench_cases(), []),
                                     ("book", a.book_bench_out, book_bench_cases(), []),
                                     ("book_multi_horizon", a.book_multi_horizon_out, book_multi_horizon_cases(), [])):
        if out is None:
            continue
        if (out / "manifest.json").exists() and not a.only:
            shutil.rmtree(out)  # a full run replaces a previous suite; no stale cases survive
        write_suite(suite, out, cases, unsup, a.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
