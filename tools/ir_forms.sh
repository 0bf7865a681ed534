#!/usr/bin/env bash
# Instructions per Plan::run of each bench-suite model from `.keras` and from each form
# tools/export_bench_forms.py wrote (SavedModel, ONNX, Keras 3 TFLite), under callgrind, collected
# only inside Plan::run (bench/plan_ir.cpp). Counts repeat to the instruction where times on a
# shared VM swing by 20%, so "the same model from another format runs at the speed of .keras"
# is checked exactly: a ratio of 1.00 is the same plan doing the same work. Kernels: AVX2
# (valgrind cannot run AVX-512).
#
#   tools/ir_forms.sh PLAN_IR FORMS_DIR      prints a markdown table, form/.keras per row
set -euo pipefail
bin=$1 forms=$2
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "ir_forms.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
ir() {  # file mode runs -> instructions per run, or the load/compile error
  local log; log=$(mktemp)
  if ! TICKINFER_ISA=avx2 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
      --toggle-collect='tickinfer::Plan::run*' "$bin" "$1" "$2" "$3" >/dev/null 2>"$log"; then
    echo "refused: $(grep -m1 -o 'error: .*' "$log" || echo 'see plan_ir')"; rm -f "$log"; return
  fi
  # The loader may fork a child (formats/isolated_load.cpp) that reports 0: take the largest.
  local n; n=$(grep -o "Collected : [0-9]*" "$log" | awk '{print $3}' | sort -n | tail -1)
  rm -f "$log"
  if [ -z "$n" ] || [ "$n" = 0 ]; then echo NA; else echo $((n / $3)); fi
}
echo "| model | mode | form | instr/run | form / .keras |"
echo "|---|---|---|---:|---:|"
for c in mlp_small:window:2000 mlp_large:window:1000 lstm_window:window:100 lstm_window:stream:2000 \
         gru_window:window:100 gru_window:stream:2000 tcn:window:100 lstm_tiny:window:300 lstm_tiny:stream:300; do
  IFS=: read -r name mode runs <<< "$c"
  base=$(ir "bench/models/$name/model.keras" "$mode" "$runs")
  echo "| $name | $mode | .keras | $base | 1.00 |"
  for form in savedmodel:"SavedModel" model.onnx:"ONNX" keras3.tflite:"TFLite (Keras 3)"; do
    f=${form%%:*} label=${form#*:}
    n=$(ir "$forms/$name/$f" "$mode" "$runs")
    case "$n" in
      refused*|NA) echo "| $name | $mode | $label | $n | |" ;;
      *) echo "| $name | $mode | $label | $n | $(awk -v a="$n" -v b="$base" 'BEGIN{printf "%.3f", a/b}') |" ;;
    esac
  done
done
