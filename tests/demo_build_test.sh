#!/usr/bin/env bash
# Checks the reduced CLI `make demo` builds (TICKINFER_SERVING=OFF, TICKINFER_PROTOBUF_FORMATS=OFF):
# what it leaves out is refused by name with the build that has it, what it keeps still works,
# and it links neither gRPC nor protobuf (that is the point of the reduced build).
# Usage: tests/demo_build_test.sh BUILD_DIR/tickinfer
set -uo pipefail
bin=${1:?usage: tests/demo_build_test.sh PATH/TO/tickinfer}
failures=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect NAME WANT_RC WANT_TEXT CMD...: the command exits WANT_RC and its stderr holds WANT_TEXT.
expect() {
  local name=$1 want_rc=$2 want_text=$3
  shift 3
  local err rc
  err=$("$@" 2>&1 >/dev/null)
  rc=$?
  [ "$rc" -eq "$want_rc" ] || fail "$name: exit $rc, want $want_rc ($err)"
  grep -qF -- "$want_text" <<<"$err" || fail "$name: stderr lacks '$want_text': $err"
}

expect "serve" 2 "this build of tickinfer has no model server" "$bin" serve --port=8500 --model_base_path=/nonexistent
expect "onnx" 1 "model.onnx: ONNX files are not read by this build" "$bin" inspect tests/fixtures/onnx/norms_k3/model.onnx
expect "savedmodel" 1 "k3_export: SavedModel directories are not read by this build" \
  "$bin" inspect tests/fixtures/savedmodel/lstm_last_k3/k3_export
# A directory that is no SavedModel gets the full build's message: only the protobuf reader is out.
expect "plain directory" 1 "is a directory but not a SavedModel" "$bin" inspect tests/fixtures
"$bin" help | grep -q "serve .*not in this build" || fail "help does not mark serve as left out"
expect "loadgen grpc" 1 "gRPC targets need the model server's build" \
  "$bin" loadgen grpc://127.0.0.1:1/m --input bench/models/mlp_small/in0.npy

# What the demo build keeps: Keras, TFLite and .tkq files.
"$bin" predict bench/models/mlp_small/model.keras --input bench/models/mlp_small/in0.npy \
  --output "$tmp/predictions.csv" --expect bench/models/mlp_small/out0.npy >/dev/null || fail "predict on a .keras file"
tfl=$(find tests/fixtures/tflite -name "*.tflite" | head -1)
"$bin" inspect "$tfl" >/dev/null || fail "inspect $tfl"

if ldd "$bin" | grep -E "libprotobuf|libgrpc"; then fail "the demo build links gRPC or protobuf"; fi

[ "$failures" -eq 0 ] && echo "demo build: all checks passed" || { echo "demo build: $failures check(s) failed"; exit 1; }
