#!/usr/bin/env bash
# Instructions per Plan::run of each bench-suite model from `.keras` and from each form
# tools/export_bench_forms.py wrote (SavedModel, ONNX, Keras 3 TFLite), under callgrind, collected
# only inside Plan::run (bench/plan_ir.cpp). Counts repeat to the instruction where times on a
# shared VM swing by 20%, so "the same model from another format runs at the speed of .keras"
# is checked exactly: a ratio of 1.00 is the same plan doing the same work. Kernels: AVX2
# (valgrind cannot run AVX-512).
#
#   tools/ir_forms.sh PLAN_IR FORMS_DIR [book]   prints a markdown table, form/.keras per row
#   (book: the book models of bench/book_models, exported by export_bench_forms.py --suite)
set -euo pipefail
bin=$1 forms=$2 suite=${3:-bench}
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "ir_forms.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
. tools/plan_ir_count.sh
ir() { plan_ir_count "$bin" "$@"; }  # file mode runs
echo "| model | mode | form | instr/run | form / .keras |"
echo "|---|---|---|---:|---:|"
cases="mlp_small:window:2000 mlp_large:window:1000 lstm_window:window:100 lstm_window:stream:2000
       gru_window:window:100 gru_window:stream:2000 tcn:window:100 lstm_tiny:window:300 lstm_tiny:stream:300"
dir=bench/models
if [[ $suite == book ]]; then
  cases="deeplob:window:5 deeplob_small:window:10 translob:window:20 tiny_transformer:window:20"
  dir=bench/book_models
fi
for c in $cases; do
  IFS=: read -r name mode runs <<< "$c"
  base=$(ir "$dir/$name/model.keras" "$mode" "$runs")
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
