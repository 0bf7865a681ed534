#!/usr/bin/env python3
"""Batched serving on the GPU against the CPU server on the same host, in the same run: the
request rate each sustains with p99 <= 1 ms (issue 36's serving bar).

For each model and each device (cpu, cuda), a fresh `tickinfer serve --enable_batching` (REST, one
row per request, --device D; the CPU server's batch threads one per host core, the GPU server's
--gpu-batch-threads) is driven by bench/serve_load (open loop from 64 keep-alive connections,
latency from each request's scheduled send time, so a stall shows in the tail) at rising rates,
devices alternating at each rate; a device stops climbing at the first rate whose p99 exceeds the
bound or that has errors. One JSON line per run, then one per model and device with the highest
rate that held.

usage: serving_capacity.py --tickinfer BIN --serve-load BIN [--models tcn,deeplob_small]
                           [--rates 1000,2000,...] [--seconds 3] [--bound-us 1000]
"""
import argparse
import ast
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = {"tcn": "bench/models/tcn", "mlp_large": "bench/models/mlp_large", "lstm_window": "bench/models/lstm_window",
          "deeplob_small": "bench/book_models/deeplob_small", "deeplob": "bench/book_models/deeplob"}


def first_row(npy):
    """The first row of a little-endian float32 .npy file, as nested lists in its shape (no numpy
    needed on the GPU machine)."""
    with open(npy, "rb") as f:
        assert f.read(6) == b"\x93NUMPY", npy
        major = f.read(2)[0]
        n = struct.unpack("<H" if major == 1 else "<I", f.read(2 if major == 1 else 4))[0]
        header = ast.literal_eval(f.read(n).decode("latin1"))
        assert header["descr"] == "<f4" and not header["fortran_order"], header
        shape = header["shape"][1:]
        count = 1
        for d in shape:
            count *= d
        flat = list(struct.unpack("<%df" % count, f.read(4 * count)))

    def nest(values, dims):
        if not dims:
            return values[0]
        step = len(values) // dims[0]
        return [nest(values[i * step:(i + 1) * step], dims[1:]) for i in range(dims[0])]
    return nest(flat, list(shape))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_run(args, work, model, device, rate):
    port = free_port()
    cpus = os.cpu_count() or 1
    threads = cpus if device == "cpu" else args.gpu_batch_threads
    with open(os.path.join(work, "batching.pbtxt"), "w") as f:
        f.write("max_batch_size { value: %d }\nbatch_timeout_micros { value: %d }\n"
                "max_enqueued_batches { value: 100000 }\nnum_batch_threads { value: %d }\n" %
                (args.max_batch, args.timeout_us, threads))
    # gRPC is not what is measured: one thread (each serving thread holds a plan, on the GPU with
    # its batch reservation, so the default, one per CPU, would start sixteen idle ones).
    flags = ["--rest_api_port=%d" % port, "--port=0", "--grpc_max_threads=1", "--rest_api_bind_address=127.0.0.1",
             "--rest_api_num_threads=%d" % cpus, "--model_name=m", "--model_base_path=" + os.path.join(work, model),
             "--file_system_poll_wait_seconds=-1", "--enable_batching", "--device=" + device,
             "--batching_parameters_file=" + os.path.join(work, "batching.pbtxt")]
    server = subprocess.Popen([args.tickinfer, "serve"] + flags, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):
            if server.poll() is not None:
                return {"error": "server exited: " + server.stderr.read()[-400:]}
            try:
                urllib.request.urlopen("http://127.0.0.1:%d/v1/models/m" % port, timeout=1).read()
                break
            except OSError:
                time.sleep(0.1)
        out = subprocess.run([args.serve_load, "--port", str(port), "--path", "/v1/models/m:predict",
                              "--body-file", os.path.join(work, model + ".json"), "--connections", "64",
                              "--rate", str(rate), "--seconds", str(args.seconds), "--warmup-seconds", "1",
                              "--label", device], capture_output=True, text=True, timeout=args.seconds + 60)
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
    if out.returncode != 0:
        said = server.stderr.read()
        if "no CUDA device is visible" in said:  # a machine without a GPU (gpu_check.sh's dry run)
            return {"skipped": "no CUDA device"}
        return {"error": "serve_load: " + out.stderr[-300:] + " server: " + said[-400:]}
    f = out.stdout.split()
    value = lambda key: float(f[f.index(key) + 1])
    return {"p50": value("p50"), "p99": value("p99"), "p999": value("p99.9"), "max": value("max"),
            "errors": int(value("errors")), "n": int(value("n"))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tickinfer", required=True)
    ap.add_argument("--serve-load", required=True)
    ap.add_argument("--models", default="tcn,deeplob_small")
    ap.add_argument("--rates", default="5000,20000,50000,100000")
    ap.add_argument("--seconds", type=float, default=2)
    ap.add_argument("--bound-us", type=float, default=1000)
    ap.add_argument("--max-batch", type=int, default=256)
    ap.add_argument("--timeout-us", type=int, default=100)
    ap.add_argument("--gpu-batch-threads", type=int, default=4)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tickinfer_gpu_serving_")
    try:
        for model in args.models.split(","):
            os.makedirs(os.path.join(work, model, "1"))
            shutil.copy(os.path.join(ROOT, MODELS[model], "model.keras"), os.path.join(work, model, "1"))
            with open(os.path.join(work, model + ".json"), "w") as f:
                json.dump({"instances": [first_row(os.path.join(ROOT, MODELS[model], "in0.npy"))]}, f)
            best = {"cpu": 0, "cuda": 0}
            climbing = {"cpu": True, "cuda": True}
            for rate in [int(r) for r in args.rates.split(",")]:
                for device in ("cpu", "cuda"):
                    if not climbing[device]:
                        continue
                    r = one_run(args, work, model, device, rate)
                    r.update(serving=model, device=device, rate=rate)
                    print(json.dumps(r), flush=True)
                    if "error" in r or "skipped" in r or r["errors"] or r["p99"] > args.bound_us:
                        climbing[device] = False
                    else:
                        best[device] = rate
            for device in ("cpu", "cuda"):
                print(json.dumps({"serving_capacity": model, "device": device, "bound_us": args.bound_us,
                                  "rate_held": best[device], "cpus": os.cpu_count()}), flush=True)
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
