"""tickinfer serve as deployments start and steer tensorflow_model_server: every flag of its main.cc
on one command line, the official Docker entrypoint's command line with `docker run` arguments
after it, ModelService/HandleReloadConfigRequest from the official Python client (models added,
changed, removed; a bad config refused with nothing changed), and --model_config_file re-read
while serving. Predictions are checked against Keras' own outputs (in0.npy -> out0.npy).

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
from grpc_health.v1 import health_pb2, health_pb2_grpc
from tensorflow_serving.apis import (
    get_model_status_pb2,
    model_management_pb2,
    model_service_pb2_grpc,
    predict_pb2,
    prediction_service_pb2_grpc,
)
from tensorflow_serving.config import model_server_config_pb2
from serving_support import BIN, MLP, RTOL, ATOL, free_port


def add_version(work, name, version):
    d = os.path.join(work, name, str(version))
    os.makedirs(d, exist_ok=True)
    shutil.copy(os.path.join(MLP, "model.keras"), os.path.join(d, "model.keras"))
    return os.path.join(work, name)


def start(args, grpc_port):
    proc = subprocess.Popen([BIN, "serve"] + args, stderr=subprocess.PIPE, text=True)
    channel = grpc.insecure_channel("127.0.0.1:%d" % grpc_port)
    health = health_pb2_grpc.HealthStub(channel)
    deadline = time.time() + 60
    while True:
        try:
            r = health.Check(health_pb2.HealthCheckRequest(service="tensorflow.serving.PredictionService"), timeout=1)
            if r.status == health_pb2.HealthCheckResponse.SERVING:
                return proc, channel
        except grpc.RpcError:
            pass
        if time.time() > deadline or proc.poll() is not None:
            proc.kill()
            raise RuntimeError("server did not become ready: " + proc.stderr.read())
        time.sleep(0.1)


def stop(proc, channel):
    channel.close()
    proc.terminate()
    err = proc.communicate(timeout=20)[1]
    return err


def predict_grpc(channel, model, version=None):
    x = np.load(os.path.join(MLP, "in0.npy")).astype(np.float32)
    req = predict_pb2.PredictRequest()
    req.model_spec.name = model
    if version is not None:
        req.model_spec.version.value = version
    t = req.inputs["input_layer"]
    t.dtype = 1
    t.tensor_shape.dim.add().size = x.shape[0]
    t.tensor_shape.dim.add().size = x.shape[1]
    t.tensor_content = x.tobytes()
    resp = prediction_service_pb2_grpc.PredictionServiceStub(channel).Predict(req, timeout=10)
    out = next(iter(resp.outputs.values()))
    got = np.array(out.float_val, dtype=np.float32).reshape(x.shape[0], -1)
    np.testing.assert_allclose(got, np.load(os.path.join(MLP, "out0.npy")), rtol=RTOL, atol=ATOL)
    return resp.model_spec.version.value


def predict_rest(port, model):
    x = np.load(os.path.join(MLP, "in0.npy")).astype(np.float32)
    body = json.dumps({"instances": x.tolist()}).encode()
    req = urllib.request.Request("http://127.0.0.1:%d/v1/models/%s:predict" % (port, model), data=body)
    with urllib.request.urlopen(req, timeout=10) as r:
        got = np.array(json.loads(r.read())["predictions"], dtype=np.float32).reshape(x.shape[0], -1)
    np.testing.assert_allclose(got, np.load(os.path.join(MLP, "out0.npy")), rtol=RTOL, atol=ATOL)


def status(channel, model):
    req = get_model_status_pb2.GetModelStatusRequest()
    req.model_spec.name = model
    return model_service_pb2_grpc.ModelServiceStub(channel).GetModelStatus(req, timeout=10)


def reload(channel, models):
    """models: (name, base_path, specific versions or None, labels dict)."""
    req = model_management_pb2.ReloadConfigRequest()
    lst = model_server_config_pb2.ModelConfigList()
    for name, base, versions, labels in models:
        c = lst.config.add()
        c.name = name
        c.base_path = base
        c.model_platform = "tensorflow"
        if versions:
            c.model_version_policy.specific.versions.extend(versions)
        for k, v in labels.items():
            c.version_labels[k] = v
    req.config.model_config_list.CopyFrom(lst)
    return model_service_pb2_grpc.ModelServiceStub(channel).HandleReloadConfigRequest(req, timeout=60)


@pytest.mark.parametrize("impl", ["native", "grpcpp"])
def test_reload_config_adds_changes_and_removes_models(impl):
    work = tempfile.mkdtemp(prefix="tickinfer_reload_")
    try:
        mlp = add_version(work, "mlp", 1)
        add_version(work, "mlp", 2)
        other = add_version(work, "other", 7)
        os.makedirs(os.path.join(work, "empty"))
        with open(os.path.join(work, "models.config"), "w") as f:
            f.write('model_config_list { config { name: "mlp" base_path: "%s" } }\n' % mlp)
        gport = free_port()
        proc, channel = start(["--port=%d" % gport, "--model_config_file=" + os.path.join(work, "models.config"),
                               "--file_system_poll_wait_seconds=-1", "--grpc_implementation=" + impl], gport)
        try:
            assert predict_grpc(channel, "mlp") == 2  # latest
            # Add 'other', pin mlp to version 1 with a label: applied before the call returns.
            r = reload(channel, [("mlp", mlp, [1], {"stable": 1}), ("other", other, None, {})])
            assert r.status.error_code == 0, r.status.error_message
            assert predict_grpc(channel, "other") == 7
            assert predict_grpc(channel, "mlp") == 1
            st = {v.version: v.state for v in status(channel, "mlp").model_version_status}
            assert st[1] == 30  # AVAILABLE
            assert st[2] == 50  # END: no longer aspired
            # A bad config changes nothing: INVALID_ARGUMENT in the gRPC status and the answer.
            with pytest.raises(grpc.RpcError) as e:
                reload(channel, [("", other, None, {})])
            assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "must be non-empty" in e.value.details()
            assert predict_grpc(channel, "other") == 7
            # A model whose folder has no version: the others apply, the call says it is not available.
            with pytest.raises(grpc.RpcError) as e:
                reload(channel, [("other", other, None, {}), ("empty", os.path.join(work, "empty"), None, {})])
            assert e.value.code() == grpc.StatusCode.UNKNOWN
            assert "Some models did not become available: empty" in e.value.details()
            # 'mlp' was left out: removed, its versions end.
            with pytest.raises(grpc.RpcError) as e:
                predict_grpc(channel, "mlp")
            assert e.value.code() == grpc.StatusCode.NOT_FOUND
            assert predict_grpc(channel, "other") == 7
        finally:
            stop(proc, channel)
    finally:
        shutil.rmtree(work)


def test_model_config_file_is_reread_while_serving():
    work = tempfile.mkdtemp(prefix="tickinfer_poll_")
    try:
        mlp = add_version(work, "mlp", 1)
        other = add_version(work, "other", 3)
        cfg = os.path.join(work, "models.config")
        with open(cfg, "w") as f:
            f.write('model_config_list { config { name: "mlp" base_path: "%s" } }\n' % mlp)
        gport, rport = free_port(), free_port()
        proc, channel = start(["--port=%d" % gport, "--rest_api_port=%d" % rport, "--rest_api_bind_address=127.0.0.1",
                               "--model_config_file=" + cfg, "--model_config_file_poll_wait_seconds=1",
                               "--file_system_poll_wait_seconds=-1"], gport)
        try:
            predict_rest(rport, "mlp")
            with open(cfg + ".tmp", "w") as f:
                f.write('model_config_list { config { name: "mlp" base_path: "%s" }\n'
                        '  config { name: "other" base_path: "%s" } }\n' % (mlp, other))
            os.rename(cfg + ".tmp", cfg)
            deadline = time.time() + 20
            while True:
                try:
                    if any(v.state == 30 for v in status(channel, "other").model_version_status):
                        break
                except grpc.RpcError:
                    pass
                assert time.time() < deadline, "the re-read config was not applied"
                time.sleep(0.2)
            predict_rest(rport, "other")
            assert predict_grpc(channel, "other") == 3
            # A half-written file is not applied: both models keep serving.
            with open(cfg, "w") as f:
                f.write('model_config_list { config { name: "mlp" ')
            time.sleep(2.5)
            predict_rest(rport, "mlp")
            predict_rest(rport, "other")
        finally:
            err = stop(proc, channel)
        assert "changed: applied" in err, err
        assert "is not applied" in err, err
    finally:
        shutil.rmtree(work)


def test_every_flag_of_tensorflow_model_server_on_one_command_line():
    work = tempfile.mkdtemp(prefix="tickinfer_flags_")
    try:
        mlp = add_version(work, "mlp", 1)
        cfg = os.path.join(work, "models.config")
        with open(cfg, "w") as f:
            f.write('model_config_list { config { name: "mlp" base_path: "%s" } }\n' % mlp)
        with open(os.path.join(work, "batching.pbtxt"), "w") as f:
            f.write("max_batch_size { value: 128 }\nbatch_timeout_micros { value: 200 }\nnum_batch_threads { value: 2 }\n")
        with open(os.path.join(work, "monitoring.pbtxt"), "w") as f:
            f.write('prometheus_config { enable: true path: "/monitoring/prometheus/metrics" }\n')
        gport, rport = free_port(), free_port()
        flags = [
            "--port=%d" % gport, "--grpc_socket_path=" + os.path.join(work, "grpc.sock"), "--rest_api_port=%d" % rport,
            "--rest_api_num_threads=2", "--rest_api_timeout_in_ms=30000", "--rest_api_enable_cors_support=false",
            "--enable_batching=true", "--allow_version_labels_for_unavailable_models=false",
            "--batching_parameters_file=" + os.path.join(work, "batching.pbtxt"),
            "--enable_per_model_batching_parameters=false", "--model_config_file=" + cfg,
            "--model_config_file_poll_wait_seconds=60", "--model_name=default", "--model_base_path=" + mlp,
            "--num_load_threads=2", "--num_unload_threads=1", "--max_num_load_retries=5",
            "--load_retry_interval_micros=60000000", "--file_system_poll_wait_seconds=1",
            "--flush_filesystem_caches=true", "--tensorflow_session_parallelism=0",
            "--tensorflow_session_config_file=" + os.path.join(work, "session.pbtxt"),
            "--tensorflow_intra_op_parallelism=0", "--tensorflow_inter_op_parallelism=0", "--use_alts_credentials=false",
            "--ssl_config_file=", "--platform_config_file=" + os.path.join(work, "platform.pbtxt"),
            "--per_process_gpu_memory_fraction=0", "--saved_model_tags=serve",
            "--grpc_channel_arguments=grpc.max_receive_message_length=67108864,grpc.keepalive_time_ms=30000",
            "--grpc_max_threads=2", "--enable_model_warmup=true", "--num_request_iterations_for_warmup=0",
            "--version=false", "--monitoring_config_file=" + os.path.join(work, "monitoring.pbtxt"),
            "--remove_unused_fields_from_bundle_metagraph=true", "--prefer_tflite_model=false", "--num_tflite_pools=2",
            "--num_tflite_interpreters_per_pool=1", "--enable_signature_method_name_check=false",
            "--xla_cpu_compilation_enabled=false", "--xla_gpu_compilation_enabled=false", "--enable_profiler=true",
            "--thread_pool_factory_config_file=" + os.path.join(work, "pool.pbtxt"), "--mixed_precision=bfloat16",
            "--skip_initialize_tpu=false", "--enable_grpc_healthcheck_service=true",
            "--enable_serialization_as_tensor_content=false",
        ]
        assert len(flags) == 48
        proc, channel = start(flags + ["--rest_api_bind_address=127.0.0.1"], gport)
        try:
            predict_rest(rport, "mlp")
            predict_grpc(channel, "mlp")
            with urllib.request.urlopen("http://127.0.0.1:%d/monitoring/prometheus/metrics" % rport, timeout=10) as r:
                assert ':tensorflow:serving:request_count{model_name="mlp",status="OK"}' in r.read().decode()
        finally:
            err = stop(proc, channel)
        for said in ("num_unload_threads", "platform_config_file", "xla_gpu_compilation_enabled",
                     "mixed_precision=bfloat16", "grpc.keepalive_time_ms=30000", "--model_base_path is ignored"):
            assert said in err, (said, err)
    finally:
        shutil.rmtree(work)


def test_docker_entrypoint_command_line():
    # tensorflow/serving's Dockerfile: tf_serving_entrypoint.sh runs
    #   tensorflow_model_server --port=8500 --rest_api_port=8501 --model_name=${MODEL_NAME}
    #     --model_base_path=${MODEL_BASE_PATH}/${MODEL_NAME} "$@"
    # with MODEL_BASE_PATH=/models, MODEL_NAME=model; `docker run ... IMAGE args` become "$@".
    work = tempfile.mkdtemp(prefix="tickinfer_docker_")
    try:
        base = add_version(work, "mlp", 4)
        gport, rport = free_port(), free_port()
        entry = ["--port=8500", "--rest_api_port=8501", "--model_name=model", "--model_base_path=/models/model"]
        user = ["--port=%d" % gport, "--rest_api_port=%d" % rport, "--model_name=mlp", "--model_base_path=" + base,
                "--rest_api_bind_address=127.0.0.1"]
        proc, channel = start(entry + user, gport)
        try:
            predict_rest(rport, "mlp")
            assert predict_grpc(channel, "mlp") == 4
        finally:
            err = stop(proc, channel)
        assert "--model_name given more than once: the last value, 'mlp', wins" in err, err
    finally:
        shutil.rmtree(work)
