#!/usr/bin/env python3
"""PyTorch on the same card: the forms a user would pick for an LSTM-stack model at batch 1.

Forms: eager (cuDNN LSTM, pinned copies, one synchronise), graph (the same captured in one
torch.cuda.CUDAGraph with the copies inside it), and compiled (torch.compile
mode="reduce-overhead", with --compile). Every form is first checked against the framework's
outputs (Y, from Keras), then timed host to host, one request at a time, from the input in a
numpy array to the reply in one: what the resident kernel's bench measures.

Usage: torch_peer.py --model M.tiw --x X.npy --y Y.npy [--stream] [--atol A] [--name N]
                     [--requests R] [--compile]
Prints one JSON line per form.
"""
import argparse
import json
import struct
import sys
import time

try:
    import numpy as np
    import torch
    if not torch.cuda.is_available():
        raise ImportError("PyTorch sees no CUDA device")
except ImportError as e:  # a machine without PyTorch or a GPU (gpu_check.sh's dry run): 77, as the C++ benches
    print(json.dumps({"skipped": "PyTorch peer: " + str(e)}), flush=True)
    sys.exit(77)


def read_tiw(path):
    b = open(path, "rb").read()
    if b[:4] != b"TIW1":
        sys.exit(f"{path}: not a TIW1 weight file")
    at, lstm, head = 4, [], []

    def u32():
        nonlocal at
        v = struct.unpack_from("<I", b, at)[0]
        at += 4
        return v

    def floats(*shape):
        nonlocal at
        n = int(np.prod(shape))
        a = np.frombuffer(b, np.float32, n, at).reshape(shape)
        at += 4 * n
        return a.copy()

    while True:
        kind = u32()
        if kind == 0:
            return lstm, head
        if kind == 1:
            i, h = u32(), u32()
            lstm.append((floats(i, 4 * h), floats(h, 4 * h), floats(4 * h)))
        elif kind == 2:
            i, o, act = u32(), u32(), u32()
            head.append((floats(i, o), floats(o), act))
        else:
            sys.exit(f"{path}: unknown record {kind}")


# The head's activations by the .tiw code, chosen once: the peer runs only the one it needs.
ACTIVATIONS = (lambda t: t, torch.sigmoid, torch.relu, torch.tanh)


class Stack(torch.nn.Module):
    def __init__(self, lstm, head, stream):
        super().__init__()
        self.stream = stream
        self.lstms = torch.nn.ModuleList()
        for k, r, b in lstm:
            m = torch.nn.LSTM(k.shape[0], r.shape[0], batch_first=True)
            with torch.no_grad():
                m.weight_ih_l0.copy_(torch.from_numpy(k.T.copy()))
                m.weight_hh_l0.copy_(torch.from_numpy(r.T.copy()))
                m.bias_ih_l0.copy_(torch.from_numpy(b))
                m.bias_hh_l0.zero_()
            self.lstms.append(m)
        self.head = torch.nn.ModuleList()
        self.acts = []
        for k, b, act in head:
            d = torch.nn.Linear(k.shape[0], k.shape[1])
            with torch.no_grad():
                d.weight.copy_(torch.from_numpy(k.T.copy()))
                d.bias.copy_(torch.from_numpy(b))
            self.head.append(d)
            self.acts.append(ACTIVATIONS[act])

    def forward(self, x, h, c):
        """x [1, T, I]; in a stream, h, c lists of [1, 1, H] updated in place (the state); a window
        starts from zero state and keeps none (cuDNN's own zeros: no copies in or out)."""
        for l, m in enumerate(self.lstms):
            if self.stream:
                x, (hn, cn) = m(x, (h[l], c[l]))
                h[l].copy_(hn)
                c[l].copy_(cn)
            else:
                x, _ = m(x)
        y = x[:, -1]
        for d, act in zip(self.head, self.acts):
            y = act(d(y))
        return y


