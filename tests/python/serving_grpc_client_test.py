"""tickinfer serve against the official TF Serving Python client (tensorflow-serving-api, grpcio):
Predict (tensor_content and typed float_val inputs, one- and two-input models), GetModelMetadata,
GetModelStatus, the gRPC health service, and error codes. Expected outputs are the ones Keras
produced (in*.npy -> out*.npy); REST and gRPC must agree. Every test runs against both gRPC
implementations of the server: tickinfer's own HTTP/2 server (the default on an insecure port)
and grpc++'s (--grpc_implementation=grpcpp, what TLS and unix sockets use).

Run: tools/setup_serving_venv.sh && TICKINFER_BIN=build/tickinfer .venv-serving/bin/python -m pytest -q tests/python
"""
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request

import grpc
import numpy as np
import pytest
import tensorflow as tf
from grpc_health.v1 import health_pb2, health_pb2_grpc
from tensorflow_serving.apis import (
    classification_pb2,
    get_model_metadata_pb2,
    get_model_status_pb2,
    model_service_pb2_grpc,
    predict_pb2,
    prediction_service_pb2_grpc,
)
from serving_support import ROOT, BIN, MLP, RTOL, ATOL, free_port

TWO = os.path.join(ROOT, "tests", "fixtures", "merge_two_in_two_out_k3")


@pytest.fixture(scope="module", params=["native", "grpcpp"])
def server(request):
    work = tempfile.mkdtemp(prefix="tickinfer_grpc_")
    for name, src, version in (("mlp", MLP, "1"), ("two", TWO, "5")):
        os.makedirs(os.path.join(work, name, version))
        shutil.copy(os.path.join(src, "model.keras"), os.path.join(work, name, version, "model.keras"))
    with open(os.path.join(work, "models.config"), "w") as f:
        f.write('model_config_list { config { name: "mlp" base_path: "%s/mlp" }\n'
                '  config { name: "two" base_path: "%s/two" version_labels { key: "stable" value: 5 } } }\n'
                % (work, work))
    gport, rport = free_port(), free_port()
    proc = subprocess.Popen([BIN, "serve", "--port=%d" % gport, "--rest_api_port=%d" % rport,
                             "--rest_api_bind_address=127.0.0.1",
                             "--model_config_file=" + os.path.join(work, "models.config"),
                             "--file_system_poll_wait_seconds=-1",
                             "--grpc_implementation=" + request.param], stderr=subprocess.PIPE)
    channel = grpc.insecure_channel("127.0.0.1:%d" % gport)
    health = health_pb2_grpc.HealthStub(channel)
    deadline = time.time() + 30
    while True:
        try:
            r = health.Check(health_pb2.HealthCheckRequest(service="tensorflow.serving.PredictionService"), timeout=1)
            if r.status == health_pb2.HealthCheckResponse.SERVING:
                break
        except grpc.RpcError:
            pass
        if time.time() > deadline or proc.poll() is not None:
            proc.kill()
            raise RuntimeError("server did not become ready: " + proc.stderr.read().decode())
        time.sleep(0.1)
    yield {"channel": channel, "rest": rport, "health": health}
    channel.close()
    proc.terminate()
    proc.wait(timeout=10)
    shutil.rmtree(work)


def predict_stub(server):
    return prediction_service_pb2_grpc.PredictionServiceStub(server["channel"])


def test_health_service_reports_serving(server):
    for service in ("", "tensorflow.serving.PredictionService", "tensorflow.serving.ModelService"):
        r = server["health"].Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
        assert r.status == health_pb2.HealthCheckResponse.SERVING


def test_health_watch_streams_the_status(server):
    stream = server["health"].Watch(health_pb2.HealthCheckRequest(service="tensorflow.serving.ModelService"), timeout=5)
    first = next(stream)
    assert first.status == health_pb2.HealthCheckResponse.SERVING
    stream.cancel()
    unknown = server["health"].Watch(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=5)
    assert next(unknown).status == health_pb2.HealthCheckResponse.SERVICE_UNKNOWN
    unknown.cancel()


def test_predict_tensor_content_matches_keras(server):
    x = np.load(os.path.join(MLP, "in0.npy")).astype(np.float32)
    y = np.load(os.path.join(MLP, "out0.npy"))
    req = predict_pb2.PredictRequest()
    req.model_spec.name = "mlp"
    req.model_spec.signature_name = "serving_default"
    req.inputs["input_layer"].CopyFrom(tf.make_tensor_proto(x))  # tensor_content
    assert req.inputs["input_layer"].tensor_content
    resp = predict_stub(server).Predict(req, timeout=10)
    assert resp.model_spec.name == "mlp"
    assert resp.model_spec.version.value == 1
    got = tf.make_ndarray(resp.outputs["dense_3"])
    assert got.shape == y.shape
    np.testing.assert_allclose(got, y, rtol=RTOL, atol=ATOL)


