"""How arrays cross the boundary: zero-copy in, in-place out, conversions, shapes."""
import numpy as np
import pytest

from conftest import BENCH_MODELS


@pytest.fixture()
def plan(mlp_small):
    return mlp_small.compile()


@pytest.fixture()
def rows():
    return np.load(BENCH_MODELS / "mlp_small" / "in0.npy"), np.load(BENCH_MODELS / "mlp_small" / "out0.npy")


def test_c_contiguous_float32_input_is_used_in_place(tickinfer, plan):
    from tickinfer import _tickinfer
    x = np.arange(10, dtype=np.float32)
    assert _tickinfer._input_address(x) == x.ctypes.data
    # A row of a C-contiguous batch is itself contiguous: also no copy.
    X = np.zeros((4, 10), np.float32)
    assert _tickinfer._input_address(X[2]) == X[2].ctypes.data


def test_other_layouts_are_converted_once(tickinfer, plan, rows):
    from tickinfer import _tickinfer
    X, Y = rows
    x64 = X[0].astype(np.float64)
    assert _tickinfer._input_address(x64) != x64.ctypes.data
    strided = np.asfortranarray(np.tile(X[0], (3, 1)))[1]  # a non-contiguous view
    assert not strided.flags.c_contiguous
    for x in (x64, strided, X[0].tolist()):
        np.testing.assert_array_equal(plan.run(x), plan.run(np.ascontiguousarray(X[0])))


def test_out_is_written_in_place_and_returned(plan, rows):
    X, Y = rows
    out = np.full(plan.output_shapes[0], -1.0, np.float32)
    result = plan.run(X[0], out=out)
    assert result is out
    np.testing.assert_array_equal(out, plan.run(X[0]))
    batch_out = np.empty((X.shape[0],) + plan.output_shapes[0], np.float32)
    assert plan.run_batch(X, out=batch_out) is batch_out
    np.testing.assert_array_equal(batch_out, plan.run_batch(X))


def test_leading_axis_of_one_is_kept(plan, rows):
    X, _ = rows
    assert plan.run(X[0]).shape == plan.output_shapes[0]
    assert plan.run(X[:1]).shape == (1,) + plan.output_shapes[0]


def test_run_batch_equals_run_per_row_bit_for_bit(plan):
    # A feed-forward plan's run_batch goes through Plan::run_rows (several rows per call, each
    # layer's weights read once): every row must equal its own run() exactly, for row counts
    # around the kernel's groups of four and the module's chunks of eight.
    rng = np.random.default_rng(5)
    for n in (1, 3, 4, 5, 8, 9, 17, 100):
        X = rng.normal(0.0, 2.0, (n, 10)).astype(np.float32)
        Y = plan.run_batch(X)
        for i in range(n):
            assert np.array_equal(Y[i], plan.run(X[i])), (n, i)


def test_empty_batch(plan):
    assert plan.run_batch(np.zeros((0, 10), np.float32)).shape == (0, 1)


def test_wrong_shapes_name_the_input_and_the_expected_shape(tickinfer, plan, rows):
    X, _ = rows
    with pytest.raises(tickinfer.Error, match=r"input 0 \('input_layer'\): expected shape \(10,\) or \(1, 10\)"):
        plan.run(np.zeros(9, np.float32))
    with pytest.raises(tickinfer.Error, match="use run_batch"):
        plan.run(X)
    with pytest.raises(tickinfer.Error, match=r"expected shape \(N, 10\)"):
        plan.run_batch(X[0])
    with pytest.raises(tickinfer.Error, match=r"out 0 \('dense_3'\): expected shape \(1,\)"):
        plan.run(X[0], out=np.empty(2, np.float32))
    with pytest.raises(tickinfer.Error, match=r"expected shape \(8, 1\)"):
        plan.run_batch(X, out=np.empty((7, 1), np.float32))


@pytest.mark.parametrize("batch,bad_out", [
    (False, np.empty(1, np.float64)),                  # wrong dtype: a converted copy would drop results
    (True, np.empty((16, 1), np.float32)[::2]),        # not contiguous
    (False, np.frombuffer(b"\0" * 4, np.float32)),     # read-only
    (False, [0.0]),                                    # not an array
], ids=["float64", "strided", "read_only", "list"])
def test_out_must_be_writable_contiguous_float32(tickinfer, plan, rows, batch, bad_out):
    with pytest.raises(tickinfer.Error, match="writable C-contiguous float32"):
        if batch:
            plan.run_batch(rows[0], out=bad_out)
        else:
            plan.run(rows[0][0], out=bad_out)


def test_non_finite_inputs_are_refused_unless_allowed(tickinfer, plan, rows):
    X, _ = rows
    x = X[0].copy()
    x[3] = np.nan
    with pytest.raises(tickinfer.Error, match=r"non-finite value \(nan at flat position 3\)"):
        plan.run(x)
    Xb = X.copy()
    Xb[5, 7] = np.inf
    with pytest.raises(tickinfer.Error, match=r"row 5 has a non-finite value \(inf at flat position 7\)"):
        plan.run_batch(Xb)
    assert plan.run(x, check_finite=False).shape == (1,)  # runs; NaN propagates as the math says


def test_unconvertible_input(tickinfer, plan):
    with pytest.raises(tickinfer.Error, match="cannot convert"):
        plan.run("not numbers")


def test_multi_input_multi_output(tickinfer):
    from conftest import FIXTURES
    model = tickinfer.load(str(FIXTURES / "merge_two_in_two_out_k3" / "model.keras"))
    plan = model.compile()
    assert len(plan.input_shapes) == 2 and len(plan.output_shapes) == 2
    xs = [np.zeros(s, np.float32) for s in plan.input_shapes]
    outs = plan.run(xs)
    assert isinstance(outs, list) and [o.shape for o in outs] == plan.output_shapes
    given = [np.empty(s, np.float32) for s in plan.output_shapes]
    assert plan.run(xs, out=given) is given
    for a, b in zip(given, outs):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(tickinfer.Error, match="this plan has 2 inputs, got 1"):
        plan.run([xs[0]])
    with pytest.raises(tickinfer.Error, match="pass a list or tuple of 2 arrays"):
        plan.run(xs[0])
    with pytest.raises(tickinfer.Error, match="has 3 rows but input 0 has 2"):
        plan.run_batch([np.zeros((2,) + plan.input_shapes[0], np.float32),
                        np.zeros((3,) + plan.input_shapes[1], np.float32)])


def test_run_into_writes_in_place(plan, rows):
    X, _ = rows
    out = np.empty((1, 1), np.float32)
    assert plan.run_into(X[:1], out) is out
    np.testing.assert_array_equal(out, plan.run(X[:1]))


def _peak_bytes(fn):
    """Peak Python-heap bytes (objects and numpy data, both traced by tracemalloc) above the
    starting level while fn runs."""
    import tracemalloc
    fn()  # warm: first-call caches are not per-call cost
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_run_into_allocates_nothing_per_call(plan):
    xs = [np.full(10, i, np.float32) for i in range(256)]
    out = np.empty(1, np.float32)
    run_into, run = plan.run_into, plan.run

    def baseline():
        for x in xs:
            pass

    def calls_into():
        for x in xs:
            run_into(x, out)

    def calls_run():
        for x in xs:
            run(x)

    # The loop itself costs its iterator; 256 calls of run_into add nothing to that, while the
    # control (run returning a new array each call) shows the measurement does see allocations.
    assert _peak_bytes(calls_into) <= _peak_bytes(baseline)
    assert _peak_bytes(calls_run) > _peak_bytes(baseline)
