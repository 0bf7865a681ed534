#!/usr/bin/env python3
"""A labelled direction task from the synthetic exchange, for training and pruning experiments.

Steps:
  1. `tickinfer pipeline ticks`: the exchange's own market generator (what `feed serve`
     publishes), 20 instruments, as a tick CSV. Regimes cycle every --events-per-regime events in
     the generator's default order calm, rally, burst, crash, flat (docs/feed.md), so every
     regime is in the data, several times over;
  2. `tickinfer features` with the repo's default feature specification
     (examples/default/features.toml: its 10 features, 10 ms bars) plus `mid` for the label, raw;
     the 10 features are then standardized with that spec's fixed mean/scale, i.e. exactly the
     vectors the live pipeline feeds the default model;
  3. label = direction of the mid over the next N bars of the same instrument (N = --horizon,
     default 10; one bar = 10 ms): 1 when mid[t + N] > mid[t], 0 when it is lower; rows where it
     is unchanged (flat) are dropped, as are rows that are not observed (state != 1), not warm,
     non-finite, or without N bars ahead;
  4. split by instrument (instruments 1-16 train, 17-20 validation), so both halves span every
     regime and no validation row shares a time window with a training row of its instrument.

Writes into --out: x_train.npy, y_train.npy, x_val.npy, y_val.npy (float32; x [rows, 10]),
regime_train.npy / regime_val.npy (int8 regime of each row, indices into REGIMES) and task.json
(counts, shares, the exact command). Seeded (--seed) and deterministic.

  --small  (tests; about a second): 200,000 events, 10,000 per regime (4 cycles)
  default  (the documented mode; seconds): 2,000,000 events, 50,000 per regime (8 cycles)

Usage: make_direction_task.py [--tickinfer build/tickinfer] [--out build/direction_task] [--small]
The large-mode data set is not committed (build/ is ignored).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import numpy as np

REGIMES = ["calm", "rally", "burst", "crash", "flat"]  # the generator's default cycle order
TRAIN_INSTRUMENTS = set(range(1, 17))


def spec_text(spec: dict) -> str:
    """The default spec without standardization, plus `mid` (the label's source), raw."""
    def val(v):
        if isinstance(v, str):
            return f'"{v}"'
        if isinstance(v, list):
            return "[" + ", ".join(val(x) for x in v) + "]"
        return str(v)
    lines = ["[feature_set]"] + [f"{k} = {val(v)}" for k, v in spec["feature_set"].items()]
    for f in spec["feature"] + [{"kind": "mid"}]:
        lines.append("[[feature]]")
        lines += [f"{k} = {val(v)}" for k, v in f.items()]
    return "\n".join(lines) + "\n"


def bar_regimes(ticks_csv: Path, bar_ns: int, events_per_regime: int, bars: np.ndarray) -> np.ndarray:
    """Regime of each bar (the `bar` column: exchange time // bar_ns): the regime of the last
    event before the bar's end. Event i is in regime (i // events_per_regime) % 5."""
    ts = np.loadtxt(ticks_csv, delimiter=",", skiprows=1, usecols=0, dtype=np.int64)
    event_regime = (np.arange(len(ts)) // events_per_regime) % len(REGIMES)
    bar_end = (bars.astype(np.int64) + 1) * bar_ns
    idx = np.clip(np.searchsorted(ts, bar_end, side="left") - 1, 0, len(ts) - 1)
    return event_regime[idx].astype(np.int8)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tickinfer", default="build/tickinfer")
    ap.add_argument("--spec", default=str(Path(__file__).resolve().parent.parent / "examples" / "default" / "features.toml"))
    ap.add_argument("--out", default="build/direction_task")
    ap.add_argument("--small", action="store_true", help="test size: 200k events (seconds)")
    ap.add_argument("--events", type=int, help="events to generate (default 2,000,000; --small 200,000)")
    ap.add_argument("--events-per-regime", type=int)
    ap.add_argument("--horizon", type=int, default=10, help="label horizon N in bars (default 10)")
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()
    events = args.events or (200_000 if args.small else 2_000_000)
    per_regime = args.events_per_regime or (10_000 if args.small else 50_000)
    spec = tomllib.loads(Path(args.spec).read_text())
    mean = np.array(spec["standardize"]["mean"], np.float64)
    scale = np.array(spec["standardize"]["scale"], np.float64)
    nfeat = len(spec["feature"])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ticks = tmp / "ticks.csv"
        n_inst = len(spec["feature_set"]["instruments"])
        subprocess.run([args.tickinfer, "pipeline", "ticks", "--out", str(ticks), "--messages", str(events),
                        "--instruments", str(n_inst), "--seed", str(args.seed),
                        "--events-per-regime", str(per_regime)], check=True, stdout=subprocess.DEVNULL)
        (tmp / "spec.toml").write_text(spec_text(spec))
        subprocess.run([args.tickinfer, "features", str(tmp / "spec.toml"), "--input", str(ticks),
                        "--output", str(tmp / "features.npy"), "--raw"], check=True, stdout=subprocess.DEVNULL)
        table = np.load(tmp / "features.npy")  # instrument, bar, state, warm, 10 features, mid
        regime = bar_regimes(ticks, spec["feature_set"]["bar_ns"], per_regime, table[:, 1])

    inst, bar, state, warm = table[:, 0].astype(int), table[:, 1].astype(int), table[:, 2], table[:, 3]
    x_raw, mid = table[:, 4:4 + nfeat], table[:, 4 + nfeat]
    # Rows are in instrument order, bars ascending and contiguous: the row N ahead is N bars ahead
    # when it has the same instrument and bar + N.
    h = args.horizon
    ahead = np.full(len(table), np.nan)
    same = (inst[h:] == inst[:-h]) & (bar[h:] == bar[:-h] + h)
    ahead[:-h][same] = mid[h:][same]
    keep = (state == 1) & (warm == 1) & np.isfinite(x_raw).all(1) & np.isfinite(mid) & np.isfinite(ahead)
    keep &= ahead != mid  # flat: dropped
    x = ((x_raw - mean) / scale).astype(np.float32)
    y = (ahead > mid).astype(np.float32)
    is_train = np.isin(inst, list(TRAIN_INSTRUMENTS))
    summary = {"command": " ".join(["tools/make_direction_task.py"] + sys.argv[1:]),
               "events": events, "events_per_regime": per_regime, "seed": args.seed, "horizon_bars": h,
               "bar_ns": spec["feature_set"]["bar_ns"], "features": [f["kind"] + "".join(
                   f"_{v}" for k, v in f.items() if k != "kind") for f in spec["feature"]],
               "label": "1 if mid[t+N] > mid[t], 0 if lower; flat dropped", "regimes": REGIMES,
               "rows_total": int(len(table)), "rows_flat_dropped": int(((ahead == mid) & np.isfinite(ahead)).sum())}
    for name, sel in (("train", keep & is_train), ("val", keep & ~is_train)):
        np.save(out / f"x_{name}.npy", x[sel])
        np.save(out / f"y_{name}.npy", y[sel])
        np.save(out / f"regime_{name}.npy", regime[sel])
        summary[name] = {"rows": int(sel.sum()), "up_share": float(y[sel].mean()),
                         "rows_per_regime": {r: int((regime[sel] == i).sum()) for i, r in enumerate(REGIMES)}}
    (out / "task.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps({k: summary[k] for k in ("train", "val", "rows_flat_dropped")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
