#!/usr/bin/env python3
"""A TFLite file that reads a resource variable nothing assigns, as TF 2.21's converter writes it.

Converting a batch-1 concrete function of a stacked-LSTM Keras 3 model with
TFLiteConverter.from_concrete_functions (no freezing of its variables) leaves VAR_HANDLE +
READ_VARIABLE ops for the weights with no ASSIGN_VARIABLE anywhere: TFLite's own interpreter
fails to invoke the file (read_variable.cc: variable != nullptr). tickinfer must refuse it by the
variable's name instead of reading zeros (tests/quant_control_flow_test.cpp). This script checks
that the interpreter indeed fails, then writes the file.

  .venv/bin/python tools/make_unassigned_variable_fixture.py [--out tests/fixtures/tflite_unassigned_variable]
"""
import argparse
import os

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402
from ai_edge_litert import interpreter as litert  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures",
                                                  "tflite_unassigned_variable"))
    a = ap.parse_args()
    keras.utils.set_random_seed(1)
    inp = keras.Input((8, 4), batch_size=1)
    x = keras.layers.LSTM(8, return_sequences=True)(inp)
    x = keras.layers.LSTM(8)(x)
    model = keras.Model(inp, keras.layers.Dense(1)(x))
    fn = tf.function(lambda t: model(t)).get_concrete_function(tf.TensorSpec([1, 8, 4], tf.float32))
    conv = tf.lite.TFLiteConverter.from_concrete_functions([fn], model)
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    blob = conv.convert()
    it = litert.Interpreter(model_content=blob)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], np.ones((1, 8, 4), np.float32))
    try:
        it.invoke()
        raise SystemExit("the converter initialized the variables this time: no fixture written")
    except RuntimeError as e:
        print("TFLite refuses it too:", str(e).splitlines()[0][:160])
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "stacked_lstm_concrete_fn.tflite"), "wb") as f:
        f.write(blob)


if __name__ == "__main__":
    main()
