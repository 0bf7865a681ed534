#!/usr/bin/env bash
# Where `make test`'s time goes: each step is run through this script, which records its wall
# time in BUILD/test_steps.tsv, and `report` prints the breakdown (docs/testing.md).
# Usage: tools/test_steps.sh start BUILD
#        tools/test_steps.sh run BUILD NAME COMMAND...   (the step's exit status is passed on)
#        tools/test_steps.sh report BUILD
set -uo pipefail
what=$1 build=$2
file=$build/test_steps.tsv
case "$what" in
  start)
    mkdir -p "$build"
    printf 'step\tseconds\n' > "$file"
    date +%s.%N > "$build/test_steps.start" ;;
  run)
    name=$3; shift 3
    t0=$(date +%s.%N)
    "$@"
    rc=$?
    t1=$(date +%s.%N)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    printf '%s\t%s\n' "$name" "$secs" >> "$file"
    echo "== step $name: ${secs} s (exit $rc)"
    exit $rc ;;
  report)
    total=$(awk -v a="$(cat "$build/test_steps.start")" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    echo "== make test, wall time per step ($(nproc) CPUs, $(date -u +%FT%TZ)):"
    # A step named GROUP/NAME ran inside step GROUP, alongside others: listed under it, no share.
    awk -F'\t' -v total="$total" '
      NR == 1 { next }
      index($1, "/") { g = substr($1, 1, index($1, "/") - 1); sub_[g] = sub_[g] sprintf("      %-20s %7.1f s\n", substr($1, index($1, "/") + 1), $2); next }
      { order[++n] = $1; secs[$1] = $2 }
      END {
        for (i = 1; i <= n; i++) {
          printf "  %-24s %7.1f s  %5.1f%%\n", order[i], secs[order[i]], 100 * secs[order[i]] / total
          if (order[i] in sub_) printf "%s", sub_[order[i]]
        }
        printf "  %-24s %7.1f s  (%.1f min)\n", "total", total, total / 60
      }' "$file" ;;
  *) echo "usage: $0 start|run|report BUILD [NAME COMMAND...]" >&2; exit 2 ;;
esac
