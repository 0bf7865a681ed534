#!/usr/bin/env bash
# Instructions per Plan::run of a window model over windows that move one row per run: the
# whole-window plan against the incremental plan (CompileOptions::incremental), under callgrind
# (bench/plan_ir, AVX2 kernels). Counts repeat to the instruction, so the ratio is exact where
# times on a shared VM swing. The incremental plan's first window runs whole: each count is the
# difference of a 41-run and a 11-run measurement over 30, which leaves it out.
#
#   tools/ir_incremental.sh PLAN_IR MODEL...      prints a markdown table
set -euo pipefail
bin=$1; shift
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "ir_incremental.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
. tools/plan_ir_count.sh
per_run() {  # MODEL MODE: instructions per run, runs 12..41
  local a b
  a=$(plan_ir_count "$bin" "$1" "$2" 11); b=$(plan_ir_count "$bin" "$1" "$2" 41)
  case "$a$b" in *refused*|*NA*) echo "$b"; return ;; esac
  echo $(( (b * 41 - a * 11) / 30 ))
}
echo "| model | whole window, instr/run | incremental, instr/slide | whole / incremental |"
echo "|---|---:|---:|---:|"
for m in "$@"; do
  whole=$(per_run "$m" slide) inc=$(per_run "$m" incremental)
  echo "| $(basename "$(dirname "$m")") | $whole | $inc | $(awk -v a="$whole" -v b="$inc" 'BEGIN{printf "%.2f", a/b}') |"
done
