#!/bin/bash
# Every GPU check in one run, from an already-built bundle (tools/gpu_bundle.sh): the device and
# its clocks, the GPU tests, the latency floors, the resident kernel's accuracy against Keras and
# its host-to-host latency, PyTorch on the same card, the graph and program forms and the form
# compile keeps, the graph form's batches beside this host's CPU plan, batched serving on the GPU
# against the CPU server, fp16/bf16 storage, int8 programs beside the int8 CPU plan, and each
# resident shape on its own. Within GPU_CHECK_BUDGET_S (below). Writes gpu_check.jsonl,
# gpu_check.txt (the table docs/performance.md records) and gpu_check.log into OUTDIR.
#
# Usage: tools/gpu_check.sh OUTDIR [BUNDLE]      (BUNDLE: the folder or its .tar.xz; default
#        build/gpu-bundle)
set -u
out=${1:?usage: gpu_check.sh OUTDIR [BUNDLE]}
bundle=${2:-build/gpu-bundle}
if [[ $bundle == *.tar.xz ]]; then
  unpacked=$(mktemp -d)
  tar -C "$unpacked" -xJf "$bundle" || exit 1
  bundle=$(echo "$unpacked"/*)
fi
bin=$bundle/bin
w=$bundle/weights
models=bench/models
export LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TICKINFER_SOURCE_DIR=$PWD TICKINFER_FIXTURES=$PWD/tests/fixtures PYTHONUNBUFFERED=1
mkdir -p "$out"
jl="$out/gpu_check.jsonl"
: >"$jl"
# The run ends within GPU_CHECK_BUDGET_S (default 360: six minutes, the issue's bound, which leaves
# a GPU session, whose device time is counted in minutes, room to run it again):
# each row's time limit is cut to what is left, a row with under 5 s left is not started (its
# JSON says so), and the table is still written. The rows come most telling first: the floors
# and the bars, then what explains them.
budget=${GPU_CHECK_BUDGET_S:-360}
started=$SECONDS
left() { echo $((budget - (SECONDS - started))); }
over() { [ "$(left)" -lt 5 ]; }
capped() { local l; l=$(left); echo $(($1 < l ? $1 : l)); }  # capped SECONDS: what a row may take
log() { echo "== [$((SECONDS - started)) s] $*" | tee -a "$out/gpu_check.log"; }
# {"wall_s": ...} after every row: where the run's minutes go (gpu_table prints the slowest).
wall() { echo "{\"wall_s\":$(($SECONDS - $1)),\"command\":\"$2\"}" >>"$jl"; }
smi() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,pstate \
    --format=csv,noheader | sed "s/^/{\"probe\":\"nvidia-smi\",\"when\":\"$1\",\"csv\":\"/; s/\$/\"}/" >>"$jl"
}
run() {  # run SECONDS CMD...: JSON lines to the jsonl, everything else to the log
  local limit=$1 t0=$SECONDS
  shift
  if over; then rc=0; echo "{\"skipped\":\"over the time budget\",\"command\":\"$*\"}" >>"$jl"; return; fi
  log "$*"
  timeout "$(capped "$limit")" "$@" 2>>"$out/gpu_check.log" | tee -a "$jl"
  rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] || echo "{\"error\":\"exit $rc\",\"command\":\"$*\"}" | tee -a "$jl"
  wall $t0 "$*"
}
gtest() {  # gtest SECONDS BINARY: the test's output to the log, its summary as one JSON line
  local t="$out/.gtest" t0=$SECONDS
  gtest_ok=0
  if over; then echo "{\"skipped\":\"over the time budget\",\"command\":\"$2 ${GTEST_FILTER:-}\"}" >>"$jl"; return; fi
  log "$2"
  timeout "$(capped "$1")" "$bin/$2" >"$t" 2>&1
  local rc=$?
  cat "$t" >>"$out/gpu_check.log"
  gtest_ok=0  # exit 0 with at least one test passed
  [ $rc = 0 ] && grep -q '^\[       OK \]' "$t" && gtest_ok=1
  echo "{\"test\":\"$2\",\"filter\":\"${GTEST_FILTER:-}\",\"exit\":$rc,\"passed\":$(grep -c '^\[       OK \]' "$t"),\"failed\":$(grep -c '^\[  FAILED  \] .* ([0-9]* ms)$' "$t"),\"skipped\":$(grep -c '^\[  SKIPPED \] .* ([0-9]* ms)$' "$t")}" | tee -a "$jl"
  rm -f "$t"
  wall $t0 "$2 ${GTEST_FILTER:-}"
}
smi before
# The core every latency row runs on, tickinfer's and PyTorch's alike (taskset): the last of the
# first range of CPUs on the GPU's own NUMA node (not CPU 0, which takes most interrupts), else the
# last CPU; GPU_CHECK_CPU overrides. serving_capacity is not pinned (its servers use every core).
bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader 2>/dev/null | head -1 | tr 'A-F' 'a-f')
cpulist=$(cat "/sys/bus/pci/devices/${bus: -12}/local_cpulist" 2>/dev/null || true)
first=${cpulist%%,*}
cpu=${GPU_CHECK_CPU:-${first##*-}}
# The CPUs this process may use (a container may allow fewer than the node lists): a core it may
# not use would fail every pinned row, so the last allowed one instead.
allowed_last() { awk '/^Cpus_allowed_list/ {n = split($2, a, /[-,]/); print a[n]}' /proc/self/status; }
[ -n "$cpu" ] || cpu=$(allowed_last)
pin=""
if command -v taskset >/dev/null; then
  taskset -c "$cpu" true 2>/dev/null || cpu=$(allowed_last)
  taskset -c "$cpu" true 2>/dev/null && pin="taskset -c $cpu"
fi
echo "{\"probe\":\"host_cpu\",\"cpu\":\"${pin:+$cpu}\",\"gpu_local_cpus\":\"$cpulist\",\"cpus\":$(nproc),\"model\":\"$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)\"}" >>"$jl"
# Which PyTorch the peer rows get (a missing one reads as exit 77 there, like a missing GPU).
python3 -c 'import json, torch; print(json.dumps({"probe": "torch", "version": torch.__version__, "cuda": torch.version.cuda, "available": torch.cuda.is_available()}))' >>"$jl" 2>/dev/null ||
  echo '{"probe":"torch","none":"python3 cannot import torch"}' >>"$jl"
# The resident program form's first fixture: program_ok=1 where it passed. The form's other rows
# run only then (a kernel that never answers holds its multiprocessors until the process ends).
program_gate() {
  GTEST_FILTER='Fixtures/GraphFormWindow.GpuResidentProgramMatchesKeras/bench_tcn' gtest 60 cuda_graph_form_test
  program_ok=$gtest_ok
}
lost=0
resident() {  # one resident configuration; after a kernel that hung, skip the rest
  [ $lost = 0 ] || { echo "{\"skipped\":\"resident_bench $* (a resident kernel was lost before)\",\"by\":\"gpu_check\"}" >>"$jl"; return; }
  run 30 $pin "$bin/resident_bench" "$@"
  case $rc in 0 | 1 | 2 | 77) ;; *) lost=1 ;; esac  # 2: refused (a form or size that does not apply); 77: no device
}
tiny="--x $models/lstm_tiny/stream_in.npy --y $models/lstm_tiny/stream_out.npy --stream --atol 1.41e-6"
win="--x $models/lstm_window/in0.npy --y $models/lstm_window/out0.npy --atol 6.88e-7"
km() { echo "--model $models/$1/model.keras"; }
tol() { python3 -c "import json,sys; c=[c for c in json.load(open('bench/$1/manifest.json'))['cases'] if c['name']=='$2'][0]; print(c['atol'], c['rtol'])"; }
window_models="models/tcn models/gru_window models/mlp_large models/lstm_window book_models/deeplob_small
               book_models/deeplob book_models/translob book_models/tiny_transformer"
# Two parts: 1, the rows the bars are read from; 2, the rows that explain them. GPU_CHECK_PART=1
# or 2 runs one (a second call in a GPU session's remaining minutes runs part 2 alone); default both.
in_part() { [ "${GPU_CHECK_PART:-all}" = all ] || [ "${GPU_CHECK_PART:-all}" = "$1" ]; }
if in_part 1; then
# Alone first (a process whose first plans these are): whether plans of other forms start beside a
# running resident kernel (kernel_loading.hpp); a hang here costs 40 s, not the other tests.
GTEST_FILTER='*BesideARunningResidentKernel*' gtest 40 cuda_resident_test
GTEST_FILTER='-*BesideARunningResidentKernel*' gtest 120 cuda_resident_test
gtest 60 cuda_graph_lstm_stack_test
run 90 $pin "$bin/gpu_probes"
[ -n "${GPU_CHECK_BLOCKING:-}" ] && run 60 $pin "$bin/gpu_probes" --blocking
resident $(km lstm_tiny) $tiny --name lstm_tiny_stream
resident $(km lstm_window) $win --name lstm_window
run 150 $pin python3 bench/gpu/torch_peer.py --model $w/lstm_tiny.tiw $tiny --name lstm_tiny_stream --requests 10000
run 150 $pin python3 bench/gpu/torch_peer.py --model $w/lstm_window.tiw $win --name lstm_window --requests 10000
# The CUDA graph form: every fixture against Keras on the card, then each window model's latency
# (one request at a time) beside PyTorch's eager and CUDA-graph forms of the same weights
# (TorchScript files the bundle carries, 2000 requests each); lstm_window too, against its
# resident kernel above. Batch sizes, both sides, come in part 2.
GTEST_FILTER='-*ResidentProgram*' gtest 180 cuda_graph_form_test
GTEST_FILTER='*Gpu*' gtest 60 serving_batching_test
for m in $window_models; do
  n=$(basename $m)
  read -r atol rtol < <(tol "$(dirname $m)" "$n")
  io="--x bench/$m/in0.npy --y bench/$m/out0.npy --name $n"
  run 60 $pin "$bin/graph_form_bench" --model bench/$m/model.keras $io --atol "$atol" --rtol "$rtol" --requests 2000
  [ -f "$w/$n.pt" ] && run 120 $pin python3 bench/gpu/torch_graph_peer.py --model "$w/$n.pt" $io --atol "$atol" \
    --requests 2000
done
# The resident program form (any model on one never-exiting cluster kernel): written without a
# GPU, so after the graph form's rows. Each window model's latency (cluster size timed at
# compile, every reply held to Keras) beside the graph form's rows above; every fixture in part 2.
# One fixture first: a kernel that never answers keeps its multiprocessors until the process ends,
# so a form that fails everywhere would starve the rest of the run; it goes on only if this passes.
program_gate
if [ $program_ok = 1 ]; then
  for m in $window_models; do
    n=$(basename $m)
    read -r atol rtol < <(tol "$(dirname $m)" "$n")
    run 60 $pin "$bin/graph_form_bench" --model bench/$m/model.keras --x bench/$m/in0.npy --y bench/$m/out0.npy --name $n \
      --atol "$atol" --rtol "$rtol" --form program --requests 2000
  done
else
  echo '{"skipped":"the resident program form: its first fixture did not pass or did not run (see gpu_check.log)","by":"gpu_check"}' >>"$jl"
fi
# compile(device="cuda")'s own choice for a model that is not an LSTM stack: the graph and the
# program form timed at compile, the faster kept where its replies agree (cuda/form_choice.hpp).
# Its rule's host half runs in the dry run; on the card, each window model as compiled, the kept
# form and both times in the row ("kept", "choice").
# Only where the program form passed its first fixture: else each compile would wait out five
# cluster sizes' deadlines to keep the graph form, whose rows are above.
gtest 120 cuda_form_choice_test
if [ $program_ok = 1 ]; then
  for m in models/tcn models/gru_window models/mlp_large book_models/deeplob_small book_models/deeplob \
           book_models/translob book_models/tiny_transformer; do
    n=$(basename $m)
    read -r atol rtol < <(tol "$(dirname $m)" "$n")
    run 60 $pin "$bin/graph_form_bench" --model bench/$m/model.keras --x bench/$m/in0.npy --y bench/$m/out0.npy \
      --name $n --atol "$atol" --rtol "$rtol" --form auto --requests 2000
  done
else
  echo '{"skipped":"compile'"'"'s timed choice of form (--form auto): the program form did not pass its first fixture","by":"gpu_check"}' >>"$jl"
fi
fi  # part 1
if in_part 2; then
# The resident program form on every fixture (part 2: minutes of compiles, and the window
# models' program rows in part 1 already hold each to Keras), where its first fixture passes.
[ -n "${program_ok:-}" ] || program_gate
if [ $program_ok = 1 ]; then
  GTEST_FILTER='*ResidentProgram*' gtest 240 cuda_graph_form_test
  GTEST_FILTER='*ResidentProgram*' gtest 120 cuda_half_activations_test
fi
# The hardware table: per batch size, the graph form's call of N rows beside the CPU plan on the
# pinned core running the same N rows, interleaved, and PyTorch's CUDA graph of N rows. Each
# first times 200 single requests, rows the window table does not take over the longer ones above.
for m in $window_models; do
  n=$(basename $m)
  read -r atol rtol < <(tol "$(dirname $m)" "$n")
  io="--x bench/$m/in0.npy --y bench/$m/out0.npy --name $n"
  run 90 $pin "$bin/graph_form_bench" --model bench/$m/model.keras $io --atol "$atol" --rtol "$rtol" --requests 200 \
    --batches 1,8,64,512
  [ -f "$w/$n.pt" ] && run 150 $pin python3 bench/gpu/torch_graph_peer.py --model "$w/$n.pt" $io --atol "$atol" \
    --requests 200 --batches 8,64,512
done
# Batched serving: the rate each server holds with p99 <= 1 ms, GPU against this host's CPUs.
run 150 python3 bench/gpu/serving_capacity.py --tickinfer "$bin/tickinfer" --serve-load "$bin/serve_load"
[ -n "${GPU_CHECK_COMPILE:-}" ] && run 200 $pin python3 bench/gpu/torch_peer.py --model $w/lstm_tiny.tiw $tiny \
  --name lstm_tiny_stream --compile --requests 5000
# fp16 weights, then fp16 weights and layer outputs, on the graph form (arithmetic fp32): what the
# halved weight and activation bytes are worth, with the looser tolerance 16-bit storage needs
# (tickinfer cuda-precision states each layer's error). First the 16-bit bodies against the host's.
GTEST_FILTER='-*ResidentProgram*' gtest 120 cuda_half_activations_test
for m in models/mlp_large book_models/deeplob_small book_models/deeplob; do
  n=$(basename $m)
  for p in fp16 fp16/fp16; do
    run 60 $pin "$bin/graph_form_bench" --model bench/$m/model.keras --x bench/$m/in0.npy --y bench/$m/out0.npy --name $n \
      --atol 1e-3 --rtol 1e-3 --precision $p --batches 1,64,512
  done
done
# int8 programs (TFLite's integer arithmetic on the card): the converter's int8 files against
# TFLite's reference outputs, then the bench models' int8 .tkq files, every row held to this host's
# int8 CPU plan bit for bit and each request timed beside the CPU plan's, interleaved.
gtest 90 cuda_integer_program_test
for n in tcn mlp_large mlp_small lstm_window lstm_tiny; do
  [ -f "$bundle/quantized/$n.int8.tkq" ] || continue
  run 60 $pin "$bin/graph_form_bench" --model "$bundle/quantized/$n.int8.tkq" --x $models/$n/in0.npy --name "${n}_int8" \
    --form int8 --batches 1,8,64,512
done
# How each resident shape and option does on its own (the timed choice above prints its
# candidates too, at 300 requests each).
resident $(km lstm_tiny) $tiny --name lstm_tiny_stream --form shared --cluster 16 --threads 256
for l in 8 16 32; do for v in "--activations 2" "--activations 1" "--activations 2 --fast-math"; do
  resident $(km lstm_tiny) $tiny --name lstm_tiny_stream --form registers --lanes $l $v
done; done
resident $(km lstm_tiny) --x $models/lstm_tiny/in0.npy --y $models/lstm_tiny/out0.npy --atol 1.2e-6 \
  --name lstm_tiny_window
resident $(km lstm_window) $win --name lstm_window --form shared --cluster 8 --threads 256
for lc in "32 8" "8 16" "16 8" "16 16" "32 16" "40 1"; do
  set -- $lc
  for v in "--activations 2" "--activations 1"; do
    resident $(km lstm_window) $win --name lstm_window --form registers --lanes $1 --cluster $2 $v
  done
done
resident $(km lstm_window) --x $models/lstm_window/stream_in.npy --y $models/lstm_window/stream_out.npy \
  --stream --atol 8.01e-7 --name lstm_window_stream
# Where a step's cycles go, by the profiler's stall reasons: one request of the fastest
# configurations above, run to the kernel's end (--profile-once).
if command -v ncu >/dev/null && ! over; then
  for cfg in "$(km lstm_window) $win --form registers --lanes 32 --cluster 8" \
             "$(km lstm_tiny) $tiny --form registers --lanes 16"; do
    log "ncu resident_bench $cfg --profile-once"
    echo "== resident_bench $cfg" >>"$out/ncu.txt"
    timeout "$(capped 150)" ncu --clock-control none --section WarpStateStats --section SchedulerStats --section LaunchStats \
      "$bin/resident_bench" $cfg --profile-once >>"$out/ncu.txt" 2>&1
    echo "{\"ncu\":\"$cfg\",\"exit\":$?}" >>"$jl"
  done
fi
# The tagged form last: it had not run on a GPU when it was written, and a kernel that hangs
# skips what follows it.
for cfg in "$(km lstm_tiny) $tiny --name lstm_tiny_stream --lanes 16" "$(km lstm_tiny) $tiny --name lstm_tiny_stream --lanes 32" \
           "$(km lstm_window) $win --name lstm_window --lanes 16 --cluster 8" \
           "$(km lstm_window) $win --name lstm_window --lanes 32 --cluster 8"; do
  resident $cfg --form tagged
done
# The timed choice with the tagged form among its shapes (held to the others' probe reply): what
# compile would keep once the tagged kernel is trusted.
resident $(km lstm_tiny) $tiny --name lstm_tiny_stream_with_tagged --time-tagged
resident $(km lstm_window) $win --name lstm_window_with_tagged --time-tagged
fi  # part 2
smi after
echo "{\"wall_s\":$((SECONDS - started)),\"command\":\"the whole run\"}" >>"$jl"
python3 bench/gpu/gpu_table.py "$jl" 2>>"$out/gpu_check.log" | tee "$out/gpu_check.txt"
