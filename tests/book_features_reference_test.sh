#!/usr/bin/env bash
# The book features of `tickinfer features` on an ITCH 5.0 day against an independent reference.
#
# tools/itch/make_itch_day.py writes a synthetic day from the spec; tools/itch/book_feature_reference.py
# rebuilds its books with tools/itch/reference_book.py (plain Python, written from the spec) and
# computes every book feature from the definitions in docs/features.md, then samples bars with
# numpy/pandas. `tickinfer features` must give the same matrix (1e-9) from the raw day file, its
# gzip and a pcap of the same messages with duplicated, reordered and A/B copies of datagrams.
#
#   tests/book_features_reference_test.sh BUILD_DIR PYTHON
set -euo pipefail
build=$(cd "$1" && pwd)
python=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

python3 "$root/tools/itch/make_itch_day.py" --out day.itch --messages 100000 --symbols 30 --seed 13 >/dev/null
gzip -k -c day.itch >day.itch.gz
python3 "$root/tools/itch/make_mold_pcap.py" day.itch --out day.pcap --dup-rate 0.05 --reorder-rate 0.05 --ab --seed 5 >/dev/null
symbols=ADBE,EVTA,UHV  # the busiest, a middle and a quiet symbol of this day
ref=("$root/tools/itch/book_feature_reference.py" day.itch --symbols "$symbols" --date 2019-12-30 --expected expected.npy)
"$python" "${ref[@]}" --spec spec.toml

fail=0
for src in day.itch day.itch.gz day.pcap; do
  if ! "$build/tickinfer" features spec.toml --input "$src" --symbols "$symbols" --date 2019-12-30 \
      --output "out_$src.npy" >"log_$src.txt" 2>&1; then
    echo "FAIL $src: tickinfer features exited non-zero"; cat "log_$src.txt"; fail=1; continue
  fi
  if ! out=$("$python" "${ref[@]}" --check "out_$src.npy"); then fail=1; fi
  echo "$out ($src)"
done
# An ITCH source without the symbols it needs, and a file that is not ITCH, are refused by name.
if "$build/tickinfer" features spec.toml --input day.itch --symbols "$symbols" --output x.npy >bad.txt 2>&1 \
    || ! grep -q -- "--date" bad.txt; then
  echo "FAIL refusal: no trading date was accepted or unclear"; cat bad.txt; fail=1
fi
printf 'seq,timestamp\n1,2\n' >not_itch.bin
if "$build/tickinfer" features spec.toml --input not_itch.bin --symbols "$symbols" --date 2019-12-30 \
    --output y.npy >bad2.txt 2>&1 || ! grep -q "not an ITCH 5.0 day file" bad2.txt || [ -e y.npy ]; then
  echo "FAIL refusal: a text file was read as ITCH"; cat bad2.txt; fail=1
else
  echo "ok   refusal: $(grep -m1 'ITCH' bad2.txt)"
fi
exit $fail
