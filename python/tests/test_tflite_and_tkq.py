"""TFLite and tickinfer-quantized (.tkq) files load and run from Python like Keras ones.

Expected outputs come from TFLite's own reference interpreter (tools/make_tflite_fixtures.py,
OpResolverType.BUILTIN_REF), never from tickinfer.
"""
import json

import numpy as np
import pytest

from conftest import ROOT

TFLITE = ROOT / "tests" / "fixtures" / "tflite"


def _entry(model, mode):
    with open(TFLITE / "manifest.json") as f:
        return json.load(f)["models"][model]["modes"][mode]


def test_float_tflite_matches_the_tflite_interpreter(tickinfer):
    entry = _entry("mlp_small", "float")
    plan = tickinfer.load(str(TFLITE / "mlp_small" / entry["file"])).compile()
    x = np.load(TFLITE / "mlp_small" / entry["input_files"][0])
    want = np.load(TFLITE / "mlp_small" / entry["expected_ref_files"][0])
    got = np.stack([plan.run(row) for row in x])
    assert got.shape == want.shape
    assert np.max(np.abs(got - want)) <= 1e-5 * np.max(np.abs(want))


def test_int8_tflite_takes_floats_and_matches_the_interpreter_after_quantization(tickinfer):
    # The plan quantizes float inputs as TFLite's QUANTIZE does and dequantizes the int8 output,
    # so feeding the dequantized int8 fixture rows reproduces the interpreter's int8 outputs.
    entry = _entry("mlp_small", "int8")
    (inp,), (out,) = entry["inputs"], entry["outputs"]
    plan = tickinfer.load(str(TFLITE / "mlp_small" / entry["file"])).compile()
    q = np.load(TFLITE / "mlp_small" / entry["input_files"][0]).astype(np.float32)
    want = np.load(TFLITE / "mlp_small" / entry["expected_ref_files"][0]).astype(np.float32)
    x = (q - inp["zero_points"][0]) * np.float32(inp["scales"][0])
    got = np.stack([plan.run(row) for row in x])
    assert np.array_equal(got, (want - out["zero_points"][0]) * np.float32(out["scales"][0]))


@pytest.mark.parametrize("name", ["mlp_small_int8.tkq", "gru_reset_before_dynamic.tkq"])
def test_tkq_file_runs_and_reports_its_shapes(tickinfer, name):
    plan = tickinfer.load(str(ROOT / "tests" / "fixtures" / "tkq" / name)).compile()
    y = plan.run(np.zeros(plan.input_shapes[0], np.float32))
    assert y.shape == tuple(plan.output_shapes[0])
    assert np.all(np.isfinite(y))


def test_stream_only_tkq_refuses_window_mode_and_streams_as_keras(tickinfer):
    # Made by `tickinfer quantize --stream` (tests/fixtures/tkq/README.md): one tick per call, the
    # state carried. Keras' stateful outputs for the same ticks: tests/fixtures/lstm_last_k3.
    model = tickinfer.load(str(ROOT / "tests" / "fixtures" / "tkq" / "lstm_last_stream_int8.tkq"))
    with pytest.raises(Exception, match="quantized one tick per call for stream mode"):
        model.compile()
    plan = model.compile(mode="stream")
    fixture = ROOT / "tests" / "fixtures" / "lstm_last_k3"
    ticks, want = np.load(fixture / "stream_in.npy"), np.load(fixture / "stream_out.npy")
    worst = 0.0
    for s in range(ticks.shape[0]):
        plan.reset_state()
        for t in range(ticks.shape[1]):
            y = plan.run(ticks[s, t])
            worst = max(worst, float(np.max(np.abs(y - want[s, t]))))
    # Full int8 on an 8-unit model calibrated on 8 windows (quant_stream_file_test: 0.07 here).
    assert worst <= 0.2 * float(np.max(np.abs(want)))
