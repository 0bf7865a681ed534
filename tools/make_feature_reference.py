#!/usr/bin/env python3
"""Reference outputs for the feature pipeline, computed the plain batch way with pandas, numpy and
scikit-learn (no code shared with the C++ implementation).

Writes into --out (default tests/fixtures/features):
  ticks.csv              generated ticks: two instruments, short and long gaps, leading and
                         trailing gaps, extreme moves (+25 %, -20 % jumps) and invalid ticks
                         (NaN/Inf prices, zero/negative prices and sizes, crossed and one-sided books)
  spec_<policy>.toml     the feature specification, one per invalid-input policy
  expected_<policy>.npy  float64 [rows, 4 + features]: instrument, bar, state, warm, raw features
  expected_drop_std.npy  the same rows standardized (rolling StandardScaler, drop policy only)

Definitions follow docs/features.md. Run: .venv/bin/python tools/make_feature_reference.py
"""
import argparse
import math
import os

import numpy as np
import pandas as pd
from sklearn.preprocessing import StandardScaler

BAR_NS = 1_000_000_000
GAP_LIMIT = 10
T0 = 1_700_000_000 * 1_000_000_000  # exchange clock, ns since the epoch
INSTRUMENTS = [7, 42]
STD_WINDOW = 100
STD_REFIT = 25

FEATURES = [  # (kind, params) in vector order
    ("mid", {}),
    ("microprice", {}),
    ("spread_bps", {}),
    ("book_imbalance", {}),
    ("log_return", {"ticks": 5}),
    ("momentum", {"ticks": 10}),
    ("realized_vol", {"ticks": 20}),
    ("realized_vol", {"window_ns": 5_000_000_000, "capacity": 4096}),
    ("ewma_mean", {"alpha": 0.1}),
    ("ewma_vol", {"alpha": 0.05}),
    ("trade_imbalance", {"trades": 20}),
    ("vwap_deviation", {"trades": 30}),
    ("time_since_trade", {}),
    ("tick_rate", {"window_ns": 2_000_000_000, "capacity": 4096}),
]


def generate_ticks(rng):
    """Rows (ts, instrument, type, bid, ask, bid_size, ask_size, price, size, side) as text."""
    rows = []
    # Per instrument: active time span and gaps (start_s, length_s) with no ticks at all.
    plans = {
        7: dict(start=0.0, end=236.3, gaps=[(20, 3), (41, 1), (60, 10), (95, 11), (140, 30), (200, 2)],
                jumps={50: 1.25, 120: 0.8}, p0=100.0),
        42: dict(start=5.4, end=224.0, gaps=[(30, 5), (70, 12), (110, 9), (180, 4)],
                 jumps={90: 0.8, 150: 1.25}, p0=37.5),
    }
    for inst, pl in plans.items():
        t = pl["start"]
        logp = math.log(pl["p0"])
        jumped = set()
        while t < pl["end"]:
            t += rng.exponential(0.18)
            if any(g0 <= t < g0 + gl for g0, gl in pl["gaps"]):
                continue
            for js, f in pl["jumps"].items():
                if t >= js and js not in jumped:
                    logp += math.log(f)
                    jumped.add(js)
            logp += rng.normal(0, 0.0004)
            mid = math.exp(logp)
            half = 0.005 * int(rng.integers(1, 5))
            bid = round(mid - half, 2)
            ask = round(mid + half, 2)
            if ask <= bid:
                ask = round(bid + 0.01, 2)
            ts = T0 + int(t * 1e9)
            kind = "Q" if rng.random() < 0.7 else "T"
            if kind == "Q":
                r = [ts, inst, "Q", f"{bid:.2f}", f"{ask:.2f}", str(int(rng.integers(1, 900))),
                     str(int(rng.integers(1, 900))), "", "", ""]
            else:
                side = rng.choice(["B", "S", "U"], p=[0.45, 0.45, 0.1])
                px = ask if side == "B" else bid if side == "S" else round((bid + ask) / 2, 3)
                r = [ts, inst, "T", "", "", "", "", f"{px:.3f}", str(int(rng.integers(1, 500))),
                     "" if side == "U" and rng.random() < 0.5 else side]
            # About 3 % invalid ticks of every kind the validator knows.
            u = rng.random()
            if u < 0.03 and t > pl["start"] + 2:
                k = int(rng.integers(0, 7))
                if r[2] == "Q":
                    if k == 0: r[3] = "nan"
                    elif k == 1: r[4] = "inf"
                    elif k == 2: r[3] = "0"
                    elif k == 3: r[3], r[4] = r[4], r[3]  # crossed (bid > ask)
                    elif k == 4: r[5] = "0"
                    elif k == 5: r[6] = "-3"
                    else: r[4] = "-1.5"
                else:
                    if k in (0, 1): r[7] = "NaN"
                    elif k == 2: r[7] = "0"
                    elif k == 3: r[8] = "0"
                    elif k == 4: r[8] = "-10"
                    elif k == 5: r[8] = "nan"
                    else: r[7] = "-2.5"
            rows.append(r)
        # Bars holding only invalid ticks: they separate drop (a gap), hold_last (observed) and
        # mark_invalid (an invalid bar).
        for s in (170.2, 171.3, 212.5):
            ts = T0 + int(s * 1e9) + inst
            rows.append([ts, inst, "Q", "nan", "1.00", "5", "5", "", "", ""])
    rows.sort(key=lambda r: (r[0], r[1]))
    # Remove ticks so that the only-invalid bars really hold nothing else.
    out = []
    for r in rows:
        bar_s = (r[0] - T0) // BAR_NS
        if bar_s in (170, 171, 212) and r[3] != "nan":
            continue
        out.append(r)
    return out


