#!/usr/bin/env bash
# The main job, as `make demo` runs it: the synthetic exchange publishes 20 instruments on lines A
# and B with injected loss, reordering and duplicates for ~20 s; `tickinfer run` turns every tick
# into features, a model score and a signal on the bundled default configuration; a UDP listener
# counts the signals; halfway through, another process reads the shared-memory feature store the
# run publishes (tickinfer features --watch); then the decision log is replayed and the HTML
# report written. Then a shorter market goes through two compute agents (examples/default/agents.toml):
# the default model and its v2 on one feature plan, each agent half of the instruments. Last, the
# main job on NASDAQ TotalView-ITCH 5.0 (examples/itch): a synthetic ITCH day over the same lossy
# MoldUDP64 lines, full-depth books on the compute side (the `book` stage of the latency table),
# book features, the ITCH model, and the books' integrity counters.
# Usage: tools/demo.sh BUILD_DIR [SECONDS]
set -euo pipefail
build=${1:-build}
seconds=${2:-20}
bin="$build/tickinfer"
rate=50000
messages=$((rate * seconds))
ready="$build/demo.ready"
rm -f "$ready" "$build/demo-signals.out"
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT

"$bin" signals udp:127.0.0.1:32001 --summary --idle-exit 3 --seconds $((seconds + 120)) >"$build/demo-signals.out" 2>&1 &
listener=$!
"$bin" run examples/default/config.toml --log "$build/demo-decisions.tdl" --report "$build/demo-run.json" \
  --ready-file "$ready" &
run=$!
for _ in $(seq 600); do [ -f "$ready" ] && break; kill -0 $run 2>/dev/null || break; sleep 0.1; done
[ -f "$ready" ] || { echo "demo: tickinfer run did not become ready"; exit 1; }
echo "demo: exchange publishing $messages messages at $rate msg/s on lines A and B (1% loss, 2% reordering, 0.5% duplicates per line)"
( sleep $(( (seconds + 1) / 2 )); "$bin" features --watch shm:tickinfer-default-features --count 1 --columns 4 \
    | sed 's/^/features (another process): /' ) &
"$bin" feed serve --instruments 20 --messages $messages --rate $rate --wall-clock-ts --linger 1 \
  --faults-a loss=0.01,reorder=0.02,dup=0.005 --faults-b loss=0.01,reorder=0.02,dup=0.005 | sed 's/^/exchange: /'
wait $run
wait $listener || true
echo "demo: the exchange, this pipeline and the listener all ran on these $(nproc) cores at once, so the p99 and max"
echo "      above include ticks that waited for a core; the pipeline's own p99, on cores it has to itself: tickinfer pipeline bench (make pipeline-bench)"
echo "signals received by a separate UDP listener process: $(tail -1 "$build/demo-signals.out")"
echo
echo "decision log replayed through the same model, then through a retrained one (v2):"
"$bin" replay "$build/demo-decisions.tdl" --model examples/default/model.keras --examples 0 | tail -1
"$bin" replay "$build/demo-decisions.tdl" --model examples/default/model_v2/model.keras --examples 0 | tail -1
"$bin" report "$build/demo-run.json" -o "$build/demo-report.html"

echo
echo "demo: the same market through two compute agents, two models on one feature plan (examples/default/agents.toml):"
rm -f "$ready"
"$bin" run examples/default/agents.toml --ready-file "$ready" | sed 's/^/agents: /' &
run=$!
for _ in $(seq 600); do [ -f "$ready" ] && break; kill -0 $run 2>/dev/null || break; sleep 0.1; done
[ -f "$ready" ] || { echo "demo: tickinfer run (agents) did not become ready"; exit 1; }
"$bin" feed serve --instruments 20 --messages $((rate * 4)) --rate $rate --wall-clock-ts --sleep-pacing --linger 1 >/dev/null
wait $run

echo
itch_messages=$((60000 * seconds < 600000 ? 60000 * seconds : 600000))
echo "demo: the main job on NASDAQ TotalView-ITCH 5.0 (examples/itch/config.toml): a synthetic ITCH day,"
echo "      $itch_messages messages over 40 symbols at 60000 msg/s on lossy lines A and B; full-depth books of 8 symbols"
python3 tools/itch/make_itch_day.py --out "$build/demo-itch-day.itch" --messages "$itch_messages" --symbols 40 \
  --seed 2026 >/dev/null
rm -f "$ready"
"$bin" signals udp:127.0.0.1:32001 --summary --idle-exit 3 --seconds 120 >"$build/demo-itch-signals.out" 2>&1 &
listener=$!
"$bin" run examples/itch/config.toml --ready-file "$ready" --quiet | sed 's/^/itch: /' &
run=$!
for _ in $(seq 600); do [ -f "$ready" ] && break; kill -0 $run 2>/dev/null || break; sleep 0.1; done
[ -f "$ready" ] || { echo "demo: tickinfer run (itch) did not become ready"; exit 1; }
"$bin" feed serve --itch "$build/demo-itch-day.itch" --messages "$itch_messages" --rate 60000 --linger 1 \
  --faults-a loss=0.01,reorder=0.02,dup=0.005 --faults-b loss=0.01,reorder=0.02,dup=0.005 | sed 's/^/itch exchange: /'
wait $run
wait $listener || true
echo "itch signals received by a separate UDP listener process: $(tail -1 "$build/demo-itch-signals.out")"
