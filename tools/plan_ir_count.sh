# Sourced by tools/ir_ab.sh and tools/ir_forms.sh: plan_ir_count BINARY FILE MODE RUNS prints the
# instructions per Plan::run of bench/plan_ir under callgrind (collected only inside Plan::run,
# AVX2 kernels: valgrind cannot run AVX-512), "NA" when nothing was collected, or "refused: ..."
# with the error when the file does not load or compile.
plan_ir_count() {
  local log n; log=$(mktemp)
  if ! TICKINFER_ISA=avx2 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
      --toggle-collect='tickinfer::Plan::run*' "$1" "$2" "$3" "$4" >/dev/null 2>"$log"; then
    echo "refused: $(grep -m1 -o 'error: .*' "$log" || echo 'see plan_ir')"; rm -f "$log"; return
  fi
  # The loader may fork a child (formats/isolated_load.cpp) that reports 0: take the largest.
  n=$(grep -o "Collected : [0-9]*" "$log" | awk '{print $3}' | sort -n | tail -1)
  rm -f "$log"
  if [ -z "$n" ] || [ "$n" = 0 ]; then echo NA; else echo $((n / $4)); fi
}
