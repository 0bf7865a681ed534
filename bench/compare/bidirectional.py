#!/usr/bin/env python3
"""Bidirectional recurrent models exported from PyTorch to ONNX: tickinfer beside ONNX Runtime and
PyTorch on the same file and weights, in one run.

    bench/compare/setup_venv.sh .venv-compare --with-torch
    .venv-compare/bin/python bench/compare/bidirectional.py --build build [--pin 1] [--seconds S]
                             [--rounds R] [--out DIR]

Models (random weights, fixed seed), a window of --window ticks of --features values, batch 1:
  bilstm_last_step   nn.LSTM(bidirectional=True) -> y[:, -1] -> Linear: the common PyTorch idiom.
                     The backward half of y[:, -1] has read only the window's last tick, so
                     tickinfer runs the backward layer one step (ONNX Runtime runs the window).
  bilstm_final_state nn.LSTM(bidirectional=True) -> cat(h_n[-2], h_n[-1]) -> Linear: both
                     directions over the whole window (the same work for every runtime).
  bigru_stacked      nn.GRU(num_layers=2, bidirectional=True) -> cat(h_n[-2], h_n[-1]) -> Linear.

Each file is written by torch.onnx.export (the TorchScript exporter). Every runtime is checked
against PyTorch (float32, rtol 1e-4, atol 1e-5) on 64 inputs BEFORE any timing; a runtime that
disagrees is not timed and the command exits non-zero. Timing: per call, perf_counter_ns around
one batch-1 call through each runtime's Python API (tickinfer: plan.run_into a preallocated
array), single-threaded; the runtimes take turns for --rounds rounds of --seconds each and the
samples of all rounds are pooled. `tickinfer bench` (the C++ harness) gives the native row.
Writes OUT/bidirectional.json and prints a markdown table (OUT defaults to BUILD/compare).
"""
import argparse
import json
import os
import pathlib
import sys
import tempfile

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run as harness  # noqa: E402  (measure, summarize, agreement, native_bench, cpu_name)
import runners  # noqa: E402


def build_models(torch, features, hidden):
    nn = torch.nn

    class BiLstmLastStep(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(features, hidden, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(2 * hidden, 3)

        def forward(self, x):
            return self.fc(self.rnn(x)[0][:, -1, :])

    class BiLstmFinalState(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(features, hidden, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(2 * hidden, 3)

        def forward(self, x):
            h = self.rnn(x)[1][0]
            return self.fc(torch.cat([h[-2], h[-1]], dim=1))

    class BiGruStacked(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(features, hidden, num_layers=2, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(2 * hidden, 3)

        def forward(self, x):
            h = self.rnn(x)[1]
            return self.fc(torch.cat([h[-2], h[-1]], dim=1))

    return {"bilstm_last_step": BiLstmLastStep, "bilstm_final_state": BiLstmFinalState,
            "bigru_stacked": BiGruStacked}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--pin", type=int, default=None, help="pin this process (and the native bench) to a CPU")
    ap.add_argument("--seconds", type=float, default=1.0, help="per runtime per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--window", type=int, default=100)
    ap.add_argument("--features", type=int, default=40)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--models", default="", help="comma-separated subset")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    build = pathlib.Path(args.build).resolve()
    sys.path.insert(0, str(build / "python"))
    import torch
    if args.pin is not None:
        os.sched_setaffinity(0, {args.pin})
    runners._torch_single_thread(torch)
    out_dir = pathlib.Path(args.out or build / "compare")
    out_dir.mkdir(parents=True, exist_ok=True)
    models = build_models(torch, args.features, args.hidden)
    if args.models:
        models = {k: v for k, v in models.items() if k in args.models.split(",")}
    rng = np.random.default_rng(20261207)
    xs = rng.standard_normal((256, 1, args.window, args.features)).astype(np.float32)
    rows, failed = [], False
    with tempfile.TemporaryDirectory() as tmp:
        for name, cls in models.items():
            torch.manual_seed(7)
            module = cls().eval()
            path = pathlib.Path(tmp) / f"{name}.onnx"
            torch.onnx.export(module, (torch.zeros(1, args.window, args.features),), str(path),
                              input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "batch"}},
                              dynamo=False)
            ctx = {"model_path": str(path), "onnx": str(path), "input_shapes": [(args.window, args.features)]}

            def torch_call(x, m=module, from_numpy=torch.from_numpy):
                with torch.inference_mode():
                    return m(from_numpy(x)).numpy()
            calls = {"tickinfer (Python, run_into)": runners.tickinfer_python(ctx, out_buffer=True),
                     "ONNX Runtime": runners.onnxruntime(ctx, spinning=False),
                     "PyTorch eager": torch_call}
            want = np.stack([torch_call(x)[0] for x in xs[:64]]).astype(np.float64)
            timed = {}
            for label, call in calls.items():
                excess, worst = harness.agreement(np.stack([np.array(call(x))[0] for x in xs[:64]]), want)
                if excess > 0:
                    print(f"{name}: {label} disagrees with PyTorch (max |diff| {worst:.3g}); not timed")
                    failed = True
                    continue
                timed[label] = []
            for _ in range(args.rounds):  # the runtimes take turns: drift hits all alike
                for label in timed:
                    timed[label].append(harness.measure(calls[label], xs, args.seconds, 0.2, 200,
                                                        2_000_000, 10 * args.seconds))
            for label, parts in timed.items():
                rows.append({"model": name, "runtime": label, **harness.summarize(np.concatenate(parts))})
            if "tickinfer (Python, run_into)" in timed:  # the same plan: timed only where it agrees
                native = harness.native_bench(build, path, "window", args.seconds * args.rounds, args.pin)
                rows.append({"model": name, "runtime": "tickinfer (C++ harness)", **native})
    meta = {"cpu": harness.cpu_name(), "pinned_cpu": args.pin, "window": args.window, "features": args.features,
            "hidden": args.hidden, "seconds": args.seconds, "rounds": args.rounds,
            "versions": {"torch": torch.__version__, "onnxruntime": __import__("onnxruntime").__version__}}
    (out_dir / "bidirectional.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    print(f"{meta['cpu']}, pinned CPU {args.pin}, window {args.window} x {args.features}, hidden {args.hidden}, "
          f"{args.rounds} rounds x {args.seconds} s")
    print("| model | runtime | p50 us | p99 us | p99.9 us | max us | calls |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['model']} | {r['runtime']} | {r['p50_ns'] / 1e3:.1f} | {r['p99_ns'] / 1e3:.1f} | "
              f"{r['p999_ns'] / 1e3:.1f} | {r['max_ns'] / 1e3:.1f} | {r['calls']} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
