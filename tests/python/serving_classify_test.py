"""tickinfer serve's Classify, Regress and MultiInference against the official TF Serving Python
client (tensorflow-serving-api: its classification / regression / inference protos, tf.train.Example
built by TensorFlow), on the committed SavedModel tests/fixtures/serving/classify/1. Expected
outputs are the ones TensorFlow computed (expected.json, tools/make_classify_fixtures.py); the REST
verbs must agree with gRPC. Runs against both gRPC implementations of the server.

Run: tools/setup_serving_venv.sh && TICKINFER_BIN=build/tickinfer .venv-serving/bin/python -m pytest -q tests/python
"""
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import grpc
import numpy as np
import pytest
import tensorflow as tf
from tensorflow_serving.apis import (
    classification_pb2,
    inference_pb2,
    prediction_service_pb2_grpc,
    regression_pb2,
)
from serving_support import ROOT, BIN, free_port

FIXTURE = os.path.join(ROOT, "tests", "fixtures", "serving", "classify")
with open(os.path.join(FIXTURE, "expected.json")) as f:
    EXPECTED = json.load(f)
RTOL, ATOL = EXPECTED["tolerance"]["rtol"], EXPECTED["tolerance"]["atol"]


def tf_example(features):
    return tf.train.Example(features=tf.train.Features(feature={
        k: tf.train.Feature(float_list=tf.train.FloatList(value=v)) for k, v in features.items()}))


@pytest.fixture(scope="module", params=["native", "grpcpp"])
def server(request):
    work = tempfile.mkdtemp(prefix="tickinfer_classify_")
    shutil.copytree(os.path.join(FIXTURE, "1"), os.path.join(work, "cls", "1"))
    with open(os.path.join(work, "monitoring.config"), "w") as f:
        f.write('prometheus_config { enable: true path: "/metrics" }\n')
    gport, rport = free_port(), free_port()
    proc = subprocess.Popen([BIN, "serve", "--port=%d" % gport, "--rest_api_port=%d" % rport,
                             "--rest_api_bind_address=127.0.0.1", "--model_name=cls",
                             "--model_base_path=" + os.path.join(work, "cls"),
                             "--file_system_poll_wait_seconds=-1",
                             "--monitoring_config_file=" + os.path.join(work, "monitoring.config"),
                             "--grpc_implementation=" + request.param], stderr=subprocess.PIPE)
    deadline = time.time() + 30
    while True:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/v1/models/cls" % rport, timeout=1) as r:
                if json.load(r)["model_version_status"][0]["state"] == "AVAILABLE":
                    break
        except (OSError, ValueError, KeyError):
            pass
        if time.time() > deadline or proc.poll() is not None:
            proc.kill()
            raise RuntimeError("server did not become ready: " + proc.stderr.read().decode())
        time.sleep(0.1)
    channel = grpc.insecure_channel("127.0.0.1:%d" % gport)
    yield {"stub": prediction_service_pb2_grpc.PredictionServiceStub(channel), "rest": rport}
    channel.close()
    proc.terminate()
    proc.wait(timeout=10)
    shutil.rmtree(work)


def add_examples(input_proto):
    for e in EXPECTED["examples"]:
        input_proto.example_list.examples.add().CopyFrom(tf_example(e))


def check_classes(result, first=0):
    want = EXPECTED["classify"]
    for r, c in enumerate(result.classifications):
        assert [k.label for k in c.classes] == want["classes"][first + r]
        np.testing.assert_allclose([k.score for k in c.classes], want["scores"][first + r], rtol=RTOL, atol=ATOL)


def test_classify_matches_tensorflow(server):
    req = classification_pb2.ClassificationRequest()
    req.model_spec.name = "cls"
    req.model_spec.signature_name = "classify"
    add_examples(req.input)
    resp = server["stub"].Classify(req, timeout=10)
    assert len(resp.result.classifications) == len(EXPECTED["examples"])
    check_classes(resp.result)
    assert resp.model_spec.name == "cls"
    assert resp.model_spec.version.value == 1
    assert resp.model_spec.signature_name == "classify"


