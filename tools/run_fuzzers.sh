#!/usr/bin/env bash
# Runs every libFuzzer binary in DIR for SECONDS each. Seeds come from tests/fuzz/corpus/<name>/
# when present (copied, so the committed corpus is never modified). Any crash fails the run.
set -euo pipefail
dir=$1
seconds=${2:-20}
root=$(cd "$(dirname "$0")/.." && pwd)
status=0
for bin in "$dir"/*_fuzz; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  work=$(mktemp -d)
  if [ -d "$root/tests/fuzz/corpus/$name" ]; then cp -r "$root/tests/fuzz/corpus/$name/." "$work/"; fi
  echo "fuzz: $name for ${seconds}s"
  if ! "$bin" "$work" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
        -artifact_prefix="$dir/$name-" -print_final_stats=0 >"$dir/$name.log" 2>&1; then
    echo "fuzz: $name FAILED; see $dir/$name.log"; tail -40 "$dir/$name.log"; status=1
  else
    grep -E "^#[0-9]+.*(DONE|pulse)" "$dir/$name.log" | tail -1 || true
  fi
  rm -rf "$work"
done
exit $status
