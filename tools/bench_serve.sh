#!/usr/bin/env bash
# REST :predict latency of `tickinfer serve` (mlp_small) against the HTTP floor of this machine:
# (and, after each REST pair, gRPC Predict with build/bench/grpc_load: GRPC_THREADS calls in
# flight at GRPC_RATE in total, once through grpc++'s client and once through the project's
# minimal HTTP/2 client, against tickinfer's default gRPC server)
# nginx (1 worker) answering the same request with a fixed 200 JSON body, in the same run, with
# the same open-loop load generator (build/bench/serve_load) and the same settings. The servers
# run on core SERVER_CPU, the generator on core CLIENT_CPU; rounds alternate the two servers.
#
# usage: tools/bench_serve.sh [BUILD_DIR] [RATE] [SECONDS] [ROUNDS]
set -euo pipefail
build=${1:-build}
rate=${2:-5000}
seconds=${3:-10}
rounds=${4:-3}
conns=${CONNECTIONS:-8}
server_cpu=${SERVER_CPU:-0}
client_cpu=${CLIENT_CPU:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tools/nginx_fixed_reply.sh
. "$root/tools/nginx_fixed_reply.sh"
command -v nginx >/dev/null || { echo "bench_serve: nginx is not installed (apt-get install nginx)"; exit 2; }
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

mkdir -p "$work/models/mlp_small/1"
cp "$root/bench/models/mlp_small/model.keras" "$work/models/mlp_small/1/"
"$root/.venv/bin/python" - "$root/bench/models/mlp_small/in0.npy" >"$work/body.json" <<'PY' 2>/dev/null ||
import json, sys, numpy as np
print(json.dumps({"instances": np.load(sys.argv[1])[:1].tolist()}), end="")
PY
  printf '{"instances": [[0.5, -0.25, 1.0, 0.0, 2.0, -1.5, 0.75, 0.1, -0.3, 0.9]]}' >"$work/body.json"

tport=18601
nport=18602
gport=18603
# gRPC with the same settings as REST unless told otherwise: the same rate, one connection per
# REST connection.
grpc_rate=${GRPC_RATE:-$rate}
grpc_threads=${GRPC_THREADS:-$conns}
taskset -c "$server_cpu" "$build/tickinfer" serve --rest_api_port=$tport --port=$gport --rest_api_bind_address=127.0.0.1 \
  --rest_api_num_threads=1 --grpc_max_threads=1 --model_name=mlp_small --model_base_path="$work/models/mlp_small" \
  --file_system_poll_wait_seconds=-1 2>"$work/serve.log" &
pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$tport/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
answer=$(curl -s -d @"$work/body.json" "http://127.0.0.1:$tport/v1/models/mlp_small:predict")
# nginx answers every request with the same bytes tickinfer returns.
start_nginx_fixed_reply "$work" "$nport" "$server_cpu" "$answer"
pids+=("$NGINX_PID")

echo "# $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)); servers on core $server_cpu, generator on core $client_cpu"
echo "# open loop: $conns connections, $rate req/s in total, ${seconds}s measured after 2s warmup; latencies from the scheduled send time"
echo "# request: POST /v1/models/mlp_small:predict, $(wc -c <"$work/body.json") bytes; answer: $(printf '%s' "$answer" | wc -c) bytes"
for r in $(seq "$rounds"); do
  taskset -c "$client_cpu" "$build/bench/serve_load" --port $nport --body-file "$work/body.json" \
    --connections "$conns" --rate "$rate" --seconds "$seconds" --label "nginx-fixed-200 #$r"
  taskset -c "$client_cpu" "$build/bench/serve_load" --port $tport --body-file "$work/body.json" \
    --connections "$conns" --rate "$rate" --seconds "$seconds" --label "tickinfer-serve #$r"
  for client in grpcpp native; do
    taskset -c "$client_cpu" "$build/bench/grpc_load" --port $gport --model mlp_small --threads "$grpc_threads" \
      --rate "$grpc_rate" --seconds "$seconds" --client "$client"
  done
done
