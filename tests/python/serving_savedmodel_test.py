"""tickinfer serve on SavedModels exactly as TensorFlow writes them, against the official TF Serving
client. The models are built here with random weights by the installed Keras 3 and tf_keras and
saved three ways (Keras 3 `model.export(dir)`, `tf.saved_model.save(model, dir)`, tf_keras
`model.save(dir)`) into <base>/<version>/, the layout tensorflow_model_server loads; the signature
names, dtypes and shapes expected from GetModelMetadata are read back with TensorFlow itself
(tf.saved_model.load), and the expected outputs are Keras' own.

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
from tensorflow_serving.apis import (
    get_model_metadata_pb2,
    get_model_status_pb2,
    model_service_pb2_grpc,
    predict_pb2,
    prediction_service_pb2_grpc,
)
from serving_support import BIN, RTOL, ATOL, free_port

os.environ.setdefault("TF_USE_LEGACY_KERAS", "0")
T, F = 12, 5


def keras3_lstm():
    import keras
    keras.utils.set_random_seed(7)
    inp = keras.Input((T, F))
    h = keras.layers.LSTM(9)(inp)
    out = keras.layers.Dense(3, activation="sigmoid")(keras.layers.Dense(11, activation="relu")(h))
    return keras.Model(inp, out)


def keras3_mlp():
    import keras
    keras.utils.set_random_seed(8)
    return keras.Sequential([keras.Input((F,)), keras.layers.Dense(13, activation="tanh"), keras.layers.Dense(2)])


def tf_keras_gru():
    import tf_keras
    tf_keras.utils.set_random_seed(9)
    return tf_keras.Sequential([tf_keras.layers.InputLayer(input_shape=(T, F)), tf_keras.layers.GRU(6),
                                tf_keras.layers.Dense(1)])


# name -> (builder, how it is saved, input shape without the batch dim)
MODELS = {
    "k3_export": (keras3_lstm, lambda m, d: m.export(d, verbose=False), (T, F)),
    "k3_tf_save": (keras3_mlp, lambda m, d: tf.saved_model.save(m, d), (F,)),
    "tfk_save": (tf_keras_gru, lambda m, d: m.save(d, save_format="tf"), (T, F)),
}


@pytest.fixture(scope="module")
def server():
    work = tempfile.mkdtemp(prefix="tickinfer_savedmodel_")
    truth = {}
    rng = np.random.default_rng(3)
    config = "model_config_list {\n"
    for name, (build, save, shape) in MODELS.items():
        model = build()
        x = rng.standard_normal((4,) + shape).astype(np.float32)
        want = np.asarray(model(x, training=False))
        version_dir = os.path.join(work, name, "1")
        save(model, version_dir)
        sig = tf.saved_model.load(version_dir).signatures["serving_default"]
        inputs = {k: v for k, v in sig.structured_input_signature[1].items()}
        outputs = {k: v for k, v in sig.structured_outputs.items()}
        truth[name] = {"x": x, "y": want, "inputs": inputs, "outputs": outputs}
        config += '  config { name: "%s" base_path: "%s" model_platform: "tensorflow" }\n' % (
            name, os.path.join(work, name))
    config += "}\n"
    with open(os.path.join(work, "models.config"), "w") as f:
        f.write(config)
    gport, rport = free_port(), free_port()
    proc = subprocess.Popen([BIN, "serve", "--port=%d" % gport, "--rest_api_port=%d" % rport,
                             "--rest_api_bind_address=127.0.0.1",
                             "--model_config_file=" + os.path.join(work, "models.config"),
                             "--file_system_poll_wait_seconds=-1"], stderr=subprocess.PIPE)
    channel = grpc.insecure_channel("127.0.0.1:%d" % gport)
    status = model_service_pb2_grpc.ModelServiceStub(channel)
    deadline = time.time() + 60
    pending = set(MODELS)
    while pending:
        for name in list(pending):
            req = get_model_status_pb2.GetModelStatusRequest()
            req.model_spec.name = name
            try:
                r = status.GetModelStatus(req, timeout=1)
                if any(v.state == get_model_status_pb2.ModelVersionStatus.AVAILABLE for v in r.model_version_status):
                    pending.discard(name)
            except grpc.RpcError:
                pass
        if not pending:
            break
        if time.time() > deadline or proc.poll() is not None:
            proc.kill()
            raise RuntimeError("server did not load %s: %s" % (sorted(pending), proc.stderr.read().decode()))
        time.sleep(0.2)
    yield {"channel": channel, "rest": rport, "truth": truth}
    channel.close()
    proc.terminate()
    proc.wait(timeout=10)
    shutil.rmtree(work)


@pytest.mark.parametrize("name", list(MODELS))
def test_status_is_available(server, name):
    stub = model_service_pb2_grpc.ModelServiceStub(server["channel"])
    req = get_model_status_pb2.GetModelStatusRequest()
    req.model_spec.name = name
    resp = stub.GetModelStatus(req, timeout=10)
    assert [(v.version, v.state) for v in resp.model_version_status] == [
        (1, get_model_status_pb2.ModelVersionStatus.AVAILABLE)]


@pytest.mark.parametrize("name", list(MODELS))
def test_metadata_has_the_saved_signature(server, name):
    truth = server["truth"][name]
    req = get_model_metadata_pb2.GetModelMetadataRequest()
    req.model_spec.name = name
    req.metadata_field.append("signature_def")
    resp = prediction_service_pb2_grpc.PredictionServiceStub(server["channel"]).GetModelMetadata(req, timeout=10)
    sigs = get_model_metadata_pb2.SignatureDefMap()
    assert resp.metadata["signature_def"].Unpack(sigs)
    sig = sigs.signature_def["serving_default"]
    assert sig.method_name == "tensorflow/serving/predict"
    assert sorted(sig.inputs.keys()) == sorted(truth["inputs"].keys())
    assert sorted(sig.outputs.keys()) == sorted(truth["outputs"].keys())
    for key, spec in truth["inputs"].items():
        assert sig.inputs[key].dtype == spec.dtype.as_datatype_enum
        assert [d.size for d in sig.inputs[key].tensor_shape.dim] == [-1 if d is None else d for d in spec.shape]


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("encoding", ["tensor_content", "float_val"])
def test_predict_matches_keras(server, name, encoding):
    truth = server["truth"][name]
    (in_key,), (out_key,) = truth["inputs"].keys(), truth["outputs"].keys()
    req = predict_pb2.PredictRequest()
    req.model_spec.name = name
    req.model_spec.signature_name = "serving_default"
    if encoding == "tensor_content":
        req.inputs[in_key].CopyFrom(tf.make_tensor_proto(truth["x"]))
        assert req.inputs[in_key].tensor_content
    else:
        t = req.inputs[in_key]
        t.dtype = tf.float32.as_datatype_enum
        for d in truth["x"].shape:
            t.tensor_shape.dim.add().size = d
        t.float_val.extend(truth["x"].ravel().tolist())
    resp = prediction_service_pb2_grpc.PredictionServiceStub(server["channel"]).Predict(req, timeout=10)
    got = tf.make_ndarray(resp.outputs[out_key])
    np.testing.assert_allclose(got, truth["y"], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", list(MODELS))
def test_rest_predict_matches_keras(server, name):
    truth = server["truth"][name]
    body = json.dumps({"instances": truth["x"].tolist()}).encode()
    r = urllib.request.urlopen(urllib.request.Request(
        "http://127.0.0.1:%d/v1/models/%s:predict" % (server["rest"], name), data=body), timeout=10)
    got = np.array(json.load(r)["predictions"], dtype=np.float32).reshape(truth["y"].shape)
    np.testing.assert_allclose(got, truth["y"], rtol=RTOL, atol=ATOL)
