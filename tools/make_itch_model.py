#!/usr/bin/env python3
"""Train the model of `make demo`'s NASDAQ ITCH 5.0 run (examples/itch/) on a synthetic ITCH day.

Why: the demo runs the main job on exchange data: a day of ITCH 5.0 over MoldUDP64, full-depth
books on the compute side, features read from the books, a model, signals. The model must be
trained on the features the books give, so its signature is checked and its scores mean something.

Steps (all outputs are committed; rerun to regenerate them):
  1. tools/itch/make_itch_day.py writes the demo's day (the arguments in DAY_ARGS; tools/demo.sh
     writes the same day to publish it);
  2. the busiest SYMBOLS symbols of the day are the run's instruments (1..N in that order);
  3. `tickinfer features --symbols` over the day with the book feature specification plus `mid`
     (for the label), 5 s bars: the batch path of the live pipeline (same books, same features);
  4. label = the mid moves up over the next 5 bars (per instrument); rows with NaN dropped;
  5. fixed standardization (mean, scale of the training rows) written into the spec;
  6. a Keras MLP 12 -> 64 -> 32 -> 1 (sigmoid);
  7. reference outputs: Keras' own outputs for 64 standardized rows (in0.npy / out0.npy).

Usage: make_itch_model.py --tickinfer build/tickinfer [--out examples/itch]
"""
from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["CUDA_VISIBLE_DEVICES"] = ""
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
os.environ["TF_DETERMINISTIC_OPS"] = "1"
os.environ.pop("TF_USE_LEGACY_KERAS", None)

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent / "itch"))
import reference_book as rb  # noqa: E402

DAY_ARGS = ["--messages", "600000", "--symbols", "40", "--seed", "2026"]
DATE = "2019-12-30"  # make_itch_day.py's trading date
SYMBOLS = 8
FEATURES = [
    ("spread_bps", {}),
    ("book_imbalance", {}),
    ("depth_imbalance", {"levels": 5}),
    ("queue_imbalance", {"level": 2}),
    ("order_flow_imbalance", {"levels": 5, "ticks": 100}),
    ("log_return", {"ticks": 20}),
    ("realized_vol", {"ticks": 50}),
    ("trade_imbalance", {"trades": 20}),
    ("order_rate", {"flow": '"add"', "window_ns": 10_000_000_000}),
    ("order_rate", {"flow": '"cancel"', "window_ns": 10_000_000_000}),
    ("order_rate", {"flow": '"execute"', "window_ns": 10_000_000_000}),
    ("cumulative_depth", {"side": '"bid"', "levels": 5}),
]
BAR_NS = 5_000_000_000
HORIZON = 5


def spec_text(name: str, n: int, extra_mid: bool, mean=None, scale=None) -> str:
    lines = [
        "# The ITCH demo model's feature signature: written by tools/make_itch_model.py.",
        "[feature_set]",
        f'name = "{name}"',
        f"instruments = [{', '.join(str(i) for i in range(1, n + 1))}]",
        f"bar_ns = {BAR_NS}",
        "gap_limit = 10",
        'invalid_policy = "drop"',
        "window = 1",
        "",
    ]
    if mean is not None:
        lines += ["[standardize]", 'mode = "fixed"',
                  "mean = [" + ", ".join(repr(float(v)) for v in mean) + "]",
                  "scale = [" + ", ".join(repr(float(v)) for v in scale) + "]", ""]
    for kind, params in FEATURES + ([("mid", {})] if extra_mid else []):
        lines.append("[[feature]]")
        lines.append(f'kind = "{kind}"')
        for k, v in params.items():
            lines.append(f"{k} = {v}")
        lines.append("")
    return "\n".join(lines)


def busiest_symbols(day: Path, n: int) -> list[str]:
    """The n symbols with the most add orders, busiest first (ties by name)."""
    names, adds = {}, collections.Counter()
    for _, msg in rb.read_records(str(day)):
        t = msg[:1]
        if t == b"R":
            names[rb.u16(msg, 1)[0]] = msg[11:19].decode("ascii").rstrip(" ")
        elif t in (b"A", b"F"):
            adds[rb.u16(msg, 1)[0]] += 1
    ranked = sorted(adds, key=lambda loc: (-adds[loc], names[loc]))
    return [names[loc] for loc in ranked[:n]]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tickinfer", required=True)
    ap.add_argument("--out", default="examples/itch")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    root = Path(__file__).resolve().parent
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        day = tmp / "day.itch"
        subprocess.run([sys.executable, str(root / "itch" / "make_itch_day.py"), "--out", str(day), *DAY_ARGS],
                       check=True, stdout=subprocess.DEVNULL)
        symbols = busiest_symbols(day, SYMBOLS)
        (tmp / "train.toml").write_text(spec_text("itch_train", len(symbols), extra_mid=True))
        subprocess.run([args.tickinfer, "features", str(tmp / "train.toml"), "--input", str(day), "--symbols",
                        ",".join(symbols), "--date", DATE, "--output", str(tmp / "features.csv")], check=True)
        df = pd.read_csv(tmp / "features.csv")
    cols = list(df.columns[4:4 + len(FEATURES)])
    df = df.sort_values(["instrument", "bar"])
    df["future_mid"] = df.groupby("instrument")["mid"].shift(-HORIZON)
    df = df.dropna()
    x = df[cols].to_numpy(np.float64)
    y = (df["future_mid"] > df["mid"]).astype(np.float32).to_numpy()
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale <= 0] = 1.0
    xs = ((x - mean) / scale).astype(np.float32)
    print(f"symbols {symbols}; training rows {len(xs)}, positive share {y.mean():.3f}, columns {cols}")
    n_train = int(len(xs) * 0.8)

    import keras
    keras.utils.set_random_seed(1)
    model = keras.Sequential([
        keras.Input(shape=(len(FEATURES),)),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy", metrics=["accuracy"])
    model.fit(xs[:n_train], y[:n_train], epochs=8, batch_size=256, verbose=0, shuffle=True)
    loss, acc = model.evaluate(xs[n_train:], y[n_train:], verbose=0)
    print(f"held-out loss {loss:.4f} accuracy {acc:.4f}")
    model.save(out / "model.keras")
    (out / "features.toml").write_text(spec_text("itch", len(symbols), extra_mid=False, mean=mean, scale=scale))
    (out / "symbols.txt").write_text(",".join(symbols) + "\n")
    reloaded = keras.models.load_model(out / "model.keras")
    ref_in = xs[n_train:n_train + 64]
    ref_out = np.concatenate([np.asarray(reloaded(ref_in[i:i + 1], training=False)) for i in range(len(ref_in))])
    np.save(out / "in0.npy", ref_in)
    np.save(out / "out0.npy", ref_out.astype(np.float32))
    return 0


if __name__ == "__main__":
    sys.exit(main())
