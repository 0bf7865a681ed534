"""REST over TLS (--rest_api_tls with --ssl_config_file, tickinfer's own flag; TF Serving has no
REST TLS): Python's ssl module, trusting a certificate made by the openssl command line for this
run, gets Keras' outputs from :predict; a client that does not trust the certificate and a
plaintext request are both refused; with client_verify a client without a certificate is refused
and one with a certificate signed by custom_ca is served.

Run: TICKINFER_BIN=build/tickinfer .venv-serving/bin/python -m pytest -q tests/python
"""
import json
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import numpy as np
import pytest
from serving_support import BIN, MLP, free_port


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def proto_string(path):
    with open(path) as f:
        return json.dumps(f.read())  # a JSON string is a valid text-proto string here


@pytest.fixture(scope="module")
def pki():
    if shutil.which("openssl") is None:
        pytest.skip("openssl not installed")
    d = tempfile.mkdtemp(prefix="tickinfer_tls_")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost", "-keyout", d + "/key.pem", "-out", d + "/cert.pem")
    # A client CA and a client certificate it signs (for client_verify).
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=client-ca",
            "-keyout", d + "/ca.key", "-out", d + "/ca.pem")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=client", "-keyout", d + "/client.key",
            "-out", d + "/client.csr")
    openssl("x509", "-req", "-in", d + "/client.csr", "-CA", d + "/ca.pem", "-CAkey", d + "/ca.key",
            "-CAcreateserial", "-days", "1", "-out", d + "/client.pem")
    yield d
    shutil.rmtree(d)


def start(pki, client_verify):
    work = tempfile.mkdtemp(prefix="tickinfer_tls_srv_")
    os.makedirs(os.path.join(work, "mlp", "1"))
    shutil.copy(os.path.join(MLP, "model.keras"), os.path.join(work, "mlp", "1", "model.keras"))
    with open(os.path.join(work, "ssl.config"), "w") as f:
        f.write("server_key: %s\nserver_cert: %s\n" % (proto_string(pki + "/key.pem"), proto_string(pki + "/cert.pem")))
        if client_verify:
            f.write("custom_ca: %s\nclient_verify: true\n" % proto_string(pki + "/ca.pem"))
    port = free_port()
    proc = subprocess.Popen([BIN, "serve", "--port=0", "--rest_api_port=%d" % port, "--rest_api_bind_address=127.0.0.1",
                             "--model_name=mlp", "--model_base_path=" + os.path.join(work, "mlp"),
                             "--file_system_poll_wait_seconds=-1", "--rest_api_tls=true",
                             "--ssl_config_file=" + os.path.join(work, "ssl.config")], stderr=subprocess.PIPE)
    deadline = time.time() + 30
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            if time.time() > deadline or proc.poll() is not None:
                proc.kill()
                raise RuntimeError("server did not start: " + proc.stderr.read().decode())
            time.sleep(0.1)
    return proc, port, work


def stop(proc, work):
    proc.terminate()
    proc.wait(timeout=10)
    shutil.rmtree(work)


def predict(port, context, rows):
    body = json.dumps({"instances": rows.tolist()}).encode()
    url = "https://localhost:%d/v1/models/mlp:predict" % port
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, context=context, timeout=10) as r:
        return np.array(json.loads(r.read())["predictions"], dtype=np.float32)


def wait_ready(port, context):
    deadline = time.time() + 30
    while True:
        try:
            with urllib.request.urlopen("https://localhost:%d/readyz" % port, context=context, timeout=2) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, ssl.SSLError):
            pass
        if time.time() > deadline:
            raise RuntimeError("not ready")
        time.sleep(0.1)


def test_predict_over_tls_and_refusals(pki):
    proc, port, work = start(pki, client_verify=False)
    try:
        trusted = ssl.create_default_context(cafile=pki + "/cert.pem")
        wait_ready(port, trusted)
        x = np.load(os.path.join(MLP, "in0.npy"))
        want = np.load(os.path.join(MLP, "out0.npy"))
        got = predict(port, trusted, x)
        np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-5, atol=1e-6)
        # A client that does not trust the certificate refuses the server.
        with pytest.raises(urllib.error.URLError):
            predict(port, ssl.create_default_context(), x[:1])
        # Plain HTTP to the TLS port gets no HTTP answer.
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
            s.settimeout(5)
            try:
                data = s.recv(100)
            except (ConnectionResetError, socket.timeout):
                data = b""
            assert not data.startswith(b"HTTP/1.1")
    finally:
        stop(proc, work)


def test_client_verify_requires_a_certificate_from_custom_ca(pki):
    proc, port, work = start(pki, client_verify=True)
    try:
        with_cert = ssl.create_default_context(cafile=pki + "/cert.pem")
        with_cert.load_cert_chain(pki + "/client.pem", pki + "/client.key")
        wait_ready(port, with_cert)
        x = np.load(os.path.join(MLP, "in0.npy"))[:2]
        assert predict(port, with_cert, x).shape[0] == 2
        without = ssl.create_default_context(cafile=pki + "/cert.pem")
        with pytest.raises((urllib.error.URLError, ConnectionError, ssl.SSLError)):
            predict(port, without, x)
    finally:
        stop(proc, work)
