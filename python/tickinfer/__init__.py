"""tickinfer from Python: Keras models compiled to allocation-free plans, run at batch 1.

    import numpy as np, tickinfer
    model = tickinfer.load("bench/models/mlp_small/model.keras")
    plan = model.compile()                       # or compile(isa="avx2", mode="stream")
    x = np.zeros(plan.input_shapes[0], np.float32)
    y = plan.run(x)                              # new array
    out = np.empty(plan.output_shapes[0], np.float32)
    plan.run(x, out=out)                         # written in place: no allocation at all
    Y = plan.run_batch(X)                        # X: [N, *input_shape]; loop in C++, GIL released

A running pipeline's features, from another process (its config has [features] shm = "NAME"):

    store = tickinfer.FeatureStore("NAME")
    e = store.read(7)        # {"status": "ok", "values": array([...]), "tick_seq": ..., ...}
    store.names              # the column names, in vector order

The research code and the production service share one implementation: these are the C++
engine's plans, not a re-implementation. Errors raise tickinfer.Error with the engine's
message. See docs/python.md.
"""
import os as _os
import sys as _sys

# TensorFlow loads its core with RTLD_GLOBAL, so once it is imported its own protobuf and abseil
# symbols come first for every library loaded after it, and the engine's SavedModel and ONNX
# readers would call TensorFlow's protobuf through Debian's headers (wrong parses, crashes).
# RTLD_DEEPBIND (glibc) has the extension and its libraries resolve their own symbols first.
_flags = _sys.getdlopenflags()
try:
    _sys.setdlopenflags(_flags | getattr(_os, "RTLD_DEEPBIND", 0))
    from ._tickinfer import Error, FeatureRing, FeatureStore, LayerStats, Model, ModelStats, Plan, TensorInfo, load
finally:
    _sys.setdlopenflags(_flags)
from .itch import ItchReader, itch_features, itch_to_parquet, iter_itch, read_itch  # noqa: E402

__all__ = ["Error", "FeatureRing", "FeatureStore", "LayerStats", "Model", "ModelStats", "Plan", "TensorInfo", "load",
           "compile", "ItchReader", "iter_itch", "read_itch", "itch_features", "itch_to_parquet"]
__version__ = "0.1.0"


def compile(model, isa: str = "", mode: str = "window", window_length: int = 0, rounding: str = "tflite") -> Plan:
    """Compiles `model` (a Model, or a path to load first) into a Plan; see Model.compile."""
    if not isinstance(model, Model):
        model = load(str(model))
    return model.compile(isa=isa, mode=mode, window_length=window_length, rounding=rounding)
