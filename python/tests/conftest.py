"""Shared helpers: where the committed Keras references live, and how outputs are compared.

The references (in*.npy -> out*.npy, stream_in/stream_out) were produced by TensorFlow/Keras
(tools/make_fixtures.py), never by tickinfer, so agreement here is agreement with Keras.
"""
import importlib.util
import json
import os
import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = pathlib.Path(os.environ.get("TICKINFER_FIXTURES", ROOT / "tests" / "fixtures"))
BENCH_MODELS = ROOT / "bench" / "models"


def load_source_module(name):
    """tickinfer.<name> from the source tree, for its pure-Python modules: no native module needed."""
    spec = importlib.util.spec_from_file_location(f"tickinfer_{name}_src", ROOT / "python" / "tickinfer" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def load_manifest(directory):
    with open(directory / "manifest.json") as f:
        return json.load(f)


def cases(directory):
    return [(directory, c) for c in load_manifest(directory)["cases"]]


def assert_close(got, want, rtol, atol, what):
    """|got - want| <= atol + rtol * |want| elementwise, as the C++ reference test checks."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != reference {want.shape}"
    excess = np.abs(got - want) - (atol + rtol * np.abs(want))
    worst = np.unravel_index(np.argmax(excess), excess.shape) if excess.size else None
    assert excess.size == 0 or excess[worst] <= 0, (
        f"{what}: at {worst} got {got[worst]} want {want[worst]} (rtol {rtol}, atol {atol})")


@pytest.fixture(scope="session")
def tickinfer():
    import tickinfer as module
    return module


@pytest.fixture(scope="session")
def mlp_small(tickinfer):
    return tickinfer.load(str(BENCH_MODELS / "mlp_small" / "model.keras"))
