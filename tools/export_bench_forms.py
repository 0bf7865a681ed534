#!/usr/bin/env python3
"""Writes every bench-suite model (bench/models/<name>/model.keras) in the other forms users
bring, for `tools/bench_forms.py` to time against the `.keras` original in one run:

  <out>/<name>/savedmodel/     Keras 3 `model.export(dir)` (what TF Serving loads)
  <out>/<name>/model.onnx      tf2onnx of the same Keras model (opset 15). A Keras 3 GRU becomes
                               an ONNX Loop (the converted tf.while), which tickinfer lifts onto
                               its GRU.
  <out>/<name>/keras3.tflite   TFLiteConverter.from_saved_model on a batch-1 Keras 3 export:
                               recurrent layers arrive as WHILE loops, not the fused LSTM op.

Each form's outputs on the model's committed inputs are checked against Keras here (float32,
1e-4 absolute) so a timing is never taken of a wrong conversion. Run with the venv of
tools/setup_venv.sh:  .venv/bin/python tools/export_bench_forms.py --out build/bench_forms
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def to_onnx(model, path):
    import tensorflow as tf
    import tf2onnx
    spec = tf.TensorSpec((None,) + tuple(model.input_shape[1:]), tf.float32, name="x")
    fn = tf.function(lambda x: model(x, training=False), input_signature=[spec])
    tf2onnx.convert.from_function(fn, input_signature=[spec], opset=15, output_path=path)


def to_keras3_tflite(model, path, scratch):
    import tensorflow as tf
    spec = tf.TensorSpec((1,) + tuple(model.input_shape[1:]), tf.float32)
    model.export(scratch, input_signature=[spec], verbose=False)
    conv = tf.lite.TFLiteConverter.from_saved_model(scratch)
    with open(path, "wb") as f:
        f.write(conv.convert())
    shutil.rmtree(scratch)


def check(label, got, want):
    err = float(np.max(np.abs(got - want)))
    if not err <= 1e-4:
        raise SystemExit(f"export_bench_forms: {label} differs from Keras by {err}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", nargs="*", help="bench-suite names (default: all)")
    ap.add_argument("--suite", default=os.path.join("bench", "models"),
                    help="the suite folder with manifest.json (bench/book_models: the book models)")
    args = ap.parse_args()
    import keras
    import onnxruntime as ort
    import tensorflow as tf
    from ai_edge_litert.interpreter import Interpreter

    suite = os.path.join(ROOT, args.suite)
    manifest = json.load(open(os.path.join(suite, "manifest.json")))
    written = {}
    for case in manifest["cases"]:
        name = case["name"]
        if args.models and name not in args.models:
            continue
        src = os.path.join(suite, name)
        out = os.path.join(args.out, name)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        model = keras.saving.load_model(os.path.join(src, "model.keras"))
        x = np.load(os.path.join(src, "in0.npy"))[:4].astype(np.float32)
        want = np.asarray(model(x, training=False))

        model.export(os.path.join(out, "savedmodel"), verbose=False)
        served = tf.saved_model.load(os.path.join(out, "savedmodel")).signatures["serving_default"]
        check(f"{name} savedmodel", np.asarray(list(served(tf.constant(x)).values())[0]), want)

        to_onnx(model, os.path.join(out, "model.onnx"))
        sess = ort.InferenceSession(os.path.join(out, "model.onnx"), providers=["CPUExecutionProvider"])
        check(f"{name} onnx", sess.run(None, {sess.get_inputs()[0].name: x})[0], want)

        to_keras3_tflite(model, os.path.join(out, "keras3.tflite"), os.path.join(out, "_export"))
        interp = Interpreter(model_path=os.path.join(out, "keras3.tflite"))
        interp.allocate_tensors()
        inp, outp = interp.get_input_details()[0], interp.get_output_details()[0]
        rows = []
        for r in range(x.shape[0]):
            interp.set_tensor(inp["index"], x[r:r + 1])
            interp.invoke()
            rows.append(interp.get_tensor(outp["index"])[0])
        check(f"{name} keras3.tflite", np.stack(rows), want)
        written[name] = {"savedmodel": "savedmodel", "onnx": "model.onnx", "onnx_from": "keras3",
                         "keras3_tflite": "keras3.tflite"}
        print(f"export_bench_forms: {name}: savedmodel, onnx, keras3.tflite", file=sys.stderr)
    with open(os.path.join(args.out, "forms.json"), "w") as f:
        json.dump({"tensorflow": tf.__version__, "keras": keras.__version__, "models": written}, f, indent=1)


if __name__ == "__main__":
    main()
