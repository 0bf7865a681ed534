#!/usr/bin/env python3
"""Writes the serving test fixtures with TensorFlow as the independent implementation:

  tests/fixtures/serving/mlp_small_warmup/tf_serving_warmup_requests
      A TFRecord file (tf.io.TFRecordWriter: framing and masked CRC-32C by TensorFlow) of 3
      PredictionLog records for bench/models/mlp_small: TensorProtos from tf.make_tensor_proto
      (tensor_content for the first two, typed float_val for the third), wrapped in
      PredictLog.request (field numbers from tensorflow_serving/apis/prediction_log.proto and
      predict.proto), so the server's decoder is checked against TensorFlow's encoder.

Usage: .venv/bin/python tools/make_serving_fixtures.py [--out tests/fixtures/serving]
"""
import argparse
import os

import numpy as np
import tensorflow as tf


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(number, payload):  # length-delimited field
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def predict_log(model_name, inputs):
    spec = field(1, model_name.encode())  # ModelSpec.name = 1
    req = field(1, spec)  # PredictRequest.model_spec = 1
    for key, tensor_proto in inputs.items():
        entry = field(1, key.encode()) + field(2, tensor_proto.SerializeToString())
        req += field(2, entry)  # map<string, TensorProto> inputs = 2
    return field(6, field(1, req))  # PredictionLog.predict_log = 6 { PredictLog.request = 1 }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="tests/fixtures/serving")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    x = np.load(os.path.join(root, "bench/models/mlp_small/in0.npy")).astype(np.float32)
    out_dir = os.path.join(args.out, "mlp_small_warmup")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "tf_serving_warmup_requests")
    with tf.io.TFRecordWriter(path) as w:
        w.write(predict_log("mlp", {"input_layer": tf.make_tensor_proto(x[:1])}))
        w.write(predict_log("mlp", {"input_layer": tf.make_tensor_proto(x[:4])}))
        typed = tf.make_tensor_proto(x[4:6])
        typed.ClearField("tensor_content")
        typed.float_val.extend(x[4:6].ravel().tolist())
        w.write(predict_log("mlp", {"input_layer": typed}))
    print("wrote", path)


if __name__ == "__main__":
    main()
