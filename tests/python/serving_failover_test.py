"""Three `tickinfer serve` replicas behind a real HAProxy (Debian's package, the shipped
deploy/haproxy.cfg with its addresses moved to free ports), under `tickinfer loadgen` in open loop:
one replica is killed with SIGKILL, then a new model version is rolled through the other two one
by one (each loads it before it unloads the old one). The bar: 0 failed requests and every
request answered; afterwards both remaining replicas serve only the new version.

Run: make serving-test (installs haproxy), or
     TICKINFER_BIN=build/tickinfer .venv-serving/bin/python -m pytest -q tests/python/serving_failover_test.py
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

import pytest
from serving_support import ROOT, BIN, MLP, free_port

HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"


def get(url, timeout=2):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read().decode()


def wait_until(pred, seconds, what):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if pred():
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def add_version(base, version):
    # Complete first, then renamed into place: a poll never sees a half-written version.
    staging = os.path.join(os.path.dirname(base), "staging-%d" % version)
    os.makedirs(staging)
    shutil.copy(os.path.join(MLP, "model.keras"), os.path.join(staging, "model.keras"))
    os.rename(staging, os.path.join(base, str(version)))


def versions_available(port):
    _, body = get("http://127.0.0.1:%d/v1/models/mlp" % port)
    return sorted(int(v["version"]) for v in json.loads(body)["model_version_status"] if v["state"] == "AVAILABLE")


@pytest.mark.skipif(not os.path.exists(HAPROXY), reason="haproxy not installed (make serving-test installs it)")
def test_replica_kill_and_rolling_update_fail_no_request():
    work = tempfile.mkdtemp(prefix="tickinfer_failover_")
    procs = []
    try:
        ports = [free_port() for _ in range(3)]
        front = free_port()
        bases = []
        for i, port in enumerate(ports):
            base = os.path.join(work, "r%d" % i, "mlp")
            os.makedirs(base)
            add_version(base, 1)
            bases.append(base)
            procs.append(subprocess.Popen(
                [BIN, "serve", "--rest_api_port=%d" % port, "--port=0", "--rest_api_bind_address=127.0.0.1",
                 "--model_name=mlp", "--model_base_path=" + base, "--file_system_poll_wait_seconds=0.2",
                 "--rest_api_num_threads=2", "--grpc_max_threads=1"],
                stderr=subprocess.DEVNULL))
        for port in ports:
            wait_until(lambda: get("http://127.0.0.1:%d/readyz" % port)[0] == 200, 60, "replica on %d" % port)
        with open(os.path.join(ROOT, "deploy", "haproxy.cfg")) as f:
            cfg = f.read()
        cfg = cfg.replace("bind 127.0.0.1:8501", "bind 127.0.0.1:%d" % front)
        stats = os.path.join(work, "haproxy.sock")  # its counters: did the kill really cost retries?
        cfg = cfg.replace("global\n", "global\n    stats socket %s mode 600 level admin\n" % stats, 1)
        for i, port in enumerate(ports):
            cfg = re.sub(r"server r%d 127\.0\.0\.1:\d+" % i, "server r%d 127.0.0.1:%d" % (i, port), cfg)
        with open(os.path.join(work, "haproxy.cfg"), "w") as f:
            f.write(cfg)
        haproxy = subprocess.Popen([HAPROXY, "-db", "-f", os.path.join(work, "haproxy.cfg")],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(haproxy)
        wait_until(lambda: get("http://127.0.0.1:%d/readyz" % front)[0] == 200, 20, "haproxy")

        out_json = os.path.join(work, "load.json")
        load = subprocess.Popen([BIN, "loadgen", "rest://127.0.0.1:%d/mlp" % front, "--input",
                                 os.path.join(MLP, "in0.npy"), "--workers", "8", "--rate", "400", "--seconds", "8",
                                 "--warmup-seconds", "0", "--json", out_json],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(1.5)
        procs[0].send_signal(signal.SIGKILL)  # in flight: its requests go to another replica
        procs[0].wait()
        time.sleep(1.0)
        # The roll: version 2 into replica 1, serving there before replica 2 gets it.
        for i in (1, 2):
            add_version(bases[i], 2)
            wait_until(lambda: versions_available(ports[i]) == [2], 20, "replica %d on version 2" % i)
            time.sleep(1.0)
        out, _ = load.communicate(timeout=60)
        result = json.load(open(out_json))
        assert load.returncode == 0, out
        assert result["errors"] == 0, out
        assert result["broken_connections"] == 0, out
        assert result["ok"] == 400 * 8, out
        assert all(versions_available(p) == [2] for p in ports[1:])
        # HAProxy's own counters: the killed replica is DOWN, and requests sent to it while it was
        # still thought up were retried (wretr) or sent elsewhere (wredis): the path was taken.
        with socket.socket(socket.AF_UNIX) as c:
            c.connect(stats)
            c.sendall(b"show stat\n")
            table = b""
            while True:
                chunk = c.recv(65536)
                if not chunk:
                    break
                table += chunk
        rows = [l.split(",") for l in table.decode().splitlines()]
        head = rows[0]
        col = {name.lstrip("# "): i for i, name in enumerate(head)}
        by = {(r[0], r[1]): r for r in rows[1:] if len(r) > 10}
        assert by[("replicas", "r0")][col["status"]].startswith("DOWN"), table.decode()
        back = by[("replicas", "BACKEND")]
        assert int(back[col["wretr"]] or 0) + int(back[col["wredis"]] or 0) > 0, table.decode()
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
        shutil.rmtree(work)
