"""Converting a bench-suite Keras model into the formats the peers run.

Every peer gets the same weights at batch 1 with fixed shapes, converted the way a user of that
runtime would:
  - TFLite (LiteRT): Keras `model.export` to a SavedModel with a fixed [1, ...] signature, then
    tf.lite.TFLiteConverter.from_saved_model. The fixed batch lets the converter fuse LSTM into
    TFLite's UnidirectionalSequenceLSTM (a dynamic batch leaves TensorList ops it cannot lower).
  - ONNX: tf2onnx.convert.from_function on the same tf.function (opset 17). tf2onnx 1.17's from_keras
    fails on Keras 3 models (KeyError on a Keras tensor name); the traced graph converts fine.
  - OpenVINO: ov.convert_model on the TFLite file. Its ONNX frontend rejects the Loop tf2onnx
    emits for a Keras 3 LSTM, and from the SavedModel it measured 2-4x slower than from TFLite.
  - int8: LiteRT dynamic-range quantization (converter.optimizations = [Optimize.DEFAULT]: int8
    weights, activations quantized per call), LiteRT full int8 (the same plus a
    representative_dataset of calibration windows and TFLITE_BUILTINS_INT8 only: int8 weights and
    activations, float input and output through the converter's QUANTIZE/DEQUANTIZE, as a user
    keeping their float feed would write it), and ONNX Runtime's quantize_dynamic (int8 weights
    for MatMul/Gemm) on the tf2onnx model. The calibration windows are the caller's: tickinfer's
    own quantizer gets the same ones (see quantized.py).
Files are cached under OUT/<model>/ keyed by the model file's hash and the converter versions.
"""
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np


def _fingerprint(model_path, versions):
    h = hashlib.sha256(pathlib.Path(model_path).read_bytes())
    h.update(json.dumps(versions, sort_keys=True).encode())
    return h.hexdigest()[:16]


def _int8(paths, log, calibration):
    """The int8 files, each tried once per cache: a converter that fails leaves <file>.failed with
    its message (the row is then reported as not run, and does not fail the comparison)."""
    import tensorflow as tf
    seconds = {}

    def attempt(key, make):
        path = pathlib.Path(paths[key])
        failed = path.with_name(path.name + ".failed")
        if path.exists() or failed.exists():
            return
        t = time.perf_counter()
        try:
            make(path)
            seconds[key] = time.perf_counter() - t
        except Exception as e:  # recorded, not fatal: int8 rows are extras
            failed.write_text(f"{type(e).__name__}: {str(e).strip().splitlines()[-1][:300]}")
            log(f"    {key} conversion failed: {failed.read_text()}")

    def tflite_dynamic(path):
        converter = tf.lite.TFLiteConverter.from_saved_model(paths["saved_model"])
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        path.write_bytes(converter.convert())

    def onnx_dynamic(path):
        from onnxruntime.quantization import QuantType, quantize_dynamic
        quantize_dynamic(paths["onnx"], str(path), weight_type=QuantType.QInt8)

    def tflite_full_int8(path):
        # In a child process: the converter's int8 calibration of some recurrent graphs ends in a
        # segmentation fault (signal 11), which must cost one row, not the comparison.
        cal = path.with_name("calibration.npz")
        np.savez(cal, *calibration)
        proc = subprocess.run([sys.executable, __file__, "--full-int8", paths["saved_model"], str(cal), str(path)],
                              capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            why = (f"converter crashed (signal {-proc.returncode})" if proc.returncode < 0 else
                   (proc.stderr.strip().splitlines() or ["?"])[-1][:300])
            raise RuntimeError(f"TFLiteConverter full int8: {why}")

    attempt("tflite_int8", tflite_dynamic)
    if calibration is not None:
        attempt("tflite_full_int8", tflite_full_int8)
    attempt("onnx_int8", onnx_dynamic)
    return seconds


def convert(model_path, out_dir, keras_model, input_shapes, versions, log, int8=True, calibration=None):
    """Returns {"saved_model": dir, "tflite": file, "onnx": file, "tflite_int8": file,
    "tflite_full_int8": file, "onnx_int8": file, "seconds": {...}} (an int8 file may be missing:
    see _int8). calibration: one [N, *shape] float32 array per input (a fixed seeded draw, so the
    cache stays valid), for the full-int8 file."""
    import tensorflow as tf
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = out_dir / "stamp"
    paths = {"saved_model": str(out_dir / "saved_model"), "tflite": str(out_dir / "model.tflite"),
             "onnx": str(out_dir / "model.onnx")}
    int8_paths = {"tflite_int8": str(out_dir / "model_int8_dynamic.tflite"),
                  "tflite_full_int8": str(out_dir / "model_int8_full.tflite"),
                  "onnx_int8": str(out_dir / "model_int8_dynamic.onnx")}
    key = _fingerprint(model_path, versions)
    if stamp.exists() and stamp.read_text() == key and all(os.path.exists(p) for p in paths.values()):
        log(f"    conversions cached in {out_dir}")
        seconds = _int8(paths | int8_paths, log, calibration) if int8 else {}
        return dict(paths, **int8_paths, seconds=seconds)
    for p in int8_paths.values():  # stale int8 files from other weights or versions
        for f in (pathlib.Path(p), pathlib.Path(p + ".failed")):
            f.unlink(missing_ok=True)

    seconds = {}
    specs = [tf.TensorSpec((1,) + tuple(s), tf.float32, name="x" if len(input_shapes) == 1 else f"x{i}")
             for i, s in enumerate(input_shapes)]
    t = time.perf_counter()
    # One input: its spec; several (a Functional model's list of inputs): one list of specs.
    signature = specs if len(specs) == 1 else [specs]
    keras_model.export(paths["saved_model"], format="tf_saved_model", verbose=False, input_signature=signature)
    seconds["saved_model"] = time.perf_counter() - t

    t = time.perf_counter()
    converter = tf.lite.TFLiteConverter.from_saved_model(paths["saved_model"])
    pathlib.Path(paths["tflite"]).write_bytes(converter.convert())
    seconds["tflite"] = time.perf_counter() - t

    import tf2onnx
    t = time.perf_counter()
    if len(specs) == 1:
        fn = tf.function(lambda x: keras_model(x, training=False))
    else:
        fn = tf.function(lambda *x: keras_model(list(x), training=False))
    tf2onnx.convert.from_function(fn, input_signature=tuple(specs), opset=17, output_path=paths["onnx"])
    seconds["onnx"] = time.perf_counter() - t
    stamp.write_text(key)
    if int8:
        seconds.update(_int8(paths | int8_paths, log, calibration))
    log("    converted: " + ", ".join(f"{k} {v:.1f} s" for k, v in seconds.items()))
    return dict(paths, **int8_paths, seconds=seconds)


def full_int8_child(saved_model, calibration_npz, out):
    """TFLiteConverter full int8 of a SavedModel: int8 weights and activations (TFLITE_BUILTINS_INT8
    only), calibrated on the windows in calibration_npz (one array per input, in order), float
    input and output as the converter leaves them by default."""
    import tensorflow as tf
    with np.load(calibration_npz) as z:
        calibration = [z[f"arr_{i}"] for i in range(len(z.files))]
    converter = tf.lite.TFLiteConverter.from_saved_model(saved_model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]

    def representative():
        for r in range(calibration[0].shape[0]):
            yield [c[r:r + 1] for c in calibration]
    converter.representative_dataset = representative
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    pathlib.Path(out).write_bytes(converter.convert())


if __name__ == "__main__" and len(sys.argv) == 5 and sys.argv[1] == "--full-int8":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    full_int8_child(*sys.argv[2:])