def test_predict_typed_float_val_and_version(server):
    x = np.load(os.path.join(MLP, "in0.npy")).astype(np.float32)
    y = np.load(os.path.join(MLP, "out0.npy"))
    req = predict_pb2.PredictRequest()
    req.model_spec.name = "mlp"
    req.model_spec.version.value = 1
    t = req.inputs["input_layer"]
    t.dtype = tf.float32.as_datatype_enum
    for d in x[:3].shape:
        t.tensor_shape.dim.add().size = d
    t.float_val.extend(x[:3].ravel().tolist())
    resp = predict_stub(server).Predict(req, timeout=10)
    np.testing.assert_allclose(tf.make_ndarray(resp.outputs["dense_3"]), y[:3], rtol=RTOL, atol=ATOL)
    # double input is converted
    req.inputs["input_layer"].CopyFrom(tf.make_tensor_proto(x[:2].astype(np.float64)))
    resp = predict_stub(server).Predict(req, timeout=10)
    np.testing.assert_allclose(tf.make_ndarray(resp.outputs["dense_3"]), y[:2], rtol=RTOL, atol=ATOL)


def test_two_inputs_two_outputs_label_and_output_filter(server):
    x0 = np.load(os.path.join(TWO, "in0.npy")).astype(np.float32)
    x1 = np.load(os.path.join(TWO, "in1.npy")).astype(np.float32)
    y0 = np.load(os.path.join(TWO, "out0.npy"))
    y1 = np.load(os.path.join(TWO, "out1.npy"))
    req = predict_pb2.PredictRequest()
    req.model_spec.name = "two"
    req.model_spec.version_label = "stable"
    req.inputs["input_layer"].CopyFrom(tf.make_tensor_proto(x0))
    req.inputs["input_layer_1"].CopyFrom(tf.make_tensor_proto(x1))
    resp = predict_stub(server).Predict(req, timeout=10)
    assert resp.model_spec.version.value == 5
    np.testing.assert_allclose(tf.make_ndarray(resp.outputs["dense_3"]), y0, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(tf.make_ndarray(resp.outputs["dense_4"]), y1, rtol=RTOL, atol=ATOL)
    req.output_filter.append("dense_4")
    resp = predict_stub(server).Predict(req, timeout=10)
    assert list(resp.outputs.keys()) == ["dense_4"]


def test_rest_and_grpc_agree(server):
    x = np.load(os.path.join(MLP, "in0.npy")).astype(np.float32)
    body = json.dumps({"instances": x.tolist()}).encode()
    r = urllib.request.urlopen(urllib.request.Request(
        "http://127.0.0.1:%d/v1/models/mlp:predict" % server["rest"], data=body), timeout=10)
    rest = np.array(json.load(r)["predictions"], dtype=np.float32)
    req = predict_pb2.PredictRequest()
    req.model_spec.name = "mlp"
    req.inputs["input_layer"].CopyFrom(tf.make_tensor_proto(x))
    grpc_out = tf.make_ndarray(predict_stub(server).Predict(req, timeout=10).outputs["dense_3"])
    np.testing.assert_array_equal(rest, grpc_out)


def test_get_model_metadata(server):
    req = get_model_metadata_pb2.GetModelMetadataRequest()
    req.model_spec.name = "two"
    req.metadata_field.append("signature_def")
    resp = predict_stub(server).GetModelMetadata(req, timeout=10)
    assert resp.model_spec.version.value == 5
    sigs = get_model_metadata_pb2.SignatureDefMap()
    assert resp.metadata["signature_def"].Unpack(sigs)
    sig = sigs.signature_def["serving_default"]
    assert sig.method_name == "tensorflow/serving/predict"
    assert sorted(sig.inputs.keys()) == ["input_layer", "input_layer_1"]
    assert [d.size for d in sig.inputs["input_layer"].tensor_shape.dim] == [-1, 8]
    assert sig.inputs["input_layer"].dtype == tf.float32.as_datatype_enum
    assert [d.size for d in sig.outputs["dense_4"].tensor_shape.dim] == [-1, 2]


def test_get_model_status(server):
    stub = model_service_pb2_grpc.ModelServiceStub(server["channel"])
    req = get_model_status_pb2.GetModelStatusRequest()
    req.model_spec.name = "mlp"
    resp = stub.GetModelStatus(req, timeout=10)
    assert len(resp.model_version_status) == 1
    v = resp.model_version_status[0]
    assert v.version == 1
    assert v.state == get_model_status_pb2.ModelVersionStatus.AVAILABLE
    assert v.status.error_code == 0


def test_errors_have_grpc_codes(server):
    stub = predict_stub(server)
    req = predict_pb2.PredictRequest()
    req.model_spec.name = "nope"
    req.inputs["input_layer"].CopyFrom(tf.make_tensor_proto(np.zeros((1, 10), np.float32)))
    with pytest.raises(grpc.RpcError) as e:
        stub.Predict(req, timeout=10)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    req.model_spec.name = "mlp"
    req.inputs["input_layer"].CopyFrom(tf.make_tensor_proto(np.zeros((1, 9), np.float32)))
    with pytest.raises(grpc.RpcError) as e:
        stub.Predict(req, timeout=10)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "shape" in e.value.details()
    req.inputs["input_layer"].CopyFrom(tf.make_tensor_proto(np.full((1, 10), np.nan, np.float32)))
    with pytest.raises(grpc.RpcError) as e:
        stub.Predict(req, timeout=10)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    creq = classification_pb2.ClassificationRequest()
    creq.model_spec.name = "mlp"
    with pytest.raises(grpc.RpcError) as e:
        stub.Classify(creq, timeout=10)
    # A Keras model's signature is a predict signature: TF Serving's check of its shape.
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "No classification inputs found" in e.value.details()
