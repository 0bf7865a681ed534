#!/usr/bin/env python3
"""tickinfer's decode + order book against itch-book on the same ITCH day, one core, same run.

Rounds alternate the two (and the length-walk floor inside tickinfer's bench binary), pinned to
one CPU, so drift in machine load hits both alike; the table reports medians over rounds.
tickinfer's row is its file path (book::ItchReplay with look-ahead, as `tickinfer book` reads a
day); the row below it is the live feed's path, each message applied as it arrives, from the same
process in alternating order.

  bench/itch/run.py --build build --day DAYFILE [--rounds 3] [--pin 1] [--json OUT]

The day must be a raw (uncompressed) file, so both sides replay bytes already in memory and
neither measures gunzip. itch-book runs from .venv-itch (bench/itch/setup_venv.sh).
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cpu_model():
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def run_pinned(cmd, pin):
    if pin is not None:
        cmd = ["taskset", "-c", str(pin)] + cmd
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:  # say why (the bench names a disagreement between its two paths)
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
    return done.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--day", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pin", type=int, default=1)
    ap.add_argument("--json")
    ap.add_argument("--peer-python", default=os.path.join(ROOT, ".venv-itch", "bin", "python"))
    a = ap.parse_args()

    ours, peers = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):
            out = os.path.join(tmp, f"ours{r}.json")
            run_pinned([os.path.join(a.build, "bench", "book_replay_bench"), a.day, "--rounds", "1",
                        "--first", "single" if r % 2 else "ahead", "--json", out], a.pin)
            with open(out) as f:
                ours.append(json.load(f))
            out = os.path.join(tmp, f"peer{r}.json")
            run_pinned([a.peer_python, os.path.join(ROOT, "bench", "itch", "itch_book_peer.py"), a.day,
                        "--repeat", "1", "--json", out], a.pin)
            with open(out) as f:
                peers.append(json.load(f))

    def med(rows, key):
        return statistics.median(float(x[key]) for x in rows)

    msgs = ours[0]["messages"]
    ours_ns = med(ours, "replay_ns")
    floor_ns = med(ours, "floor_ns")
    peer_ns = statistics.median(float(p["ns_per_message"]) for p in peers)
    load = os.getloadavg()
    print(f"machine: {cpu_model()}; pinned to CPU {a.pin}; load before {load[0]:.2f}; "
          f"{msgs:,} messages; {a.rounds} rounds, medians")
    print()
    print("| | ns/message | M msg/s | per-message p50 / p99 / p99.9 (ns) | vs itch-book |")
    print("|---|---:|---:|---|---:|")
    print(f"| floor: walk lengths | {floor_ns:.2f} | {1e3 / floor_ns:.1f} | | |")
    single_ns = med(ours, "single_ns")
    print(f"| tickinfer decode + book (look-ahead: files) | {ours_ns:.2f} | {1e3 / ours_ns:.2f} | | "
          f"**{peer_ns / ours_ns:.2f}x** |")
    print(f"| tickinfer, one message at a time (live feed) | {single_ns:.2f} | {1e3 / single_ns:.2f} | "
          f"{med(ours, 'p50_ns'):.1f} / {med(ours, 'p99_ns'):.1f} / {med(ours, 'p999_ns'):.1f} "
          f"(timed region alone {med(ours, 'empty_p50_ns'):.1f}) | {peer_ns / single_ns:.2f}x |")
    chunk = ""
    if "chunk_p50_ns" in peers[0]:
        chunk = f"{med(peers, 'chunk_p50_ns'):.1f} / {med(peers, 'chunk_p99_ns'):.1f} (per 64 KiB chunk, per message)"
    print(f"| itch-book 0.2.1 parse + book | {peer_ns:.2f} | {1e3 / peer_ns:.2f} | {chunk} | 1.00x |")
    print()
    print("tickinfer integrity:", {k: ours[-1][k] for k in ("unknown_ref", "crossed", "locked")},
          "; itch-book:", {k: v for k, v in peers[-1].items() if k in ("unknown", "malformed", "missing_ref", "crossed_books")})
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"machine": cpu_model(), "ours": ours, "peer": peers, "ratio": peer_ns / ours_ns,
                       "ratio_one_at_a_time": peer_ns / single_ns}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
