#!/usr/bin/env python3
"""PyTorch on the same card for a window model at batch 1, from a TorchScript file
(export_torchscript.py): the forms a user would pick. eager (pinned copy in, the module, copy
out, one synchronise) and graph (the same captured in one torch.cuda.CUDAGraph, replayed and
synchronised per request). Each form is first checked against Keras's outputs (Y), then timed
host to host, one request at a time, as graph_form_bench times the CUDA graph form.

`--batches 8,64,512` adds the hardware table's PyTorch column: per batch size N, the CUDA-graph
form over N rows at once (X cycled out to N rows, every output checked against Y), timed per
call like graph_form_bench --batches; a size the traced module cannot take is reported, not fatal.

Usage: torch_graph_peer.py --model M.pt --x X.npy --y Y.npy [--atol A] [--name N] [--requests R]
                           [--batches N,N,...]
Prints one JSON line per form (torch_peer.py's fields) and one per batch size.
"""
import argparse
import json
import sys
import time

from torch_peer import measure, summarize, warm_up  # first: it exits 77 without PyTorch or a GPU

import numpy as np
import torch


def flatten_rnn_weights(model):
    """cuDNN takes an RNN's weights as one buffer (nn.RNNBase.flatten_parameters does it for a
    module in Python); a TorchScript file loads them as separate tensors, and cuDNN would then copy
    them together on every call, a cost PyTorch's own users do not pay. Done here the way
    flatten_parameters does it (the tensors become views of one buffer, in place, so the traced
    graph reads them there). Returns how many RNNs were flattened."""
    n = 0
    for m in model.modules():
        kind = getattr(m, "original_name", "")
        if kind not in ("LSTM", "GRU"):
            continue
        named = list(m.named_parameters(recurse=False))  # w_ih, w_hh[, b_ih, b_hh] per layer
        weights = [w for _, w in named]
        per_layer = 4 if any(n.startswith("bias") for n, _ in named) else 2
        layers = len(weights) // per_layer
        with torch.no_grad():
            torch._cudnn_rnn_flatten_weight(weights, per_layer, weights[0].shape[1], 2 if kind == "LSTM" else 3,
                                            weights[1].shape[1], 0, layers, True, False)
        n += 1
    return n


def capture(body):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        body()
    return g


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--x", required=True)
    ap.add_argument("--y", required=True)
    ap.add_argument("--atol", type=float, default=1e-6)
    ap.add_argument("--name", default="model")
    ap.add_argument("--requests", type=int, default=5000)
    ap.add_argument("--batches", default="")
    a = ap.parse_args()
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    X, Y = np.load(a.x).astype(np.float32), np.load(a.y).astype(np.float32)
    reqs = X.reshape(len(X), 1, *X.shape[1:])
    want = Y.reshape(len(X), -1)
    resets = [True] * len(reqs)
    model = torch.jit.load(a.model, map_location=dev).eval()
    try:
        print(f"{a.name}: {flatten_rnn_weights(model)} RNN(s) with their weights in one buffer", file=sys.stderr)
    except Exception as e:  # measured as loaded (cuDNN then copies the weights per call), and said
        print(f"{a.name}: RNN weights not flattened: {e!r}", file=sys.stderr)
    x_pin = torch.zeros(reqs.shape[1:]).pin_memory()
    y_pin = torch.zeros(1, want.shape[1]).pin_memory()
    x_np, y_np = x_pin.numpy(), y_pin.numpy()
    x_dev = torch.zeros(reqs.shape[1:], device=dev)

    def body():
        x_dev.copy_(x_pin, non_blocking=True)
        y_pin.copy_(model(x_dev).reshape(1, -1), non_blocking=True)

    def eager(x, reset):
        x_np[...] = x
        body()
        torch.cuda.current_stream().synchronize()
        return y_np[0].copy()

    forms = {"torch_eager": eager}
    with torch.no_grad():
        warm_up(body)
        try:
            g = capture(body)

            def graph(x, reset):
                x_np[...] = x
                g.replay()
                torch.cuda.current_stream().synchronize()
                return y_np[0].copy()

            forms["torch_cuda_graph"] = graph
        except Exception as e:
            print(json.dumps({"name": a.name, "form": "torch_cuda_graph", "error": repr(e)[:400]}), flush=True)
        for name, run in forms.items():
            try:
                measure(a, name, run, reqs, want, resets)
            except Exception as e:  # report the form as failed and go on with the next one
                print(json.dumps({"name": a.name, "form": name, "error": repr(e)[:400]}), flush=True)
        for n in [int(b) for b in a.batches.split(",") if b]:
            try:
                batch_row(a, model, dev, X, Y, n)
            except Exception as e:
                print(json.dumps({"name": a.name, "form": "torch_cuda_graph", "batch": n, "error": repr(e)[:400]}),
                      flush=True)


def batch_row(a, model, dev, X, Y, n):
    """n rows per call through one captured CUDA graph: checked against Y, then timed per call."""
    rows = np.concatenate([X] * (n // len(X) + 1))[:n]
    want = np.concatenate([Y.reshape(len(Y), -1)] * (n // len(Y) + 1))[:n]
    x_pin = torch.from_numpy(rows.copy()).pin_memory()
    x_dev = torch.zeros(x_pin.shape, device=dev)
    y_pin = torch.zeros(n, want.shape[1]).pin_memory()

    def body():
        x_dev.copy_(x_pin, non_blocking=True)
        y_pin.copy_(model(x_dev).reshape(n, -1), non_blocking=True)

    warm_up(body)
    g = capture(body)

    def call():
        g.replay()
        torch.cuda.current_stream().synchronize()

    call()
    excess = np.abs(y_pin.numpy() - want) - (a.atol + 1e-5 * np.abs(want))
    calls = max(50, a.requests // n)
    for _ in range(max(5, calls // 20)):
        call()
    lat, start = [], time.perf_counter()
    for i in range(calls):  # at most about 2 s a size, 10 calls at least (as graph_form_bench)
        if i >= 10 and time.perf_counter() - start > 2:
            break
        t0 = time.perf_counter_ns()
        call()
        lat.append((time.perf_counter_ns() - t0) / 1e3)
    summary = summarize(lat)
    print(json.dumps({"name": a.name, "form": "torch_cuda_graph", "batch": n, "failures": int(np.sum(~(excess <= 0))),
                      "worst_excess": float(np.max(excess)), "torch_us": summary,
                      "torch_rows_per_s": n / summary["p50"] * 1e6}), flush=True)


if __name__ == "__main__":
    main()
