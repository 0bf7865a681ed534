"""Model inspection, compile options and the errors they raise."""
import pathlib

import numpy as np
import pytest

from conftest import BENCH_MODELS, FIXTURES


def test_inputs_outputs_and_stats(mlp_small):
    assert [(t.name, t.shape) for t in mlp_small.inputs] == [("input_layer", (10,))]
    assert [t.shape for t in mlp_small.outputs] == [(1,)]
    stats = mlp_small.stats()
    # 10*128 + 128*64 + 64*32 + 32*1 weights plus 128+64+32+1 biases, counted independently here.
    assert stats.params == 10 * 128 + 128 * 64 + 64 * 32 + 32 + 128 + 64 + 32 + 1
    assert stats.params == sum(layer.params for layer in stats.layers)
    assert [layer.keras_class for layer in stats.layers if layer.params] == ["Dense"] * 4


def test_plan_properties(mlp_small):
    plan = mlp_small.compile()
    assert plan.mode == "window"
    assert plan.input_shapes == [(10,)] and plan.output_shapes == [(1,)]
    assert plan.input_names == ["input_layer"]
    assert plan.flops > 0 and plan.weight_bytes > 0 and plan.arena_bytes > 0
    assert "gemv" in plan.describe()
    assert "mode=window" in repr(plan)
    scalar = mlp_small.compile(isa="scalar")
    assert scalar.isa == "scalar"


def test_stream_mode_takes_one_tick(tickinfer):
    plan = tickinfer.load(str(BENCH_MODELS / "lstm_window" / "model.keras")).compile(mode="stream")
    assert plan.mode == "stream" and plan.input_shapes == [(10,)]


def test_compile_function_accepts_a_path(tickinfer):
    plan = tickinfer.compile(BENCH_MODELS / "mlp_small" / "model.keras", mode="window")
    assert plan.output_shapes == [(1,)]


def test_missing_file(tickinfer):
    with pytest.raises(tickinfer.Error, match="no_such_model.keras"):
        tickinfer.load("no_such_model.keras")


def test_not_a_model(tickinfer, tmp_path):
    p = tmp_path / "junk.keras"
    p.write_bytes(b"this is not a model")
    with pytest.raises(tickinfer.Error, match="junk.keras"):
        tickinfer.load(str(p))


def test_hostile_files_raise_not_crash(tickinfer):
    hostile = sorted((FIXTURES / "hostile").iterdir())
    assert hostile
    for f in hostile:
        with pytest.raises(tickinfer.Error):
            tickinfer.load(str(f)).compile()


def test_bad_compile_options(tickinfer, mlp_small):
    with pytest.raises(tickinfer.Error, match="mode must be 'window' or 'stream'"):
        mlp_small.compile(mode="batch")
    with pytest.raises(tickinfer.Error):
        mlp_small.compile(isa="no_such_isa")
    with pytest.raises(tickinfer.Error, match="window_length must be >= 0"):
        mlp_small.compile(window_length=-1)
    with pytest.raises(tickinfer.Error, match="Flatten|stream"):
        # A model that reads the whole window at once cannot be stepped tick by tick.
        tcn = tickinfer.load(str(BENCH_MODELS / "tcn" / "model.keras"))
        tcn.compile(mode="stream")


def test_gpu_options_are_checked_on_any_machine(tickinfer, mlp_small):
    with pytest.raises(tickinfer.Error, match="cuda_form 'fastest'"):
        mlp_small.compile(cuda_form="fastest")
    with pytest.raises(tickinfer.Error, match="'fp8' is not fp32, fp16 or bf16"):
        mlp_small.compile(cuda_precision="fp8")
    with pytest.raises(tickinfer.Error, match="'int8' is not fp32, fp16 or bf16"):
        mlp_small.compile(cuda_precision="fp16/int8")
    # Well-formed GPU options leave a CPU plan as it is.
    assert mlp_small.compile(cuda_form="graph", cuda_precision="fp16,dense=fp32").isa == mlp_small.compile().isa
    assert mlp_small.compile(cuda_precision="bf16/bf16,dense=fp32/fp16").isa == mlp_small.compile().isa


def test_error_is_a_runtime_error(tickinfer):
    assert issubclass(tickinfer.Error, RuntimeError)
