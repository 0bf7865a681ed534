#!/usr/bin/env bash
# The whole benchmark day through `tickinfer book --csv` and through tools/itch/reference_book.py
# (plain Python, from the spec), every symbol, 10 levels: the two CSVs (about 5 GB each) are
# compared by SHA-256 as they stream, so nothing that large touches the disk. The reference takes
# about 65 us a message (some 20 minutes for 20 million).
#
#   bench/itch/full_day_reference.sh BUILD_DIR DAYFILE
set -euo pipefail
build=$1
day=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/tickinfer" book "$day" --levels 10 --csv >(sha256sum | cut -d' ' -f1 >"$work/ours.sha") >"$work/ours.txt"
python3 "$root/tools/itch/reference_book.py" "$day" --symbols all --levels 10 \
  --csv >(sha256sum | cut -d' ' -f1 >"$work/ref.sha") >"$work/ref.txt"
sleep 2  # the process substitutions finish after their writers
grep -E "^records|^books" "$work/ours.txt"
tail -1 "$work/ref.txt"
echo "tickinfer book --csv: $(cat "$work/ours.sha")"
echo "reference_book.py:    $(cat "$work/ref.sha")"
if [ "$(cat "$work/ours.sha")" = "$(cat "$work/ref.sha")" ]; then
  echo "full day: identical"
else
  echo "full day: DIFFERENT"
  exit 1
fi
