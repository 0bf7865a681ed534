#!/usr/bin/env python3
"""Writes the Classify / Regress fixture with TensorFlow as the independent implementation:

  tests/fixtures/serving/classify/1/            a SavedModel (tf.saved_model.save of a tf.Module)
      serving_default  predict:  x [-1,10], w [-1,2] -> scores [-1,3], value [-1,1]
      classify         inputs (serialized tf.Examples) -> classes (constant labels tiled over
                       the batch) and scores: tf.io.parse_example of x (FixedLenFeature([10]),
                       required) and w (FixedLenFeature([2]), default [0.5, -1.0]), then the MLP
      regress          inputs -> outputs [-1,1], the same features and hidden layer
      sparse           inputs -> scores, but x is a VarLenFeature (tickinfer must refuse it)
    After saving, saved_model.pb is edited (with TensorFlow's own protos) the way TF1 /
    Estimator exports look: classify and regress carry the method names tensorflow/serving/classify
    and tensorflow/serving/regress, and regress reads the same input placeholder as classify, so a
    MultiInference over both is valid for TF Serving (it requires one input tensor for all tasks).
  tests/fixtures/serving/classify/expected.json
      The examples (features as JSON, and serialized by tf.train.Example, base64), and what
      TensorFlow computes for them: the classify and regress signatures run by a TF1 session on
      the edited graph (tensor names from the SignatureDefs, as TF Serving runs them), and the
      predict signature on the dense features.
  tests/fixtures/serving/classify/corpus/*.pb   serialized examples, the decoder fuzzer's seeds.

Usage: .venv/bin/python tools/make_classify_fixtures.py [--out tests/fixtures/serving]
"""
import argparse
import base64
import json
import os
import shutil

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

LABELS = [b"down", b"flat", b"up"]
W_DEFAULT = [0.5, -1.0]
DENSE = {
    "x": tf.io.FixedLenFeature([10], tf.float32),
    "w": tf.io.FixedLenFeature([2], tf.float32, default_value=W_DEFAULT),
}


class Mlp(tf.Module):
    def __init__(self, rng):
        super().__init__()
        def var(*shape):
            return tf.Variable(rng.normal(0, 0.5, shape).astype(np.float32))
        self.w1, self.b1 = var(12, 16), var(16)
        self.w2, self.b2 = var(16, 3), var(3)
        self.w3, self.b3 = var(16, 1), var(1)

    def hidden(self, x, w):
        return tf.nn.relu(tf.matmul(tf.concat([x, w], axis=1), self.w1) + self.b1)

    def scores(self, h):
        return tf.nn.softmax(tf.matmul(h, self.w2) + self.b2)

    @tf.function(input_signature=[tf.TensorSpec([None, 10], tf.float32, name="x"),
                                  tf.TensorSpec([None, 2], tf.float32, name="w")])
    def predict(self, x, w):
        h = self.hidden(x, w)
        return {"scores": self.scores(h), "value": tf.matmul(h, self.w3) + self.b3}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    def classify(self, inputs):
        f = tf.io.parse_example(inputs, DENSE)
        scores = self.scores(self.hidden(f["x"], f["w"]))
        classes = tf.tile(tf.constant([LABELS]), [tf.shape(scores)[0], 1])
        return {"classes": classes, "scores": scores}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    def regress(self, inputs):
        f = tf.io.parse_example(inputs, DENSE)
        return {"outputs": tf.matmul(self.hidden(f["x"], f["w"]), self.w3) + self.b3}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    def sparse(self, inputs):
        f = tf.io.parse_example(inputs, {"x": tf.io.VarLenFeature(tf.float32), "w": DENSE["w"]})
        x = tf.sparse.to_dense(f["x"])
        return {"scores": self.scores(self.hidden(x, f["w"]))}