def test_regress_matches_tensorflow_and_rest_agrees(server):
    req = regression_pb2.RegressionRequest()
    req.model_spec.name = "cls"
    req.model_spec.signature_name = "regress"
    add_examples(req.input)
    resp = server["stub"].Regress(req, timeout=10)
    got = [r.value for r in resp.result.regressions]
    np.testing.assert_allclose(got, EXPECTED["regress"]["outputs"], rtol=RTOL, atol=ATOL)
    body = json.dumps({"signature_name": "regress", "examples": EXPECTED["examples"]}).encode()
    with urllib.request.urlopen(urllib.request.Request(
            "http://127.0.0.1:%d/v1/models/cls:regress" % server["rest"], data=body), timeout=10) as r:
        rest = json.load(r)["results"]
    np.testing.assert_allclose(rest, got, rtol=1e-7, atol=0)  # the same floats, printed and read back


def test_classify_with_context(server):
    e0 = EXPECTED["examples"][0]
    req = classification_pb2.ClassificationRequest()
    req.model_spec.name = "cls"
    req.model_spec.signature_name = "classify"
    req.input.example_list_with_context.context.CopyFrom(tf_example({"w": e0["w"]}))
    req.input.example_list_with_context.examples.add().CopyFrom(tf_example({"x": e0["x"]}))
    resp = server["stub"].Classify(req, timeout=10)
    check_classes(resp.result)


def test_multi_inference_classify_and_regress(server):
    req = inference_pb2.MultiInferenceRequest()
    for sig, method in (("classify", "tensorflow/serving/classify"), ("regress", "tensorflow/serving/regress")):
        task = req.tasks.add()
        task.model_spec.name = "cls"
        task.model_spec.signature_name = sig
        task.method_name = method
    add_examples(req.input)
    resp = server["stub"].MultiInference(req, timeout=10)
    assert len(resp.results) == 2
    check_classes(resp.results[0].classification_result)
    np.testing.assert_allclose([r.value for r in resp.results[1].regression_result.regressions],
                               EXPECTED["regress"]["outputs"], rtol=RTOL, atol=ATOL)
    assert resp.results[1].model_spec.signature_name == "regress"
    assert resp.results[1].model_spec.version.value == 1
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % server["rest"], timeout=10) as r:
        metrics = r.read().decode()
    assert 'request_latency_count{model_name="cls",API="MultiInference",entrypoint="GRPC"} 1' in metrics
    assert 'request_latency_count{model_name="cls",API="Classify",entrypoint="GRPC"}' in metrics


def test_errors_have_tf_serving_codes(server):
    stub = server["stub"]
    req = classification_pb2.ClassificationRequest()
    req.model_spec.name = "cls"
    req.model_spec.signature_name = "classify"
    with pytest.raises(grpc.RpcError) as e:
        stub.Classify(req, timeout=10)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and e.value.details() == "Input is empty."
    req.input.example_list.examples.add().CopyFrom(tf_example({"w": [1.0, 2.0]}))
    with pytest.raises(grpc.RpcError) as e:
        stub.Classify(req, timeout=10)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "Feature: x (data type: float) is required but could not be found." in e.value.details()
    req.model_spec.signature_name = "sparse"
    with pytest.raises(grpc.RpcError) as e:
        stub.Classify(req, timeout=10)
    assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED and "VarLenFeature" in e.value.details()
    req.model_spec.signature_name = "nope"
    with pytest.raises(grpc.RpcError) as e:
        stub.Classify(req, timeout=10)
    assert e.value.details() == "No signature was found with the name: nope"
    multi = inference_pb2.MultiInferenceRequest()
    for name in ("cls", "other"):
        task = multi.tasks.add()
        task.model_spec.name = name
        task.model_spec.signature_name = "classify" if name == "cls" else "regress"
        task.method_name = "tensorflow/serving/classify"
    multi.input.example_list.examples.add().CopyFrom(tf_example(EXPECTED["examples"][0]))
    with pytest.raises(grpc.RpcError) as e:
        stub.MultiInference(multi, timeout=10)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "must access the same model name" in e.value.details()
    body = json.dumps({"signature_name": "classify", "examples": [{"x": [1, 2]}]}).encode()
    with pytest.raises(urllib.error.HTTPError) as h:
        urllib.request.urlopen(urllib.request.Request(
            "http://127.0.0.1:%d/v1/models/cls:classify" % server["rest"], data=body), timeout=10)
    assert h.value.code == 400
    assert "Data types don't match" in json.load(h.value)["error"]
