"""SavedModel directories and ONNX files load and run from Python like Keras files.

Expected outputs come from the framework that wrote each file: Keras for the SavedModels
(tools/make_savedmodel_fixtures.py), onnxruntime for the ONNX files (tools/make_onnx_fixtures.py),
never from tickinfer.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import FIXTURES, assert_close, load_manifest

SAVEDMODEL = FIXTURES / "savedmodel"
ONNX = FIXTURES / "onnx"


def _single_io(directory):
    return [c for c in load_manifest(directory)["cases"]
            if len(c["inputs"]) == 1 and len(c["outputs"]) == 1 and not c.get("window_length")]


@pytest.mark.parametrize("case", _single_io(SAVEDMODEL), ids=lambda c: c["name"])
def test_savedmodel_matches_keras(tickinfer, case):
    model = tickinfer.load(str(SAVEDMODEL / case["file"]))
    plan = model.compile()
    x = np.load(SAVEDMODEL / case["inputs"][0]).astype(np.float32)
    want = np.load(SAVEDMODEL / case["outputs"][0])
    got = np.stack([plan.run(row) for row in x])
    assert_close(got, want, case["rtol"], case["atol"], case["name"])


@pytest.mark.parametrize("case", _single_io(ONNX), ids=lambda c: c["name"])
def test_onnx_matches_onnxruntime(tickinfer, case):
    plan = tickinfer.load(str(ONNX / case["file"])).compile()
    x = np.load(ONNX / case["inputs"][0]).astype(np.float32)
    want = np.load(ONNX / case["outputs"][0])
    got = np.stack([plan.run(row) for row in x])
    assert_close(got.reshape(want.shape), want, case["rtol"], case["atol"], case["name"])


def test_tensorflow_imported_first_leaves_the_protobuf_readers_working(tickinfer, tmp_path):
    """TensorFlow loads its protobuf with RTLD_GLOBAL; imported before tickinfer it used to take
    over the engine's SavedModel and ONNX parsing (a bad shard count, then a crash). In a fresh
    process, as users do it: import tensorflow, then tickinfer, then load both formats."""
    pytest.importorskip("tensorflow")
    saved = SAVEDMODEL / _single_io(SAVEDMODEL)[0]["file"]
    case = _single_io(ONNX)[0]
    code = ("import sys, numpy as np, tensorflow, tickinfer\n"
            "tickinfer.load(sys.argv[1]).compile()\n"
            "plan = tickinfer.load(sys.argv[2]).compile()\n"
            "x = np.load(sys.argv[3]).astype(np.float32)\n"
            "np.save(sys.argv[4], np.stack([plan.run(row) for row in x]))\n")
    got = tmp_path / "got.npy"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="",
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    run = subprocess.run([sys.executable, "-c", code, str(saved), str(ONNX / case["file"]),
                          str(ONNX / case["inputs"][0]), str(got)], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    want = np.load(ONNX / case["outputs"][0])
    assert_close(np.load(got).reshape(want.shape), want, case["rtol"], case["atol"], case["name"])


def test_a_directory_that_is_not_a_savedmodel_is_a_clear_error(tickinfer, tmp_path):
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(Exception) as e:
        tickinfer.load(str(tmp_path))
    assert str(tmp_path) in str(e.value)
    assert "saved_model.pb" in str(e.value)


def test_tflite_engine_is_an_option_and_both_engines_match_tflite(tickinfer):
    """A float TFLite file on the graph engine (auto, graph) and on the interpreter, each against
    the outputs of TFLite's own reference interpreter (tools/make_tflite_fixtures.py)."""
    d = FIXTURES / "tflite" / "mlp_small"
    x = np.load(d / "inputs_float_0.npy").astype(np.float32)
    want = np.load(d / "expected_ref_float_0.npy")
    described = {}
    for engine in ("auto", "interpreter", "graph"):
        plan = tickinfer.load(str(d / "float.tflite"), tflite_engine=engine).compile()
        described[engine] = plan.describe()
        got = np.stack([plan.run(row) for row in x]).reshape(want.shape)
        assert_close(got, want, 1e-4, 1e-5, engine)
    assert described["auto"] == described["graph"]  # it lifts
    assert described["interpreter"] != described["auto"]
    with pytest.raises(tickinfer.Error, match="'fastest' is not one of auto, interpreter, graph"):
        tickinfer.load(str(d / "float.tflite"), tflite_engine="fastest")