def edit_as_tf_serving_export(pb_path):
    """Method names of TF Serving's classify / regress signatures, and one shared input tensor."""
    sm = saved_model_pb2.SavedModel()
    with open(pb_path, "rb") as f:
        sm.ParseFromString(f.read())
    mg = sm.meta_graphs[0]
    sigs = mg.signature_def
    sigs["classify"].method_name = "tensorflow/serving/classify"
    sigs["regress"].method_name = "tensorflow/serving/regress"
    shared = sigs["classify"].inputs["inputs"].name          # classify_inputs:0
    old = sigs["regress"].inputs["inputs"].name.split(":")[0]  # regress_inputs
    sigs["regress"].inputs["inputs"].name = shared
    call = sigs["regress"].outputs["outputs"].name.split(":")[0]
    for node in mg.graph_def.node:
        if node.name == call:
            node.input[:] = [shared.split(":")[0] if i == old else i for i in node.input]
    with open(pb_path, "wb") as f:
        f.write(sm.SerializeToString())


def feature(values):
    return tf.train.Feature(float_list=tf.train.FloatList(value=values))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="tests/fixtures/serving")
    args = ap.parse_args()
    rng = np.random.default_rng(7)
    root = os.path.join(args.out, "classify")
    shutil.rmtree(root, ignore_errors=True)
    model_dir = os.path.join(root, "1")
    m = Mlp(rng)
    tf.saved_model.save(m, model_dir, signatures={"serving_default": m.predict, "classify": m.classify,
                                                  "regress": m.regress, "sparse": m.sparse})
    edit_as_tf_serving_export(os.path.join(model_dir, "saved_model.pb"))

    x = rng.normal(0, 1, (5, 10)).astype(np.float32)
    w = rng.normal(0, 1, (5, 2)).astype(np.float32)
    examples = []
    for i in range(5):
        feats = {"x": x[i].tolist()}
        if i != 3:  # example 3 leaves w out: it takes the default
            feats["w"] = w[i].tolist()
        examples.append(feats)
    w_used = np.array([w[i] if i != 3 else W_DEFAULT for i in range(5)], np.float32)
    serialized = [tf.train.Example(features=tf.train.Features(feature={k: feature(v) for k, v in e.items()}))
                  .SerializeToString() for e in examples]

    with tf.compat.v1.Session(graph=tf.Graph()) as sess:
        meta = tf.compat.v1.saved_model.loader.load(sess, ["serve"], model_dir)
        sig = meta.signature_def

        def run(name, keys, feed):
            s = sig[name]
            fetch = [s.outputs[k].name for k in keys]
            return sess.run(fetch, {s.inputs[k].name: v for k, v in feed.items()})

        classes, scores = run("classify", ["classes", "scores"], {"inputs": serialized})
        (outputs,) = run("regress", ["outputs"], {"inputs": serialized})
        p_scores, p_value = run("serving_default", ["scores", "value"], {"x": x, "w": w_used})
    np.testing.assert_allclose(p_scores, scores, rtol=1e-6)  # the example path parsed what was meant
    np.testing.assert_allclose(p_value, outputs, rtol=1e-6, atol=1e-7)

    expected = {
        "labels": [l.decode() for l in LABELS],
        "w_default": W_DEFAULT,
        "examples": examples,
        "serialized_b64": [base64.b64encode(s).decode() for s in serialized],
        "classify": {"classes": [[c.decode() for c in row] for row in classes], "scores": scores.tolist()},
        "regress": {"outputs": outputs.reshape(-1).tolist()},
        "predict": {"x": x.tolist(), "w": w_used.tolist(), "scores": p_scores.tolist(), "value": p_value.tolist()},
        "tolerance": {"rtol": 1e-5, "atol": 1e-6},
    }
    with open(os.path.join(root, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
    os.makedirs(os.path.join(root, "corpus"))
    for i, s in enumerate(serialized[:3]):
        with open(os.path.join(root, "corpus", "example%d.pb" % i), "wb") as f:
            f.write(s)
    print("wrote", root)


if __name__ == "__main__":
    main()
