#!/usr/bin/env bash
# Runs every libFuzzer binary in DIR, deterministically (fixed -seed, a fixed number of runs, so
# a given build always explores the same inputs: CI cannot flake), capped at SECONDS each, seeded from the committed fixtures (model
# files, their config.json, .npy arrays, a CSV made from them) copied into a scratch corpus, so
# nothing in the repository is modified. Any crash, leak or timeout fails the run. FUZZ_JOBS
# fuzzers run at once (default: one per CPU); each prints its result when it ends.
set -euo pipefail
dir=$1
seconds=${2:-20}
runs=${FUZZ_RUNS:-30000}
jobs=${FUZZ_JOBS:-$(nproc)}
root=$(cd "$(dirname "$0")/.." && pwd)
# The build aborts on an undefined-behaviour finding (-fno-sanitize-recover); print where.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

# One fuzzer: its seed corpus, the run, its verdict in $dir/$name.verdict (ok or failed).
fuzz_one() {
  local bin=$1 name work fx
  name=$(basename "$bin")
  work=$(mktemp -d)
  fx="$root/tests/fixtures"
  case "$name" in
    keras_file_fuzz)  # and the pruned models, tfmot wrappers left in or stripped
      for f in "$fx"/*/model.keras "$fx"/*/model.h5 "$fx"/pruned/*.keras "$fx"/pruned/*.h5; do
        cp "$f" "$work/$(basename "$(dirname "$f")")-$(basename "$f")"
      done ;;
    tflite_file_fuzz|tflite_lift_fuzz)  # every converter output (float, dynamic-range, int8) of the TFLite fixtures, Keras 3
      # ones too, and the sparse conversions of pruned models (CSR and block sparsity, DENSIFY)
      for f in "$fx"/tflite/*/*.tflite "$fx"/tflite_lift/*/*.tflite "$fx"/tflite_k3/*/*.tflite "$fx"/pruned/*.tflite; do
        cp "$f" "$work/$(basename "$(dirname "$f")")-$(basename "$f")"
      done ;;
    integer_program_fuzz)  # the converter's int8 files and the integer LSTM fixtures
      for f in "$fx"/tflite/*/int8.tflite "$fx"/quant_lstm/*_int8/model.tflite; do
        cp "$f" "$work/$(basename "$(dirname "$f")")-$(basename "$f")"
      done ;;
    tflite_run_fuzz)  # the TFLite fixtures (Keras 3 WHILE / resource-variable ones too) and the LSTM fixtures
      for f in "$fx"/tflite/*/*.tflite "$fx"/tflite_k3/*/*.tflite "$fx"/quant_lstm/*/model.tflite; do
        cp "$f" "$work/$(basename "$(dirname "$f")")-$(basename "$f")"
      done ;;
    onnx_fuzz)  # the tf2onnx and torch.onnx.export fixtures, including the refused ones
      for f in "$fx"/onnx/*/model.onnx "$fx"/onnx/unsupported/*/model.onnx; do
        cp "$f" "$work/$(basename "$(dirname "$f")")-$(basename "$f")"
      done ;;
    keras_config_fuzz)
      for f in "$fx"/*/model.keras; do unzip -p "$f" config.json >"$work/$(basename "$(dirname "$f")").json" 2>/dev/null || true; done ;;
    npy_fuzz)
      for f in "$fx"/*/in0.npy; do cp "$f" "$work/$(basename "$(dirname "$f")").npy"; done ;;
    serving_text_proto_fuzz)
      printf 'model_config_list { config { name: "m" base_path: "/m" model_version_policy { specific { versions: [1, 2] } } version_labels { key: "a" value: 1 } } }\n' >"$work/models.config"
      printf 'prometheus_config { enable: true path: "/metrics" }\n' >"$work/monitoring.config"
      printf 'max_batch_size { value: 32 } allowed_batch_sizes: 32\n' >"$work/batching.config" ;;
    serving_flags_fuzz)
      printf -- '--port=8500\n--rest_api_port=8501\n--model_name=model\n--model_base_path=/models/model\n--model_name=mlp\n--grpc_channel_arguments=grpc.max_receive_message_length=1024,a=b\n--noenable_model_warmup\n--enable_batching\n--batching_parameters_file\n/b\n' >"$work/docker.args"
      printf 'grpc.max_send_message_length=-1,grpc.keepalive_time_ms=30000' >"$work/channel.args" ;;
    cuda_precision_spec_fuzz)
      printf 'fp16,lstm=fp32,dense_1=bf16' >"$work/mixed.spec"
      printf 'bf16' >"$work/all.spec"
      printf 'bf16/fp16,conv1d=fp32/bf16,dense=fp16/fp32' >"$work/activations.spec" ;;
    serving_json_fuzz)
      printf '{"instances": [[[1,2,3],[4,5,6]]]}' >"$work/row.json"
      printf '{"signature_name": "serving_default", "inputs": {"a": [[1,2,3,4]], "b": [NaN]}}' >"$work/col.json"
      printf '{"instances": [{"a": [1,2,3,4], "b": -Infinity}], "x": "\\u00e9"}' >"$work/multi.json" ;;
    serving_http_fuzz)
      printf 'POST /v1/models/m:predict HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n{}{}GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n' >"$work/pipelined.txt" ;;
    serving_example_fuzz)  # tf.Examples serialized by TensorFlow (mode byte 0: wire bytes), a context split, a request body
      for f in "$fx"/serving/classify/corpus/*.pb; do { printf '\000'; cat "$f"; } >"$work/$(basename "$f")"; done
      { printf '\001\030'; cat "$fx/serving/classify/corpus/example0.pb"; } >"$work/context.bin"
      printf '\002{"context": {"w": [0.5, 1.5]}, "examples": [{"x": [1.0, 2.0, 3.0]}, {"x": [1, 2], "b": {"b64": "aGk="}, "s": "t"}]}' >"$work/body.json" ;;
    serving_proto_fuzz)
      cp "$fx/serving/mlp_small_warmup/tf_serving_warmup_requests" "$work/warmup.tfrecord" ;;
    serving_request_log_fuzz)  # a request log of one gRPC predict record (docs/serving.md, "Request log")
      python3 - "$work/one.tkrlog" <<'PY'
import struct, sys, zlib
def s(b): return struct.pack('<H', len(b)) + b
p = bytes([1, 1, 0, 0, 3]) + struct.pack('<qqQQQQI', 1764500000000000000, 1, 100, 200, 400, 0, 1)
p += s(b'mlp') + s(b'serving_default') + s(b'') + b'\x01' + s(b'x') + struct.pack('<I', 2)
p += b'\x01' + s(b'y') + struct.pack('<I', 1) + struct.pack('<3f', 1.0, 2.0, 0.5)
summary = b'\x02' + struct.pack('<QQQ', 1, 0, 0)
out = b'TKRLOG01'
for q in (p, summary): out += struct.pack('<II', len(q), zlib.crc32(q)) + q
open(sys.argv[1], 'wb').write(out)
PY
      ;;
    savedmodel_fuzz)  # saved_model.pb of every SavedModel fixture (each export form)
      for f in "$fx"/savedmodel/*/*/saved_model.pb; do cp "$f" "$work/$(basename "$(dirname "$(dirname "$f")")")-$(basename "$(dirname "$f")").pb"; done ;;
    tensor_bundle_fuzz)  # the variables index tables of the SavedModel fixtures
      for f in "$fx"/savedmodel/*/*/variables/variables.index; do
        cp "$f" "$work/$(basename "$(dirname "$(dirname "$(dirname "$f")")")")-$(basename "$(dirname "$(dirname "$f")")").index"
      done ;;
    tkq_file_fuzz)  # quantized model files written by `tickinfer quantize`
      for f in "$fx"/tkq/*.tkq; do cp "$f" "$work/"; done ;;
    csv_fuzz)
      printf 'a,b,c\n1,2.5,-3e-4\nnan,inf,-inf\n' >"$work/header.csv"
      printf '1,2\n3,4\n' >"$work/plain.csv" ;;
    feed_packet_fuzz)  # a data packet (a quote and a trade), a heartbeat, an end of session, a re-request
      printf 'TICKINF001\0\0\0\0\0\0\0\1\0\2\0\45Q\0\0\0\1\0\0\0\0\0\0\0\1\0\0\0\0\0\0\0\144\0\0\0\0\0\0\0\145\0\0\0\1\0\0\0\1\0\32T\0\0\0\1\0\0\0\0\0\0\0\2\0\0\0\0\0\0\0\144\0\0\0\5B' >"$work/data.bin"
      printf 'TICKINF001\0\0\0\0\0\0\0\3\0\0' >"$work/heartbeat.bin"
      printf 'TICKINF001\0\0\0\0\0\0\0\3\377\377' >"$work/eos.bin"
      printf 'TICKINF001\0\0\0\0\0\0\0\1\0\12' >"$work/request.bin" ;;
    feed_sequencer_fuzz)
      printf '\1\0\0\1\0\2\0\1\1\0\5\100\0\6\0\3\7\1\0' >"$work/script.bin" ;;
    feed_sessions_fuzz)  # S1 data, a stray of S2, S1's End of Session, S2 at sequence 1, a malformed datagram, far future
      printf '\0\1\0\0\3\61\0\0\30\2\0\0\3\0\1\0\0\0\0\377\143\5\0\7' >"$work/script.bin" ;;
    feed_capture_fuzz)
      printf 'TICAPv01\1\0\0\0\0\0\0\0TECR\3\0\0\0\1\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0abc' >"$work/record.cap" ;;
    itch_decoder_fuzz|itch_day_file_fuzz|feed_pcap_fuzz)  # a small synthetic ITCH day
      # (every message type), its gzip, and the same day as MoldUDP64 in pcap and pcapng
      python3 "$root/tools/itch/make_itch_day.py" --out "$work/day.itch" --messages 2000 --symbols 8 --seed 5 >/dev/null
      case "$name" in
        itch_decoder_fuzz)  # one message per seed file: the day's records without their length
          python3 - "$work/day.itch" "$work" <<'PY'
import sys
data = open(sys.argv[1], 'rb').read(); i = 0; seen = set()
while i + 2 <= len(data):
    n = int.from_bytes(data[i:i + 2], 'big'); m = data[i + 2:i + 2 + n]; i += 2 + n
    if m[:1] not in seen:
        seen.add(m[:1]); open(f"{sys.argv[2]}/msg_{m[0]:02x}.bin", 'wb').write(m)
PY
          rm "$work/day.itch" ;;
        itch_day_file_fuzz)  # 2 control bytes (chunk size, batch size), then the day: raw, gzip,
          # ended by a zero-length record, cut mid-record
          python3 - "$work/day.itch" "$work" <<'PY'
import gzip, sys
day = open(sys.argv[1], 'rb').read()[:3000]; out = sys.argv[2]
w = lambda name, b: open(f'{out}/{name}', 'wb').write(b)
w('raw.bin', b'\x07\x03' + day); w('gzip.bin', b'\x05\x02' + gzip.compress(day))
w('zero_end.bin', b'\xff\x01' + day[:200] + b'\0\0' + day[200:400]); w('truncated.bin', b'\x00\x04' + day[:-5])
PY
          rm "$work/day.itch" ;;
        feed_pcap_fuzz)
          python3 "$root/tools/itch/make_mold_pcap.py" "$work/day.itch" --out "$work/day.pcap" --dup-rate 0.1 --reorder-rate 0.1 --ab --vlan --seed 1 >/dev/null
          python3 "$root/tools/itch/make_mold_pcap.py" "$work/day.itch" --out "$work/day.pcapng" --pcapng --seed 2 >/dev/null
          rm "$work/day.itch" ;;
      esac ;;
    book_features_fuzz)  # adds on both sides of two symbols, an execution, a replace, a loss
      printf '\6\1\0\0\0\0\6\2\0\0\0\0\0\1\1\23\4\11\0\1\2\21\6\12\0\2\3\33\3\13\1\1\1\12\0\14\5\1\1\41\7\15\7\0\0\0\0\0\0\2\4\22\2\16' >"$work/ops.bin" ;;
    feature_spec_fuzz)  # the committed specs, and one with every book kind and the snapshot group
      for f in "$fx"/features/*.toml; do cp "$f" "$work/"; done
      printf '[feature_set]\ninstruments = [1]\n[[feature]]\nkind = "level_price"\nside = "bid"\nlevel = 2\n[[feature]]\nkind = "order_flow_imbalance"\nlevels = 3\nticks = 5\n[[feature]]\nkind = "order_rate"\nflow = "add"\nwindow_ns = 1000\n[[feature]]\nkind = "lob_snapshot"\nlevels = 2\n' >"$work/book.toml" ;;
    tick_csv_fuzz)
      head -c 4000 "$fx/features/ticks.csv" >"$work/ticks.csv"
      printf 'ts_ns,instrument,type,bid,ask,bid_size,ask_size,price,size,side\n1,1,Q,nan,2,-1,1,,,\n5,2,T,,,,,0.5,3,B\n' >"$work/flaws.csv" ;;
    signal_fuzz)  # a signal message and a decision log (docs/signal-format.md, docs/pipeline.md)
      cp "$fx/pipeline/signal.bin" "$fx/pipeline/decisions.tdl" "$work/" ;;
    pipeline_config_fuzz)
      cp "$root/examples/default/config.toml" "$work/" ;;
  esac
  if ! "$bin" "$work" -seed=1 -runs="$runs" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
        -artifact_prefix="$dir/$name-" -print_final_stats=0 >"$dir/$name.log" 2>&1; then
    { echo "fuzz: $name FAILED; see $dir/$name.log"; tail -40 "$dir/$name.log"; } >"$dir/$name.report"
    echo failed >"$dir/$name.verdict"
  else
    { echo "fuzz: $name for ${seconds}s"; grep -E "^#[0-9]+.*(DONE|pulse)" "$dir/$name.log" | tail -1 || true; } \
      >"$dir/$name.report"
    echo ok >"$dir/$name.verdict"
  fi
  cat "$dir/$name.report"
  rm -rf "$work"
}

names=()
for bin in "$dir"/*_fuzz; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  rm -f "$dir/$name.verdict"
  names+=("$name")
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  fuzz_one "$bin" &
done
wait
status=0
for name in "${names[@]}"; do
  [ "$(cat "$dir/$name.verdict" 2>/dev/null)" = ok ] || { echo "fuzz: $name did not pass"; status=1; }
done
echo "fuzz: ${#names[@]} fuzzers, $jobs at a time: $([ $status = 0 ] && echo all passed || echo FAILED)"
exit $status
