#!/usr/bin/env python3
"""Checks the documented hybrid input quantization against TFLite's own temporaries.

For every dynamic-range model of a fixture directory (tools/make_tflite_fixtures.py), this runs
ai_edge_litert's BUILTIN_REF interpreter with experimental_preserve_all_tensors=True, which keeps
each hybrid op's temporaries: the int8 quantized input, its scale and its zero point. It
recomputes them from the op's float input with the formula in docs/quantization.md ("Hybrid input
quantization", implemented in src/tflite/kernels/quantize_rows.cpp) and counts rows that differ.
A new TFLite release that changes this arithmetic shows here first, op by op, before it shows
as scattered one-step output errors in quant_tflite_reference_test.

Covers FULLY_CONNECTED and CONV_2D (asymmetric per row / per batch) and the input of
UNIDIRECTIONAL_SEQUENCE_LSTM. Usage: check_hybrid_quantization.py [--fixtures DIR] [--rows N]
Exit status 1 when any row differs.
"""
import argparse
import json
import os
import sys

import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType

F32 = np.float32


def round_away(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def quantize_asymmetric(x):
    """(q, scale, zero_point) as the x86 TFLite builds compute them; None for an all-zero range."""
    x = x.astype(F32)
    lo, hi = F32(min(F32(0), x.min())), F32(max(F32(0), x.max()))
    if lo == hi:
        return np.zeros(x.shape, np.int8), F32(1), 0
    s = float(F32(hi - lo)) / 255.0  # the subtraction in float, the division in double
    rmin, rmax = float(lo), float(hi)
    from_min, from_max = -128.0 - rmin / s, 127.0 - rmax / s
    zp_d = from_min if 128.0 + abs(rmin / s) < 127.0 + abs(rmax / s) else from_max
    zp = -128 if zp_d <= -128 else 127 if zp_d >= 127 else int(round_away(zp_d))
    scale = F32(s)
    inv = F32(1.0 / float(scale))
    p = (x * inv).astype(F32)
    body = len(x) & ~7
    half = np.where(p < 0, F32(-0.5), F32(0.5)).astype(F32)
    q = np.where(np.arange(len(x)) < body, np.trunc((p + half).astype(F32)), round_away(p)) + zp
    return np.clip(q, -128, 127).astype(np.int8), scale, zp


def hybrid_ops(interp):
    """(op name, float input tensor, depth per quantized row, q, scale, zero point tensor indices)."""
    det = interp.get_tensor_details()
    temps = [t for t in det if t["name"] == ""]
    pos, out = 0, []
    for op in interp._get_ops_details():
        name = op["op_name"]
        if name not in ("FULLY_CONNECTED", "CONV_2D", "UNIDIRECTIONAL_SEQUENCE_LSTM"):
            continue
        inp = det[op["inputs"][0]]
        weights = det[op["inputs"][2 if name == "UNIDIRECTIONAL_SEQUENCE_LSTM" else 1]]
        if inp["dtype"] != np.float32 or weights["dtype"] != np.int8:
            continue
        n = int(np.prod(inp["shape"]))
        depth = int(inp["shape"][-1])
        if name == "CONV_2D":
            depth = n // int(inp["shape"][0])  # one scale per batch
        size = n if name != "UNIDIRECTIONAL_SEQUENCE_LSTM" else depth
        while not (temps[pos]["dtype"] == np.int8 and int(np.prod(temps[pos]["shape"])) == size):
            pos += 1
        q = temps[pos]["index"]
        if name == "UNIDIRECTIONAL_SEQUENCE_LSTM":
            # input_quantized, output_state_q, cell_state_q, input_sf, ..., input_zp (+8)
            out.append((name, inp["index"], depth, q, temps[pos + 3]["index"], temps[pos + 8]["index"]))
            pos += 9
            continue
        pos += 1
        while temps[pos]["dtype"] != np.float32:
            pos += 1
        sf = temps[pos]["index"]
        while not (temps[pos]["dtype"] == np.int32 and len(temps[pos]["shape"]) == 1):
            pos += 1
        out.append((name, inp["index"], depth, q, sf, temps[pos]["index"]))
        pos += 1
    return out


def check_model(path, inputs, rows):
    interp = Interpreter(model_path=path, experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                         experimental_preserve_all_tensors=True)
    interp.allocate_tensors()
    ops = hybrid_ops(interp)
    bad = [0] * len(ops)
    for r in range(min(rows, inputs[0].shape[0])):
        interp.reset_all_variables()
        for detail, data in zip(interp.get_input_details(), inputs):
            interp.set_tensor(detail["index"], data[r:r + 1].astype(detail["dtype"]))
        interp.invoke()
        for k, (name, inp, depth, qi, si, zi) in enumerate(ops):
            x = interp.get_tensor(inp).reshape(-1, depth)
            if name == "UNIDIRECTIONAL_SEQUENCE_LSTM":
                x = x[-1:]  # the temporaries hold the last time step's quantization
            tq = interp.get_tensor(qi).reshape(-1, depth)
            ts = interp.get_tensor(si).ravel()
            tz = interp.get_tensor(zi).ravel()
            tz = tz.view(np.int32) if tz.dtype == np.float32 else tz
            for b in range(x.shape[0]):
                q, s, zp = quantize_asymmetric(x[b])
                if s != ts[b] or zp != tz[b] or np.any(q != tq[b]):
                    bad[k] += 1
    return [(name, count) for (name, *_), count in zip(ops, bad)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fixtures", default=os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "tflite"))
    ap.add_argument("--rows", type=int, default=1000)
    args = ap.parse_args()
    manifest = json.load(open(os.path.join(args.fixtures, "manifest.json")))
    failed = False
    for model, entry in manifest["models"].items():
        mode = entry["modes"].get("dynamic", {})
        if "file" not in mode:
            continue
        d = os.path.join(args.fixtures, model)
        inputs = [np.load(os.path.join(d, f)) for f in mode["input_files"]]
        for k, (name, count) in enumerate(check_model(os.path.join(d, mode["file"]), inputs, args.rows)):
            print(f"{model} op {k} {name}: {count} quantized rows differ")
            failed |= count > 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
