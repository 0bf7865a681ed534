#!/usr/bin/env python3
"""Writes a Keras LSTM-stack model's weights as a flat file the GPU probe reads (no HDF5 there).

The device machine that runs bench/gpu/ has no Keras and its C++ side no HDF5, so this runs here
and its output travels with the binary. Format (little-endian), one record after another:
  "TIW1"
  u32 kind: 1 = LSTM  -> u32 I, u32 H, f32 kernel[I][4H], f32 recurrent[H][4H], f32 bias[4H]
            2 = Dense -> u32 in, u32 out, u32 act (0 linear, 1 sigmoid, 2 relu, 3 tanh),
                         f32 kernel[in][out], f32 bias[out]
            0 = end
Keras gate order (i, f, c, o) is kept. Only models made of LSTM layers then Dense layers with
the default activations are accepted: anything else is refused by name.

Usage: export_lstm_stack.py MODEL.keras OUT.tiw
"""
import struct
import sys

import numpy as np


def main():
    import keras

    src, dst = sys.argv[1], sys.argv[2]
    model = keras.saving.load_model(src, compile=False)
    acts = {"linear": 0, "sigmoid": 1, "relu": 2, "tanh": 3}
    out = [b"TIW1"]
    for layer in model.layers:
        kind = type(layer).__name__
        cfg = layer.get_config()
        w = [np.asarray(a, np.float32) for a in layer.get_weights()]
        if kind == "LSTM":
            if cfg["activation"] != "tanh" or cfg["recurrent_activation"] != "sigmoid" or not cfg["use_bias"]:
                sys.exit(f"{src}: layer {layer.name}: only tanh/sigmoid LSTM with bias is exported")
            k, r, b = w
            out.append(struct.pack("<III", 1, k.shape[0], r.shape[0]))
            out += [k.tobytes(), r.tobytes(), b.tobytes()]
        elif kind == "Dense":
            if cfg["activation"] not in acts or not cfg["use_bias"]:
                sys.exit(f"{src}: layer {layer.name}: activation {cfg['activation']} not exported")
            k, b = w
            out.append(struct.pack("<IIII", 2, k.shape[0], k.shape[1], acts[cfg["activation"]]))
            out += [k.tobytes(), b.tobytes()]
        elif kind == "InputLayer":
            continue
        else:
            sys.exit(f"{src}: layer {layer.name} ({kind}): not an LSTM stack with a Dense head")
    out.append(struct.pack("<I", 0))
    with open(dst, "wb") as f:
        f.write(b"".join(out))


if __name__ == "__main__":
    main()
