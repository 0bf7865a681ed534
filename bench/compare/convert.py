"""Converting a bench-suite Keras model into the formats the peers run.

Every peer gets the same weights at batch 1 with fixed shapes, converted the way a user of that
runtime would:
  - TFLite (LiteRT): Keras `model.export` to a SavedModel with a fixed [1, ...] signature, then
    tf.lite.TFLiteConverter.from_saved_model. The fixed batch lets the converter fuse LSTM into
    TFLite's UnidirectionalSequenceLSTM (a dynamic batch leaves TensorList ops it cannot lower).
  - ONNX: tf2onnx.convert.from_function on the same tf.function (opset 17). tf2onnx 1.17 does not
    accept Keras 3 models in from_keras, but converts the traced TensorFlow graph.
  - OpenVINO: ov.convert_model on the TFLite file. Its ONNX frontend rejects the Loop tf2onnx
    emits for a Keras 3 LSTM, and from the SavedModel it measured 2-4x slower than from TFLite.
Files are cached under OUT/<model>/ keyed by the model file's hash and the converter versions.
"""
import hashlib
import json
import os
import pathlib
import time


def _fingerprint(model_path, versions):
    h = hashlib.sha256(pathlib.Path(model_path).read_bytes())
    h.update(json.dumps(versions, sort_keys=True).encode())
    return h.hexdigest()[:16]


def convert(model_path, out_dir, keras_model, input_shape, versions, log):
    """Returns {"saved_model": dir, "tflite": file, "onnx": file, "seconds": {...}}."""
    import tensorflow as tf
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = out_dir / "stamp"
    paths = {"saved_model": str(out_dir / "saved_model"), "tflite": str(out_dir / "model.tflite"),
             "onnx": str(out_dir / "model.onnx")}
    key = _fingerprint(model_path, versions)
    if stamp.exists() and stamp.read_text() == key and all(os.path.exists(p) for p in paths.values()):
        log(f"    conversions cached in {out_dir}")
        return dict(paths, seconds={})

    seconds = {}
    spec = tf.TensorSpec((1,) + tuple(input_shape), tf.float32, name="x")
    t = time.perf_counter()
    keras_model.export(paths["saved_model"], format="tf_saved_model", verbose=False, input_signature=[spec])
    seconds["saved_model"] = time.perf_counter() - t

    t = time.perf_counter()
    converter = tf.lite.TFLiteConverter.from_saved_model(paths["saved_model"])
    pathlib.Path(paths["tflite"]).write_bytes(converter.convert())
    seconds["tflite"] = time.perf_counter() - t

    import tf2onnx
    t = time.perf_counter()
    fn = tf.function(lambda x: keras_model(x, training=False))
    tf2onnx.convert.from_function(fn, input_signature=(spec,), opset=17, output_path=paths["onnx"])
    seconds["onnx"] = time.perf_counter() - t

    stamp.write_text(key)
    log("    converted: " + ", ".join(f"{k} {v:.1f} s" for k, v in seconds.items()))
    return dict(paths, seconds=seconds)