def write_ticks(path, rows):
    with open(path, "w") as f:
        f.write("ts_ns,instrument,type,bid,ask,bid_size,ask_size,price,size,side\n")
        for r in rows:
            f.write(",".join(str(x) for x in r) + "\n")


def spec_text(policy, standardize):
    lines = ["[feature_set]", 'name = "reference"', f"instruments = {INSTRUMENTS}",
             f"bar_ns = {BAR_NS}", f"gap_limit = {GAP_LIMIT}", f'invalid_policy = "{policy}"', "window = 8", ""]
    if standardize:
        lines += ["[standardize]", 'mode = "rolling"', f"window = {STD_WINDOW}", f"refit_every = {STD_REFIT}", ""]
    for kind, params in FEATURES:
        lines.append("[[feature]]")
        lines.append(f'kind = "{kind}"')
        for k, v in params.items():
            lines.append(f"{k} = {v}")
        lines.append("")
    return "\n".join(lines)


def valid_mask(df):
    """The validation rules of docs/features.md, vectorized."""
    q = df["type"] == "Q"
    fin = lambda c: np.isfinite(df[c].astype(float))
    qok = fin("bid") & fin("ask") & fin("bid_size") & fin("ask_size")
    qok &= (df["bid"] > 0) & (df["ask"] > 0) & (df["bid"] <= df["ask"]) & (df["bid_size"] > 0) & (df["ask_size"] > 0)
    tok = fin("price") & fin("size") & (df["price"] > 0) & (df["size"] > 0)
    return np.where(q, qok, tok)


