#!/usr/bin/env bash
# Instructions per Plan::run of two plan_ir binaries (bench/plan_ir.cpp built against two
# revisions) on every bench-suite model and its TFLite files, under callgrind, collected only
# inside Plan::run. Repeatable to the instruction, where times on a shared VM are not: the check
# that a change that must not cost speed does not. Kernels: AVX2 (valgrind cannot run AVX-512).
#
#   tools/ir_ab.sh OLD_PLAN_IR NEW_PLAN_IR      prints a markdown table, new/old per row
set -euo pipefail
old=$1 new=$2
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "ir_ab.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
. tools/plan_ir_count.sh
ir() {  # binary file mode runs -> instructions per run, NA where the file is refused
  local r; r=$(plan_ir_count "$@")
  case "$r" in refused*) echo NA ;; *) echo "$r" ;; esac
}
echo "| model | mode | file | old instr/run | new instr/run | new/old |"
echo "|---|---|---|---:|---:|---:|"
for c in mlp_small:window:2000 mlp_large:window:1000 lstm_window:window:100 lstm_window:stream:2000 \
         gru_window:window:100 gru_window:stream:2000 tcn:window:100 lstm_tiny:window:300 lstm_tiny:stream:300; do
  IFS=: read -r name mode runs <<< "$c"
  keras=$(python3 -c "import json,sys; print([x['file'] for x in json.load(open('bench/models/manifest.json'))['cases'] if x['name']==sys.argv[1]][0])" "$name")
  files="bench/models/$keras"
  for v in float dynamic int8; do [ -f "tests/fixtures/tflite/$name/$v.tflite" ] && files="$files tests/fixtures/tflite/$name/$v.tflite"; done
  for f in $files; do
    a=$(ir "$old" "$f" "$mode" "$runs"); b=$(ir "$new" "$f" "$mode" "$runs")
    [ "$a" = NA ] && [ "$b" = NA ] && continue  # e.g. stream mode over a T>1 TFLite file: refused by both
    ratio=$(python3 -c "import sys; a,b=sys.argv[1:]; print('' if 'NA' in (a,b) else f'{int(b)/int(a):.4f}')" "$a" "$b")
    echo "| $name | $mode | $(basename "$f") | $a | $b | $ratio |"
  done
done
