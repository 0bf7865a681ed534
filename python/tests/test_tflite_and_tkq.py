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
