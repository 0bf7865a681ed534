"""Incremental window updates from Python: model.compile(incremental=True) over the sliding
sequences of the committed fixtures (slide_in.npy), against what Keras computed on each window
(slide_out.npy), and the errors for the modes it does not combine with."""
import numpy as np
import pytest

from conftest import FIXTURES, assert_close, cases

SLIDE_CASES = [(d, c) for d, c in cases(FIXTURES) if c.get("slide")]


@pytest.mark.parametrize("dc", SLIDE_CASES, ids=[dc[1]["name"] for dc in SLIDE_CASES])
def test_every_sliding_window_matches_keras(tickinfer, dc):
    directory, c = dc
    plan = tickinfer.load(str(directory / c["file"])).compile(incremental=True)
    seqs = np.load(directory / c["slide"]["inputs"])   # [N, T + S, ...]
    want = np.load(directory / c["slide"]["outputs"])  # [N, S + 1, ...]
    T = plan.input_shapes[0][0]
    for n, seq in enumerate(seqs):
        for w in range(want.shape[1]):
            got = plan.run(np.ascontiguousarray(seq[w:w + T]))
            assert_close(got, want[n, w], c["rtol"], c["slide"]["atol"], f"{c['name']} sequence {n} window {w}")


def test_incremental_is_a_window_mode_option(tickinfer):
    model = tickinfer.load(str(FIXTURES / "conv_lstm_k3" / "model.keras"))
    with pytest.raises(tickinfer.Error, match="window-mode option"):
        model.compile(mode="stream", incremental=True)
