"""Every committed Keras fixture and bench model, run through the Python module, against the
outputs Keras produced: per row with run(), as a batch with run_batch(), and in stream mode
tick by tick against Keras on each prefix."""
import numpy as np
import pytest

from conftest import BENCH_MODELS, FIXTURES, assert_close, cases, load_manifest

ALL_CASES = cases(FIXTURES) + cases(BENCH_MODELS)
STREAM_CASES = [(d, c) for d, c in ALL_CASES if c.get("stream")]


def case_id(dc):
    return f"{dc[0].name}/{dc[1]['name']}"


def load_arrays(directory, names):
    return [np.load(directory / n) for n in names]


@pytest.mark.parametrize("dc", ALL_CASES, ids=[case_id(dc) for dc in ALL_CASES])
def test_window_mode_matches_keras(tickinfer, dc):
    directory, c = dc
    model = tickinfer.load(str(directory / c["file"]))
    plan = model.compile(window_length=c.get("window_length", 0))
    xs = load_arrays(directory, c["inputs"])
    refs = load_arrays(directory, c["outputs"])
    multi_in, multi_out = len(xs) > 1, len(refs) > 1

    batch = plan.run_batch(xs if multi_in else xs[0])
    batch = batch if multi_out else [batch]
    for o, (got, want) in enumerate(zip(batch, refs)):
        assert_close(got, want, c["rtol"], c["atol"], f"{c['name']} run_batch output {o}")

    for r in range(xs[0].shape[0]):
        row = [x[r] for x in xs]
        got = plan.run(row if multi_in else row[0])
        got = got if multi_out else [got]
        for o, want in enumerate(refs):
            assert_close(got[o], want[r], c["rtol"], c["atol"], f"{c['name']} run row {r} output {o}")


@pytest.mark.parametrize("dc", STREAM_CASES, ids=[case_id(dc) for dc in STREAM_CASES])
def test_stream_mode_matches_keras_on_every_prefix(tickinfer, dc):
    directory, c = dc
    plan = tickinfer.load(str(directory / c["file"])).compile(mode="stream")
    x = np.load(directory / c["stream"]["inputs"])    # [N, T, F]
    want = np.load(directory / c["stream"]["outputs"])  # [N, T, out...]
    atol = c["stream"]["atol"]
    for n in range(x.shape[0]):
        plan.reset_state()
        for t in range(x.shape[1]):
            assert_close(plan.run(x[n, t]), want[n, t], c["rtol"], atol, f"{c['name']} seq {n} tick {t}")
        # The same sequence as one run_batch call: ticks in order, state carried.
        plan.reset_state()
        assert_close(plan.run_batch(x[n]), want[n], c["rtol"], atol, f"{c['name']} seq {n} run_batch")


def test_unsupported_models_raise_the_engines_message(tickinfer):
    for c in load_manifest(FIXTURES)["unsupported"]:
        with pytest.raises(tickinfer.Error) as e:
            tickinfer.load(str(FIXTURES / c["file"])).compile()
        for fragment in c["expect_error_contains"]:
            assert fragment in str(e.value), f"{c['name']}: {e.value}"
