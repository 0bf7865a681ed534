#!/usr/bin/env bash
# The order book against an independent reference, from every kind of source.
#
# tools/itch/make_itch_day.py writes a synthetic ITCH 5.0 day from the spec (every message type,
# many levels, queue priority, partial executions, cancels, replaces, hidden executions, crosses);
# tools/itch/reference_book.py, a plain-Python book written from the spec alone, writes the top-N
# CSV. `tickinfer book --csv` must give the same bytes from the raw day file, its gzip, a classic
# pcap and a pcapng of the same messages as MoldUDP64 with duplicated, reordered and A/B copies of
# datagrams (VLAN-tagged, with unrelated frames mixed in), for all symbols and for a selection;
# and the same LOBSTER message and orderbook files. Then the day live, over lossy A/B lines.
#
#   tests/itch_reference_test.sh BUILD_DIR [MESSAGES] [SYMBOLS]
set -euo pipefail
build=$(cd "$1" && pwd)
messages=${2:-200000}
symbols=${3:-120}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

python3 "$root/tools/itch/make_itch_day.py" --out day.itch --messages "$messages" --symbols "$symbols" --seed 11
gzip -k -c day.itch >day.itch.gz
python3 "$root/tools/itch/make_mold_pcap.py" day.itch --out day.pcap --dup-rate 0.05 --reorder-rate 0.05 --ab --vlan --seed 3
python3 "$root/tools/itch/make_mold_pcap.py" day.itch --out day.pcapng --pcapng --dup-rate 0.05 --reorder-rate 0.05 --seed 4

python3 "$root/tools/itch/reference_book.py" day.itch --symbols all --levels 10 --csv ref_all.csv \
  --lobster ref_lobster --date 2019-12-30 | tee ref_stats.txt | tail -1
# A selection: the first, a middle and the last symbol of the directory, by the reference's own CSV.
pick=$(cut -d, -f4 ref_all.csv | tail -n +2 | sort -u | awk 'NR==1||NR==7||NR==20' | paste -sd, -)
python3 "$root/tools/itch/reference_book.py" day.itch --symbols "$pick" --levels 5 --csv ref_pick.csv

fail=0
check() {  # name, reference csv, tickinfer args...
  local name=$1 ref=$2
  shift 2
  "$build/tickinfer" book "$@" --csv "out_$name.csv" >"log_$name.txt" || { echo "FAIL $name: tickinfer book exited non-zero"; cat "log_$name.txt"; fail=1; return; }
  if cmp -s "$ref" "out_$name.csv"; then
    echo "ok   $name: $(($(wc -l <"$ref") - 1)) rows identical"
  else
    echo "FAIL $name: CSV differs from the reference"; diff "$ref" "out_$name.csv" | head -5; fail=1
  fi
  if grep -E "unknown_ref [1-9]|crossed [1-9]|locked [1-9]|overfill [1-9]" "log_$name.txt" | head -1; then
    echo "FAIL $name: integrity counters are not zero"; fail=1
  fi
}
check raw ref_all.csv day.itch --levels 10
check gzip ref_all.csv day.itch.gz --levels 10
check pcap ref_all.csv day.pcap --levels 10 --group 233.54.12.1 --port 26400
check pcapng ref_all.csv day.pcapng --levels 10 --group 233.54.12.1 --port 26400
check pick ref_pick.csv day.itch.gz --levels 5 --symbols "$pick"
# Files that are not what they claim get a clear error, and nothing is written.
printf 'seq,timestamp\n1,2\n' >not_itch.csv
if "$build/tickinfer" book not_itch.csv --csv bad.csv >bad.txt 2>&1; then
  echo "FAIL refusal: a CSV file was read as a day file"; fail=1
elif grep -q "not an ITCH 5.0 day file" bad.txt && [ ! -e bad.csv ]; then
  echo "ok   refusal: $(head -1 bad.txt)"
else
  echo "FAIL refusal: unclear error"; cat bad.txt; fail=1
fi
head -c 100000 day.itch.gz >cut.itch.gz
if "$build/tickinfer" book cut.itch.gz >cut.txt 2>&1; then
  echo "FAIL truncation: a cut gzip file passed as whole"; fail=1
else
  echo "ok   truncation: $(grep -m1 'source error' cut.txt) ($(grep -m1 '^records' cut.txt | cut -d' ' -f2) records kept)"
fi

# LOBSTER message and orderbook files, every symbol, from the gzip file and from the pcap.
for src in day.itch.gz day.pcap; do
  rm -rf our_lobster
  "$build/tickinfer" book "$src" --levels 10 --lobster our_lobster --date 2019-12-30 >/dev/null
  if diff -rq ref_lobster our_lobster >/dev/null; then
    echo "ok   lobster from $src: $(ls our_lobster | wc -l) files identical"
  else
    echo "FAIL lobster from $src: files differ"; diff -rq ref_lobster our_lobster | head -5; fail=1
  fi
done
# Live: the synthetic exchange publishes the day as MoldUDP64 on lines A and B, each losing and
# reordering packets, with re-requests; `feed listen --protocol itch50` keeps the books. Every
# message must arrive (none lost), the books must stay clean, and the live orders at the end
# must be the reference's.
port=$((40000 + RANDOM % 20000))
timeout 120 "$build/tickinfer" feed listen --protocol itch50 --date 2019-12-30 --idle yield \
  --line-a 127.0.0.1:$port --line-b 127.0.0.1:$((port + 1)) --recovery 127.0.0.1:$((port + 2)) >live.txt 2>&1 &
listener=$!
sleep 0.5
"$build/tickinfer" feed serve --itch day.itch --messages "$messages" --rate 200000 --linger 1 \
  --line-a 127.0.0.1:$port --line-b 127.0.0.1:$((port + 1)) --rerequest 127.0.0.1:$((port + 2)) \
  --faults-a loss=0.02,reorder=0.02 --faults-b loss=0.02,dup=0.01 >serve.txt
wait $listener || { echo "FAIL live: feed listen exited non-zero"; cat live.txt; fail=1; }
ref_live=$(awk '/^live_orders_end/ {print $2}' ref_stats.txt)
if grep -q "^itch50: $messages messages decoded, 0 unknown type, 0 wrong length; 0 lost; $ref_live live orders" live.txt &&
   grep -q "^books: unknown_ref 0, duplicate_ref 0, overfill 0, bad_side 0, crossed 0, locked 0, capacity_rejects 0, while_unsynced 0" live.txt; then
  echo "ok   live A/B with losses and re-requests: $messages messages, $ref_live live orders, books clean ($(grep '^recovery' live.txt))"
else
  echo "FAIL live: not every message arrived or the books are not clean"; grep -E "^itch50|^books|^recovery|lost" live.txt serve.txt; fail=1
fi
grep -E "^capture|^sequencer" log_pcap.txt
exit $fail