def features_per_event(ev):
    """ev: the valid events of one instrument, file order. Returns [n_events, n_features] values
    (as of each event) and warm flags, NaN rows before the first quote."""
    n = len(ev)
    ts = ev["ts_ns"].to_numpy(np.int64)
    isq = (ev["type"] == "Q").to_numpy()
    qi = np.flatnonzero(isq)
    ti = np.flatnonzero(~isq)
    bid, ask = ev["bid"].to_numpy()[qi], ev["ask"].to_numpy()[qi]
    bsz, asz = ev["bid_size"].to_numpy()[qi], ev["ask_size"].to_numpy()[qi]
    mid = pd.Series((bid + ask) / 2)
    r = np.log(mid / mid.shift(1)).fillna(0.0).to_numpy()
    nq = len(qi)
    per_quote = {}
    per_quote["mid"] = mid.to_numpy()
    per_quote["microprice"] = (bid * asz + ask * bsz) / (bsz + asz)
    per_quote["spread_bps"] = (ask - bid) / mid.to_numpy() * 1e4
    per_quote["book_imbalance"] = (bsz - asz) / (bsz + asz)
    # Index of the last quote / trade at or before each event.
    last_q = np.searchsorted(qi, np.arange(n), side="right") - 1
    last_t = np.searchsorted(ti, np.arange(n), side="right") - 1
    tprice, tsize = ev["price"].to_numpy()[ti], ev["size"].to_numpy()[ti]
    tsign = ev["side"].map({"B": 1.0, "S": -1.0}).fillna(0.0).to_numpy()[ti]
    mid_at = np.where(last_q >= 0, per_quote["mid"][np.maximum(last_q, 0)], np.nan)
    cols, warm = [], []
    for kind, p in FEATURES:
        wq = None
        if kind in per_quote:
            v = per_quote[kind]
            wq = np.ones(nq, bool)
        elif kind == "log_return":
            k = p["ticks"]
            v = np.log(mid / mid.shift(k).fillna(mid.iloc[0])).to_numpy()
            wq = np.arange(nq) >= k
        elif kind == "momentum":
            k = p["ticks"]
            m = per_quote["mid"]
            v = np.array([math.log(m[j] / np.mean(m[max(0, j - k + 1): j + 1])) for j in range(nq)])
            wq = np.arange(nq) >= k - 1
        elif kind == "realized_vol" and "ticks" in p:
            k = p["ticks"]
            v = np.array([math.sqrt(np.sum(r[max(0, j - k + 1): j + 1] ** 2)) for j in range(nq)])
            wq = np.arange(nq) >= k - 1
        elif kind == "ewma_mean":
            v = mid.ewm(alpha=p["alpha"], adjust=False).mean().to_numpy()
            wq = np.arange(nq) + 1 >= math.ceil(1 / p["alpha"])
        elif kind == "ewma_vol":
            v = np.sqrt(pd.Series(r ** 2).ewm(alpha=p["alpha"], adjust=False).mean().to_numpy())
            wq = np.arange(nq) + 1 >= math.ceil(1 / p["alpha"])
        if wq is not None:  # quote-driven: hold the last quote's value
            col = np.where(last_q >= 0, v[np.maximum(last_q, 0)], np.nan)
            w = np.where(last_q >= 0, wq[np.maximum(last_q, 0)], False)
        elif kind == "realized_vol":  # time window (t - w, t] over quotes seen so far
            wns = p["window_ns"]
            col = np.empty(n)
            for e in range(n):
                sel = qi[(qi <= e) & (ts[qi] > ts[e] - wns)]
                col[e] = math.sqrt(np.sum(r[np.searchsorted(qi, sel)] ** 2))
            w = ts - ts[0] >= wns
        elif kind in ("trade_imbalance", "vwap_deviation"):
            k = p["trades"]
            vals = np.empty(len(ti))
            for j in range(len(ti)):
                s = slice(max(0, j - k + 1), j + 1)
                if kind == "trade_imbalance":
                    vals[j] = np.sum(tsign[s] * tsize[s]) / np.sum(tsize[s])
                else:
                    vals[j] = np.sum(tprice[s] * tsize[s]) / np.sum(tsize[s])
            at = vals[np.maximum(last_t, 0)] if len(ti) else np.zeros(n)
            if kind == "trade_imbalance":
                col = np.where(last_t >= 0, at, 0.0)
            else:
                col = np.where((last_t >= 0) & (last_q >= 0), np.log(mid_at / at), 0.0)
            w = last_t + 1 >= k
        elif kind == "time_since_trade":
            since = np.where(last_t >= 0, ts[ti][np.maximum(last_t, 0)] if len(ti) else ts[0], ts[0])
            col = (ts - since) * 1e-9
            w = last_t >= 0
        elif kind == "tick_rate":
            wns = p["window_ns"]
            col = np.array([np.sum(ts[: e + 1] > ts[e] - wns) for e in range(n)]) * (1e9 / wns)
            w = ts - ts[0] >= wns
        cols.append(col)
        warm.append(w)
    vals = np.column_stack(cols)
    vals[last_q < 0, :] = np.nan
    return vals, np.all(np.column_stack(warm), axis=1)


