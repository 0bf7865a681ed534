"""The GIL is released while run_batch computes, clones run in parallel threads with the same
results, and sharing one plan between threads is refused instead of racing."""
import threading

import numpy as np
import pytest

from conftest import BENCH_MODELS


@pytest.fixture(scope="module")
def lstm(tickinfer):
    return tickinfer.load(str(BENCH_MODELS / "lstm_window" / "model.keras"))


def long_batch(plan, rows):
    rng = np.random.default_rng(7)
    return rng.standard_normal((rows,) + plan.input_shapes[0]).astype(np.float32)


def test_run_batch_releases_the_gil(lstm):
    plan = lstm.compile()
    X = long_batch(plan, 4000)  # tens of ms of C++ work
    entered, done = threading.Event(), threading.Event()

    def worker():
        entered.set()
        plan.run_batch(X)
        done.set()

    t = threading.Thread(target=worker)
    t.start()
    entered.wait()
    # If run_batch held the GIL, this thread could not execute a single iteration until it
    # returned; with the GIL released it spins the whole time.
    spins = 0
    while not done.is_set():
        spins += 1
    t.join()
    assert spins > 10_000, f"main thread ran only {spins} iterations while run_batch computed"


def test_clones_in_threads_match_one_thread(lstm):
    plan = lstm.compile()
    X = long_batch(plan, 400)
    want = plan.run_batch(X)
    results = {}

    def worker(k, p):
        rows = X[k::4]
        results[k] = (np.stack([p.run(x) for x in rows]), p.run_batch(rows))

    threads = [threading.Thread(target=worker, args=(k, plan.clone())) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        per_row, batch = results[k]
        np.testing.assert_array_equal(per_row, want[k::4])
        np.testing.assert_array_equal(batch, want[k::4])


def test_one_plan_shared_between_threads_is_refused(tickinfer, lstm):
    plan = lstm.compile()
    X = long_batch(plan, 20000)  # long enough that the main thread gets in while it runs
    errors = []
    done = threading.Event()

    def worker():
        plan.run_batch(X)
        done.set()

    t = threading.Thread(target=worker)
    t.start()
    while not done.is_set() and not errors:
        try:
            plan.run(X[0])
        except tickinfer.Error as e:
            errors.append(str(e))
    t.join()
    assert errors and "already running in another thread" in errors[0]
    plan.run(X[0])  # usable again once the other call has finished
