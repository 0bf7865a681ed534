#!/usr/bin/env bash
# Creates .venv-serving: the official TF Serving Python client (tensorflow-serving-api) and the
# gRPC health client, for tests/python/serving_grpc_client_test.py. TensorFlow itself (which the
# client imports for its protos) is reused from the project venv through a .pth file instead of
# being installed twice; the client packages are installed with --no-deps on top. pip's cache
# is reused. Idempotent.
#
# usage: tools/setup_serving_venv.sh [PROJECT_VENV] [SERVING_VENV]
set -euo pipefail
base=${1:-.venv}
venv=${2:-.venv-serving}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -x "$base/bin/python" ] || tools/setup_venv.sh "$base"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
base_site=$("$base/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$(cd "$base_site" && pwd)" >"$site/tickinfer_project_venv.pth"
if ! "$venv/bin/python" -c 'import tensorflow_serving.apis.prediction_service_pb2_grpc, grpc_health.v1.health_pb2_grpc' 2>/dev/null; then
  "$venv/bin/pip" install -q --no-deps -r tools/requirements-serving.txt
fi
"$venv/bin/python" -c 'import tensorflow_serving.apis.prediction_service_pb2_grpc, grpc_health.v1.health_pb2_grpc' 2>/dev/null
