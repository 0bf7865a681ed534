#!/usr/bin/env python3
"""Server-side batching's trade-off, measured: `tickinfer serve` (mlp_large, one row per request)
with batching off, on with batch_timeout_micros 200, and on with a large timeout, at a few request
rates from 16 keep-alive connections (build/bench/serve_load: open loop, latency from each
request's scheduled send time). Every setting is a fresh server; the settings alternate within
each round. Reported per rate and setting: the client's p50/p99/p99.9 (median over rounds), and
from the server's own metrics the compute time per row (its share of its batch's model time:
:tickinfer:serving:compute_latency, mean and p50 from the histogram) and the queue time p50.

usage: tools/bench_batching.py BUILD_DIR [--rates 500,2000,5000] [--seconds 5] [--rounds 3]
                               [--server-cpu 1] [--client-cpu 0] [--json FILE]
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETTINGS = [("off", None), ("timeout 200us", 200), ("timeout 2000us", 2000)]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def histogram(text, name, model):
    """(count, sum_us, [(le, cumulative)]) of one histogram series of the model, REST entrypoint."""
    buckets, total, count = [], 0.0, 0
    for line in text.splitlines():
        if 'model_name="%s"' % model not in line or 'entrypoint="REST"' not in line:
            continue
        key, value = line.rsplit(" ", 1)
        if key.startswith(name + "_bucket"):
            le = key.split('le="')[1].split('"')[0]
            buckets.append((float("inf") if le == "+Inf" else float(le), float(value)))
        elif key.startswith(name + "_sum"):
            total = float(value)
        elif key.startswith(name + "_count"):
            count = int(float(value))
    return count, total, buckets


def quantile(buckets, count, q):
    """Linear interpolation inside the bucket that holds the q-th sample (as Prometheus does)."""
    if count == 0:
        return 0.0
    rank, prev_le, prev_c = q * count, 0.0, 0.0
    for le, c in buckets:
        if c >= rank:
            if le == float("inf"):
                return prev_le
            return prev_le + (le - prev_le) * (rank - prev_c) / max(c - prev_c, 1e-9)
        prev_le, prev_c = le, c
    return prev_le


def one_run(args, work, setting, rate):
    name, timeout = setting
    port = free_port()
    flags = ["--rest_api_port=%d" % port, "--port=0", "--rest_api_bind_address=127.0.0.1", "--rest_api_num_threads=16",
             "--model_name=mlp", "--model_base_path=" + os.path.join(work, "mlp"), "--file_system_poll_wait_seconds=-1",
             "--monitoring_config_file=" + os.path.join(work, "monitoring.pbtxt")]
    if timeout is not None:
        with open(os.path.join(work, "batching.pbtxt"), "w") as f:
            f.write("max_batch_size { value: 32 }\nbatch_timeout_micros { value: %d }\n"
                    "max_enqueued_batches { value: 1000 }\nnum_batch_threads { value: 1 }\n" % timeout)
        flags += ["--enable_batching", "--batching_parameters_file=" + os.path.join(work, "batching.pbtxt")]
    server = subprocess.Popen(["taskset", "-c", str(args.server_cpu), os.path.join(args.build, "tickinfer"), "serve"] + flags,
                              stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen("http://127.0.0.1:%d/readyz" % port, timeout=1).read()
                break
            except OSError:
                time.sleep(0.1)
        out = subprocess.run(["taskset", "-c", str(args.client_cpu), os.path.join(args.build, "bench", "serve_load"),
                              "--port", str(port), "--path", "/v1/models/mlp:predict",
                              "--body-file", os.path.join(work, "body.json"), "--connections", "16",
                              "--rate", str(rate), "--seconds", str(args.seconds), "--label", name],
                             check=True, capture_output=True, text=True).stdout
        metrics = urllib.request.urlopen("http://127.0.0.1:%d/monitoring/prometheus/metrics" % port, timeout=5).read().decode()
    finally:
        server.terminate()
        server.wait(timeout=20)
    f = out.split()
    value = lambda key: float(f[f.index(key) + 1])
    cn, csum, cb = histogram(metrics, ":tickinfer:serving:compute_latency", "mlp")
    qn, _, qb = histogram(metrics, ":tickinfer:serving:queue_latency", "mlp")
    return {"p50": value("p50"), "p99": value("p99"), "p999": value("p99.9"), "max": value("max"),
            "errors": int(value("errors")), "n": int(value("n")),
            "compute_mean_us": csum / cn if cn else 0.0, "compute_p50_us": quantile(cb, cn, 0.5),
            "queue_p50_us": quantile(qb, qn, 0.5)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--rates", default="500,2000,5000")
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--server-cpu", type=int, default=1)
    ap.add_argument("--client-cpu", type=int, default=0)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    rates = [int(r) for r in args.rates.split(",")]
    work = tempfile.mkdtemp(prefix="tickinfer_batching_")
    try:
        os.makedirs(os.path.join(work, "mlp", "1"))
        shutil.copy(os.path.join(ROOT, "bench", "models", "mlp_large", "model.keras"), os.path.join(work, "mlp", "1"))
        with open(os.path.join(work, "body.json"), "w") as f:
            f.write('{"instances": [[0.5, -0.25, 1.0, 0.0, 2.0, -1.5, 0.75, 0.1, -0.3, 0.9]]}')
        with open(os.path.join(work, "monitoring.pbtxt"), "w") as f:
            f.write('prometheus_config { enable: true path: "/monitoring/prometheus/metrics" }\n')
        print("# %d CPUs (%s); server on cpu %d, load generator on cpu %d; mlp_large, 1 row per request, 16 connections,"
              " open loop, %.0f s per run, %d rounds, settings alternating" %
              (os.cpu_count(), open("/proc/cpuinfo").read().split("model name")[1].split(":")[1].split("\n")[0].strip(),
               args.server_cpu, args.client_cpu, args.seconds, args.rounds))
        print("# load average before: %s" % open("/proc/loadavg").read().strip())
        results = {}
        for r in range(args.rounds):
            for rate in rates:
                for s in SETTINGS:
                    results.setdefault((rate, s[0]), []).append(one_run(args, work, s, rate))
        med = lambda rows, k: statistics.median(x[k] for x in rows)
        print("\n| req/s | batching | client p50 us | p99 us | p99.9 us | errors | compute per row: mean us | p50 us | queue p50 us |")
        print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
        table = []
        for rate in rates:
            for name, _ in SETTINGS:
                rows = results[(rate, name)]
                row = {k: med(rows, k) for k in ("p50", "p99", "p999", "compute_mean_us", "compute_p50_us", "queue_p50_us")}
                row.update(rate=rate, setting=name, errors=sum(x["errors"] for x in rows))
                table.append(row)
                print("| %d | %s | %.1f | %.1f | %.1f | %d | %.2f | %.2f | %.1f |" % (
                    rate, name, row["p50"], row["p99"], row["p999"], row["errors"], row["compute_mean_us"],
                    row["compute_p50_us"], row["queue_p50_us"]))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(table, f, indent=1)
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