def warm_up(body):
    """Three runs on a side stream, as CUDA-graph capture requires before it."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            body()
    torch.cuda.current_stream().wait_stream(s)


def summarize(us):
    v = np.sort(np.asarray(us))
    q = lambda p: float(v[min(len(v) - 1, int(p * len(v)))])
    return {"n": len(v), "p50": q(0.5), "p90": q(0.9), "p99": q(0.99), "p999": q(0.999),
            "max": float(v[-1]), "mean": float(v.mean())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--x", required=True)
    ap.add_argument("--y", required=True)
    ap.add_argument("--stream", action="store_true")
    ap.add_argument("--atol", type=float, default=1e-6)
    ap.add_argument("--name", default="model")
    ap.add_argument("--requests", type=int, default=20000)
    ap.add_argument("--compile", action="store_true")
    a = ap.parse_args()
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    X, Y = np.load(a.x), np.load(a.y)
    rows, steps_row, width = X.shape
    per_req = 1 if a.stream else steps_row
    reqs = X.reshape(rows * steps_row // per_req, per_req, width)
    want = Y.reshape(len(reqs), -1)
    resets = [(k * per_req) % steps_row == 0 for k in range(len(reqs))]
    lstm, head = read_tiw(a.model)
    model = Stack(lstm, head, a.stream).to(dev).eval()
    hs = [torch.zeros(1, 1, r.shape[0], device=dev) for _, r, _ in lstm]
    cs = [torch.zeros(1, 1, r.shape[0], device=dev) for _, r, _ in lstm]
    x_pin = torch.zeros(1, per_req, width).pin_memory()
    y_pin = torch.zeros(1, want.shape[1]).pin_memory()
    x_np, y_np = x_pin.numpy(), y_pin.numpy()
    x_dev = torch.zeros(1, per_req, width, device=dev)

    def zero_state():  # a window keeps no state (Stack.forward): nothing to zero
        if a.stream:
            for t in hs + cs:
                t.zero_()

    def body():
        x_dev.copy_(x_pin, non_blocking=True)
        y_pin.copy_(model(x_dev, hs, cs), non_blocking=True)

    forms = {}

    def eager(x, reset):
        x_np[0] = x
        if reset:
            zero_state()
        body()
        torch.cuda.current_stream().synchronize()
        return y_np[0].copy()

    forms["torch_eager"] = eager
    with torch.no_grad():
        for _ in range(3):
            body()
        torch.cuda.synchronize()
        graphs = {}
        warm_up(body)
        try:
            for reset in (False, True):
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    if reset:
                        zero_state()
                    body()
                graphs[reset] = g
        except Exception as e:
            print(json.dumps({"name": a.name, "form": "torch_cuda_graph", "error": repr(e)[:400]}), flush=True)

    def graph(x, reset):
        x_np[0] = x
        graphs[reset].replay()
        torch.cuda.current_stream().synchronize()
        return y_np[0].copy()

    if len(graphs) == 2:
        forms["torch_cuda_graph"] = graph
    if a.compile:
        compiled = torch.compile(body, mode="reduce-overhead")

        def comp(x, reset):
            x_np[0] = x
            if reset:
                zero_state()
            compiled()
            torch.cuda.current_stream().synchronize()
            return y_np[0].copy()

        forms["torch_compile_reduce_overhead"] = comp
    with torch.no_grad():
        for name, run in forms.items():
            try:
                measure(a, name, run, reqs, want, resets)
            except Exception as e:  # report the form as failed and go on with the next one
                print(json.dumps({"name": a.name, "form": name, "error": repr(e)[:400]}), flush=True)


def measure(a, name, run, reqs, want, resets):
    t_first = time.perf_counter()
    worst, fails = 0.0, 0
    for k in range(len(reqs)):
        got = run(reqs[k], resets[k])
        excess = np.abs(got - want[k]) - (a.atol + 1e-5 * np.abs(want[k]))
        fails += int(np.sum(~(excess <= 0)))
        worst = max(worst, float(np.max(excess)))
    for i in range(1000):
        run(reqs[i % len(reqs)], resets[i % len(reqs)])
    lat = []
    for i in range(a.requests):
        k = i % len(reqs)
        t0 = time.perf_counter_ns()
        run(reqs[k], resets[k])
        lat.append((time.perf_counter_ns() - t0) / 1e3)
    print(json.dumps({"name": a.name, "form": name, "device": torch.cuda.get_device_name(),
                      "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                      "checked_replies": len(reqs), "failures": fails, "worst_excess": worst,
                      "setup_and_check_s": round(time.perf_counter() - t_first, 2),
                      "host_to_host_us": summarize(lat)}), flush=True)


if __name__ == "__main__":
    main()