def bar_rows_filled(row, observed, marked, rwarm, gap_limit):
    """The bar rows' gap rules (docs/features.md): rows are the observed ones (NaN elsewhere);
    a run of non-observed bars is filled linearly (edges like pandas limit_direction="both") when
    at most gap_limit long and free of invalid (marked) bars, else invalid. Returns the filled
    rows, the row states (0 invalid, 1 observed, 2 interpolated, 3 edge-filled) and warm flags."""
    nbars = len(observed)
    state = np.where(observed, 1, 0)
    rwarm = rwarm.copy()
    filled = np.array(pd.DataFrame(row).interpolate(method="linear", limit_direction="both").to_numpy(), copy=True)
    i = 0
    while i < nbars:
        if observed[i]:
            i += 1
            continue
        j = i
        while j < nbars and not observed[j]:
            j += 1
        run = slice(i, j)
        leading, trailing = i == 0, j == nbars
        if j - i > gap_limit or marked[run].any() or not observed.any():
            filled[run] = np.nan
            state[run] = 0
        else:
            state[run] = 3 if (leading or trailing) else 2
            left = rwarm[i - 1] if not leading else rwarm[j]
            right = rwarm[j] if not trailing else rwarm[i - 1]
            rwarm[run] = left and right
        i = j
    rwarm[state == 0] = False
    return filled, state, rwarm


def reference(df, policy, grid):
    g0, g1 = grid
    nbars = g1 - g0 + 1
    width = len(FEATURES)
    out = []
    for inst in INSTRUMENTS:
        d = df[df["instrument"] == inst].reset_index(drop=True)
        ok = valid_mask(d)
        ev = d[ok].reset_index(drop=True)
        vals, warm = features_per_event(ev)
        # Walk the events: which bars are observed / invalid, and the last valid event at bar end.
        row = np.full((nbars, width), np.nan)
        rwarm = np.zeros(nbars, bool)
        observed = np.zeros(nbars, bool)
        marked = np.zeros(nbars, bool)
        have_quote = False
        k = -1  # index into ev of the last valid event
        for i in range(len(d)):
            b = d["ts_ns"].iat[i] // BAR_NS - g0
            if ok[i]:
                k += 1
                have_quote = have_quote or d["type"].iat[i] == "Q"
                if have_quote:
                    observed[b] = True
            elif policy == "hold_last" and have_quote:
                observed[b] = True
            elif policy == "mark_invalid":
                marked[b] = True
            if observed[b] and k >= 0:
                row[b] = vals[k]
                rwarm[b] = warm[k]
        observed &= ~marked
        row[~observed] = np.nan
        filled, state, rwarm = bar_rows_filled(row, observed, marked, rwarm, GAP_LIMIT)
        head = np.column_stack([np.full(nbars, inst), np.arange(g0, g1 + 1), state, rwarm])
        out.append(np.column_stack([head.astype(float), filled]))
    return np.vstack(out)


def standardize(ref):
    """Rolling StandardScaler: each row is scaled with the parameters published before it; every
    STD_REFIT accepted (observed or interpolated) rows, refit on the last STD_WINDOW of them."""
    z = np.full_like(ref, np.nan)
    z[:, :4] = ref[:, :4]
    for inst in INSTRUMENTS:
        idx = np.flatnonzero(ref[:, 0] == inst)
        accepted, scaler = [], None
        for r in idx:
            state, x = ref[r, 2], ref[r, 4:]
            if state != 0 and scaler is not None:
                z[r, 4:] = (x - scaler.mean_) / scaler.scale_
            if state in (1, 2):
                accepted.append(x)
                if len(accepted) % STD_REFIT == 0:
                    scaler = StandardScaler().fit(np.array(accepted[-STD_WINDOW:]))
    return z


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "features"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(20261130)
    rows = generate_ticks(rng)
    ticks_path = os.path.join(args.out, "ticks.csv")
    write_ticks(ticks_path, rows)
    df = pd.read_csv(ticks_path, dtype={"type": str, "side": str})
    for c in ("bid", "ask", "bid_size", "ask_size", "price", "size"):
        df[c] = df[c].astype(float)
    grid = (int(df["ts_ns"].min()) // BAR_NS, int(df["ts_ns"].max()) // BAR_NS)
    for policy in ("drop", "hold_last", "mark_invalid"):
        with open(os.path.join(args.out, f"spec_{policy}.toml"), "w") as f:
            f.write(spec_text(policy, standardize=policy == "drop"))
        ref = reference(df, policy, grid)
        np.save(os.path.join(args.out, f"expected_{policy}.npy"), ref)
        if policy == "drop":
            np.save(os.path.join(args.out, "expected_drop_std.npy"), standardize(ref))
        states = np.bincount(ref[:, 2].astype(int), minlength=4)
        print(f"{policy}: {len(ref)} rows, states invalid/observed/interpolated/edge = {states.tolist()}")


if __name__ == "__main__":
    main()
