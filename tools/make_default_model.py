#!/usr/bin/env python3
"""Train the bundled default model of `make demo` (examples/default/) on the synthetic market.

Why: the demo must run a real model on the features it computes live, trained on the same market
the synthetic exchange publishes, so its scores mean something and its signature is checked.

Steps (all outputs are committed; rerun to regenerate them):
  1. `tickinfer pipeline ticks`: the exchange's own market generator (the events `feed serve`
     publishes), 20 instruments, as a tick CSV;
  2. `tickinfer features` over it with the 10-feature specification plus `mid` (for the label),
     10 ms bars: the batch path of the live feature pipeline (same code, same definitions);
  3. label = the mid moves up over the next 5 bars (per instrument); rows with NaN dropped;
  4. fixed standardization (mean, scale of the training rows) written into the spec, so the live
     pipeline feeds the model standardized inputs from the first tick;
  5. a Keras MLP 10 -> 128 -> 64 -> 32 -> 1 (sigmoid), the shape of bench model mlp_small;
     v1 and, with another seed and fewer epochs, v2 (the "changed model" replay compares);
  6. reference outputs: Keras' own outputs for 64 standardized rows (in0.npy / out0.npy), which
     `tickinfer predict --expect` checks in `make demo` and the tests.

Usage: make_default_model.py --tickinfer build/tickinfer [--out examples/default]
"""
from __future__ import annotations

import argparse
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

FEATURES = [
    ("spread_bps", {}),
    ("book_imbalance", {}),
    ("log_return", {"ticks": 5}),
    ("log_return", {"ticks": 20}),
    ("momentum", {"ticks": 10}),
    ("momentum", {"ticks": 50}),
    ("realized_vol", {"ticks": 20}),
    ("ewma_vol", {"alpha": 0.05}),
    ("trade_imbalance", {"trades": 20}),
    ("vwap_deviation", {"trades": 20}),
]
INSTRUMENTS = list(range(1, 21))
BAR_NS = 10_000_000
HORIZON = 5


def spec_text(name: str, extra_mid: bool, mean=None, scale=None) -> str:
    lines = [
        "# The default model's feature signature: written by tools/make_default_model.py.",
        "[feature_set]",
        f'name = "{name}"',
        f"instruments = [{', '.join(str(i) for i in INSTRUMENTS)}]",
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
    feats = FEATURES + ([("mid", {})] if extra_mid else [])
    for kind, params in feats:
        lines.append("[[feature]]")
        lines.append(f'kind = "{kind}"')
        for k, v in params.items():
            lines.append(f"{k} = {v}")
        lines.append("")
    return "\n".join(lines)


def build_model(seed: int):
    import keras
    keras.utils.set_random_seed(seed)
    return keras.Sequential([
        keras.Input(shape=(len(FEATURES),)),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tickinfer", required=True)
    ap.add_argument("--out", default="examples/default")
    ap.add_argument("--messages", type=int, default=600_000)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ticks = tmp / "ticks.csv"
        subprocess.run([args.tickinfer, "pipeline", "ticks", "--out", str(ticks), "--messages", str(args.messages),
                        "--instruments", str(len(INSTRUMENTS)), "--seed", "7"], check=True)
        (tmp / "train.toml").write_text(spec_text("default_train", extra_mid=True))
        subprocess.run([args.tickinfer, "features", str(tmp / "train.toml"), "--input", str(ticks), "--output",
                        str(tmp / "features.csv")], check=True)
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
    print(f"training rows {len(xs)}, positive share {y.mean():.3f}, columns {cols}")
    n_train = int(len(xs) * 0.8)

    import keras
    for name, seed, epochs, sub in (("", 1, 6, out), ("v2", 2, 2, out / "model_v2")):
        sub.mkdir(parents=True, exist_ok=True)
        model = build_model(seed)
        model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy", metrics=["accuracy"])
        model.fit(xs[:n_train], y[:n_train], epochs=epochs, batch_size=256, verbose=0, shuffle=True)
        loss, acc = model.evaluate(xs[n_train:], y[n_train:], verbose=0)
        print(f"model {name or 'v1'}: held-out loss {loss:.4f} accuracy {acc:.4f}")
        model.save(sub / "model.keras")
        (sub / "features.toml").write_text(spec_text("default", extra_mid=False, mean=mean, scale=scale))
        reloaded = keras.models.load_model(sub / "model.keras")
        ref_in = xs[n_train:n_train + 64]
        ref_out = np.concatenate([np.asarray(reloaded(ref_in[i:i + 1], training=False)) for i in range(len(ref_in))])
        np.save(sub / "in0.npy", ref_in)
        np.save(sub / "out0.npy", ref_out.astype(np.float32))
    return 0


if __name__ == "__main__":
    sys.exit(main())
