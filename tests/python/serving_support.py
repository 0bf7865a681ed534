"""What the serving tests share: where the repository, the binary and the bench model are, the
tolerance of Keras' reference outputs, and a free loopback port."""
import os
import socket

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("TICKINFER_BIN", os.path.join(ROOT, "build", "tickinfer"))
MLP = os.path.join(ROOT, "bench", "models", "mlp_small")
RTOL, ATOL = 1e-5, 1e-6


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
