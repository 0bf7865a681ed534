#!/usr/bin/env bash
# The guide's pre-release check with `tickinfer loadgen` (closed loop, 8 workers x 500 requests)
# against `tickinfer serve` (mlp_small, REST) and against nginx (1 worker) answering the same
# request with tickinfer's own answer as a fixed 200 body: the HTTP floor of this machine, in the
# same run, rounds alternating. Then the same load over gRPC against tickinfer serve. Servers on
# core SERVER_CPU, the load generator on CLIENT_CPU. Prints every run and the medians of p50/p99.
# usage: tools/bench_loadgen.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
build=${1:-build}
rounds=${2:-5}
server_cpu=${SERVER_CPU:-1}
client_cpu=${CLIENT_CPU:-0}
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tools/nginx_fixed_reply.sh
. "$root/tools/nginx_fixed_reply.sh"
command -v nginx >/dev/null || { echo "bench_loadgen: nginx is not installed (apt-get install nginx)"; exit 2; }
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$work/models/mlp/1"
cp "$root/bench/models/mlp_small/model.keras" "$work/models/mlp/1/"
# One instance per request (the guide's check): the first row of in0.npy.
input="$work/row.npy"
"$root/.venv/bin/python" -c "import sys, numpy as np; np.save(sys.argv[2], np.load(sys.argv[1])[:1])" \
  "$root/bench/models/mlp_small/in0.npy" "$input"
tport=18611; gport=18612; nport=18613
taskset -c "$server_cpu" "$build/tickinfer" serve --rest_api_port=$tport --port=$gport --rest_api_bind_address=127.0.0.1 \
  --rest_api_num_threads=${SERVER_THREADS:-1} --grpc_max_threads=${SERVER_THREADS:-1} --model_name=mlp --model_base_path="$work/models/mlp" \
  --file_system_poll_wait_seconds=-1 2>"$work/serve.log" &
pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$tport/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
"$build/tickinfer" loadgen rest://127.0.0.1:$tport/mlp --input "$input" --workers 1 --requests 1 --json "$work/probe.json" >/dev/null
body=$("$root/.venv/bin/python" -c "import json,sys,numpy as np; print(json.dumps({'instances': np.load(sys.argv[1]).tolist()}))" "$input" 2>/dev/null)
answer=$(curl -s -d "$body" "http://127.0.0.1:$tport/v1/models/mlp:predict")
start_nginx_fixed_reply "$work" "$nport" "$server_cpu" "$answer"
pids+=("$NGINX_PID")
echo "# $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)); servers on core $server_cpu, loadgen on core $client_cpu; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# closed loop, 8 workers x 500 requests, one instance each ($(printf '%s' "$body" | wc -c)-byte REST body); server threads ${SERVER_THREADS:-1} (REST and gRPC each)"
for r in $(seq "$rounds"); do
  taskset -c "$client_cpu" "$build/tickinfer" loadgen rest://127.0.0.1:$nport/mlp --input "$input" --json "$work/nginx-$r.json" | tail -2 | head -1 | sed "s/^/nginx-fixed-200 #$r /"
  taskset -c "$client_cpu" "$build/tickinfer" loadgen rest://127.0.0.1:$tport/mlp --input "$input" --json "$work/rest-$r.json" | tail -2 | head -1 | sed "s/^/tickinfer REST  #$r /"
  taskset -c "$client_cpu" "$build/tickinfer" loadgen grpc://127.0.0.1:$gport/mlp --input "$input" --json "$work/grpc-$r.json" | tail -2 | head -1 | sed "s/^/tickinfer gRPC  #$r /"
done
python3 - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
med = {}
for name in ("nginx", "rest", "grpc"):
    runs = [json.load(open("%s/%s-%d.json" % (work, name, r))) for r in range(1, rounds + 1)]
    med[name] = {k: statistics.median(x["service"][k] for x in runs) for k in ("p50_us", "p99_us", "p99.9_us", "max_us")}
    med[name]["errors"] = sum(x["errors"] for x in runs)
print("\n| server | p50 us | p99 us | p99.9 us | max us | errors | p99 / nginx p99 |")
print("|---|---:|---:|---:|---:|---:|---:|")
for name, label in (("nginx", "nginx fixed 200 (floor)"), ("rest", "tickinfer serve, REST"), ("grpc", "tickinfer serve, gRPC")):
    m = med[name]
    print("| %s | %.1f | %.1f | %.1f | %.1f | %d | %.2f |" % (label, m["p50_us"], m["p99_us"], m["p99.9_us"], m["max_us"], m["errors"], m["p99_us"] / med["nginx"]["p99_us"]))
PY
