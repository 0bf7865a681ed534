#!/usr/bin/env python3
"""A bench model as a TorchScript file, for the PyTorch peer on a GPU machine that has PyTorch but
not Keras: the model rebuilt in PyTorch with its Keras weights (bench/compare/torch_port.py),
checked against Keras's own outputs (the fixture's Y) on the CPU first, then traced at batch 1
and saved. torch_graph_peer.py loads it with torch.jit.load alone.

Usage: export_torchscript.py MODEL.keras X.npy Y.npy OUT.pt [--atol A] [--rtol R]
(run with the compare venv: .venv-compare/bin/python, which has Keras and PyTorch)
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "compare"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("x")
    ap.add_argument("y")
    ap.add_argument("out")
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--rtol", type=float, default=1e-4)
    a = ap.parse_args()
    import keras
    import torch
    from torch_port import port

    torch.set_num_threads(1)
    module = port(keras.models.load_model(a.model, compile=False)).eval()
    x = np.load(a.x).astype(np.float32)
    y = np.load(a.y).astype(np.float32)
    with torch.inference_mode():
        got = np.concatenate([module(torch.from_numpy(x[i:i + 1])).numpy() for i in range(len(x))])
    err = np.abs(got.reshape(y.shape) - y)
    bad = int((err > a.atol + a.rtol * np.abs(y)).sum())
    if bad:
        sys.exit(f"{a.model}: the PyTorch port misses Keras on {bad} outputs (worst {err.max():.3g})")
    # Tensors the port keeps as plain attributes would be traced as constants on the CPU; as
    # buffers they follow the module to the GPU (torch.jit.load's map_location).
    for m in module.modules():
        for name, v in list(vars(m).items()):
            if isinstance(v, torch.Tensor) and not isinstance(v, torch.nn.Parameter):
                delattr(m, name)
                m.register_buffer(name, v)
    with torch.no_grad():
        traced = torch.jit.trace(module, torch.from_numpy(x[:1]), check_trace=False)
    constants = [n for n in traced.inlined_graph.nodes()
                 if n.kind() == "prim::Constant" and n.output().type().kind() == "TensorType"]
    if constants:
        sys.exit(f"{a.model}: {len(constants)} tensor constants in the trace would stay on the CPU")
    # A device fixed in the trace (an op that made a tensor "on the CPU") fails on the GPU with
    # "tensors are not at the same device"; the reload below runs on the CPU and cannot see it.
    devices = [n for n in traced.inlined_graph.nodes()
               if n.kind() == "prim::Constant" and n.output().type().kind() == "DeviceObjType"]
    if devices:
        sys.exit(f"{a.model}: {len(devices)} devices fixed in the trace (the CPU's); the file would fail on a GPU")
    traced.save(a.out)
    reloaded = torch.jit.load(a.out)
    with torch.inference_mode():
        again = np.concatenate([reloaded(torch.from_numpy(x[i:i + 1])).numpy() for i in range(len(x))])
    if not np.array_equal(again.reshape(y.shape), got.reshape(y.shape)):
        sys.exit(f"{a.out}: the saved trace does not reproduce the port")
    print(f"{a.out}: {a.model} ported, worst error against Keras {err.max():.3g}")


if __name__ == "__main__":
    main()
