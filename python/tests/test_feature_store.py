"""tickinfer.FeatureStore against a real `tickinfer run` publishing at full rate in another
process, fed by a real `tickinfer feed serve` exchange on loopback: names, instruments and TTL
come from the store; every read is whole and moves forward; the counts match what the run says
it published; an entry older than the TTL reads 'stale'; tickinfer.FeatureRing holds every
publication in order."""
import math
import os
import pathlib
import subprocess
import time
import tomllib

import pytest

from conftest import ROOT

DEFAULT = ROOT / "examples" / "default"


def binary(tickinfer):
    env = os.environ.get("TICKINFER_BIN")
    path = pathlib.Path(env) if env else pathlib.Path(tickinfer.__file__).resolve().parents[2] / "tickinfer"
    if not path.exists():
        pytest.skip(f"no tickinfer binary at {path}")
    return path


def write_config(tmp_path, store, base_port, ring):
    cfg = tmp_path / "run.toml"
    cfg.write_text(f"""
[feed]
line_a = "127.0.0.1:{base_port}"
line_b = "127.0.0.1:{base_port + 1}"
recovery = "127.0.0.1:{base_port + 2}"
idle = "backoff"

[features]
spec = "{DEFAULT / 'features.toml'}"
shm = "{store}"
shm_ttl_ms = 50
ring = "{ring}"

[[model]]
name = "default"
path = "{DEFAULT / 'model.keras'}"
mode = "tick"
center = 0.5
threshold = 0.1

[threading]
compute_idle = "backoff"

[warmup]
min_iterations = 200
max_iterations = 2000

[run]
feed_silence_s = 3
status_interval_ms = 500
""")
    return cfg


def test_reader_follows_a_running_pipeline(tickinfer, tmp_path):
    exe = binary(tickinfer)
    store_name = f"tickinfer-pytest-features-{os.getpid()}"
    base = 40000 + (os.getpid() % 2000) * 10
    ring_name = f"tickinfer-pytest-ring-{os.getpid()}"
    cfg = write_config(tmp_path, store_name, base, ring_name)
    ready = tmp_path / "ready"
    run = subprocess.Popen([exe, "run", str(cfg), "--ready-file", str(ready)], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    try:
        for _ in range(600):
            if ready.exists() or run.poll() is not None:
                break
            time.sleep(0.1)
        assert ready.exists(), run.communicate()[0]
        serve = subprocess.Popen([exe, "feed", "serve", "--instruments", "20", "--messages", "60000", "--rate", "30000",
                                  "--seed", "3", "--wall-clock-ts", "--line-a", f"127.0.0.1:{base}",
                                  "--line-b", f"127.0.0.1:{base + 1}", "--rerequest", f"127.0.0.1:{base + 2}",
                                  "--linger", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        store = tickinfer.FeatureStore(store_name)
        spec = tomllib.loads((DEFAULT / "features.toml").read_text())
        assert store.instruments == spec["feature_set"]["instruments"]
        assert store.set_name == spec["feature_set"]["name"]
        assert store.width == len(spec["feature"]) == len(store.names)
        assert store.names[0] == "spread_bps" and store.names[2] == "log_return_5"
        assert store.ttl_ns == 50_000_000
        assert store.writer_pid == run.pid

        # While the exchange publishes: every entry read is whole, and never goes backwards.
        last_updates = {i: 0 for i in store.instruments}
        last_seq = {i: 0 for i in store.instruments}
        reads = fresh = 0
        while serve.poll() is None:
            for e in store.snapshot():
                if e["status"] in ("empty", "busy"):
                    continue
                reads += 1
                fresh += e["status"] == "ok"
                i = e["instrument"]
                assert e["updates"] >= last_updates[i] and e["tick_seq"] >= last_seq[i], e
                assert e["values"].shape == (store.width,)
                assert all(math.isfinite(v) for v in e["values"]), e
                last_updates[i], last_seq[i] = e["updates"], e["tick_seq"]
        assert serve.wait() == 0
        assert reads > 1000 and fresh > reads // 2, (reads, fresh)
        assert store.writer_state(stale_after_s=2.0) in ("alive", "stale")
        out, _ = run.communicate(timeout=60)
        assert run.returncode == 0, out
    finally:
        if run.poll() is None:
            run.kill()
    # After the run: the store still holds every instrument's last vector, now stale under the
    # TTL, and the updates add up to what the run reported publishing.
    published = int(out.split(f"feature store shm:{store_name}: ")[1].split()[0])
    entries = store.snapshot()
    assert sum(e["updates"] for e in entries) == published
    assert 59_900 < published <= 60_000
    time.sleep(0.1)
    assert all(e["status"] == "stale" for e in store.snapshot())
    assert all(store.read(e["instrument"], now_ns=e["published_ns"])["status"] == "ok" for e in entries)
    assert all(store.read(e["instrument"], now_ns=0)["status"] == "ok" for e in entries)
    with pytest.raises(tickinfer.Error, match="not in it"):
        store.read(12345)

    # The ring holds every one of those publications, in order, and its last record of each
    # instrument is the vector the store holds.
    ring = tickinfer.FeatureRing(ring_name, from_start=True)
    assert ring.names == store.names and ring.capacity == 65536
    got = ring.poll()
    assert len(got["tick_seq"]) == published and ring.missed == 0 and ring.lag == 0
    assert got["values"].shape == (published, store.width)
    assert all(a < b for a, b in zip(got["tick_seq"], got["tick_seq"][1:]))
    last = {}
    for i, inst in enumerate(got["instrument"]):
        last[inst] = i
    for e in entries:
        row = got["values"][last[e["instrument"]]]
        assert got["tick_seq"][last[e["instrument"]]] == e["tick_seq"]
        assert (row == e["values"]).all()
    assert len(ring.poll()["tick_seq"]) == 0
    os.unlink(f"/dev/shm/{store_name}")
    os.unlink(f"/dev/shm/{ring_name}")


def test_attaching_to_what_is_not_a_store_is_refused(tickinfer, tmp_path):
    with pytest.raises(tickinfer.Error, match="is the writer running"):
        tickinfer.FeatureStore(f"tickinfer-pytest-absent-{os.getpid()}")
    name = f"tickinfer-pytest-garbage-{os.getpid()}"
    pathlib.Path(f"/dev/shm/{name}").write_bytes(b"not a store" * 100)
    try:
        with pytest.raises(tickinfer.Error, match="bad magic"):
            tickinfer.FeatureStore("shm:" + name)
    finally:
        os.unlink(f"/dev/shm/{name}")
