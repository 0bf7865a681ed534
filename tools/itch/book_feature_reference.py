#!/usr/bin/env python3
"""Reference values for the book features of `tickinfer features` on an ITCH 5.0 day.

Why: the depth features (level prices and sizes, cumulative depth, depth and queue imbalance,
multi-level order-flow imbalance, order rates, the LOB snapshot group) and the top-of-book and
trade features fed from a full-depth book must be checked against something that shares no code
with the C++ pipeline. The books come from tools/itch/reference_book.py (a plain-Python book
written from the ITCH spec); the features are computed here the plain way, from the definitions
in docs/features.md ("Book features"), per message, then sampled into bars with numpy/pandas.

Writes --spec (the feature specification, drop policy) and --expected (float64 [rows, 4 +
features]: instrument, bar, state, warm, then the features; the layout of `tickinfer features
--output x.npy`). With --check OUT.npy, compares tickinfer's matrix with the expected one instead
and exits non-zero on any difference beyond 1e-9 (relative) / 1e-9 (absolute).

    book_feature_reference.py DAY --symbols A,B,C --date 2019-12-30 --spec s.toml --expected e.npy
    book_feature_reference.py DAY ... --check out.npy
"""
import argparse
import bisect
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import reference_book as rb  # noqa: E402
from make_feature_reference import bar_rows_filled  # noqa: E402  (the same gap rules, drop policy)

BAR_NS = 30 * 1_000_000_000
GAP_LIMIT = 10
WINDOW_NS = 60 * 1_000_000_000
LOB_LEVELS = 10
OFI_LEVELS, OFI_TICKS = 3, 50
DEPTH = LOB_LEVELS  # the deepest level any feature reads


def spec_text(n_symbols):
    inst = ", ".join(str(i + 1) for i in range(n_symbols))
    lines = [
        "[feature_set]", 'name = "book_reference"', f"instruments = [{inst}]", f"bar_ns = {BAR_NS}",
        f"gap_limit = {GAP_LIMIT}", 'invalid_policy = "drop"', "",
        '[[feature]]\nkind = "mid"',
        '[[feature]]\nkind = "log_return"\nticks = 5',
        '[[feature]]\nkind = "trade_imbalance"\ntrades = 20',
        f'[[feature]]\nkind = "tick_rate"\nwindow_ns = {WINDOW_NS}',
        '[[feature]]\nkind = "level_price"\nside = "bid"\nlevel = 3',
        '[[feature]]\nkind = "level_size"\nside = "ask"\nlevel = 2',
        '[[feature]]\nkind = "cumulative_depth"\nside = "bid"\nlevels = 5',
        '[[feature]]\nkind = "depth_imbalance"\nlevels = 5',
        '[[feature]]\nkind = "queue_imbalance"\nlevel = 1',
        '[[feature]]\nkind = "queue_imbalance"\nlevel = 2',
        f'[[feature]]\nkind = "order_flow_imbalance"\nlevels = {OFI_LEVELS}\nticks = {OFI_TICKS}',
        f'[[feature]]\nkind = "order_rate"\nflow = "add"\nwindow_ns = {WINDOW_NS}',
        f'[[feature]]\nkind = "order_rate"\nflow = "cancel"\nwindow_ns = {WINDOW_NS}',
        f'[[feature]]\nkind = "order_rate"\nflow = "execute"\nwindow_ns = {WINDOW_NS}',
        f'[[feature]]\nkind = "lob_snapshot"\nlevels = {LOB_LEVELS}',
    ]
    return "\n".join(lines) + "\n"


class Collect(rb.Replay):
    """The reference replay, recording one tick per message that changed a selected book or
    printed a trade: (instrument, ts, bids, asks, adds, cancels, executions, trade)."""

    def __init__(self, symbols, epoch_midnight):
        super().__init__(None, DEPTH, None, None, "")
        self.wanted = {s: i + 1 for i, s in enumerate(symbols)}
        self.midnight = epoch_midnight
        self.ticks = []

    def on_message(self, seq, msg):
        t = msg[:1]
        if t not in rb.SPEC_LEN or len(msg) != rb.SPEC_LEN[t]:
            return super().on_message(seq, msg)
        locate = rb.u16(msg, 1)[0]
        ts = (rb.u16(msg, 5)[0] << 32) | rb.u32(msg, 7)[0]
        before = {}
        if t in (b"E", b"C", b"X", b"D"):
            o = self.orders.get(rb.u64(msg, 11)[0])
            before = {"order": list(o) if o else None}
        elif t == b"U":
            o = self.orders.get(rb.u64(msg, 11)[0])
            before = {"order": list(o) if o else None}
        elif t in (b"A", b"F"):
            before = {"known": rb.u64(msg, 11)[0] in self.orders}
        super().on_message(seq, msg)
        adds = cancels = execs = 0
        trade = None
        book_locate = locate
        changed = False
        if t in (b"A", b"F"):
            shares, side = rb.u32(msg, 20)[0], msg[19:20]
            changed = not before["known"] and shares > 0 and side in (b"B", b"S")
            adds = 1
        elif t in (b"X", b"D"):
            changed = before["order"] is not None
            book_locate = before["order"][0] if changed else locate
            cancels = 1
        elif t == b"U":
            changed = before["order"] is not None
            book_locate = before["order"][0] if changed else locate
            adds = cancels = 1
        elif t in (b"E", b"C"):
            o = before["order"]
            changed = o is not None
            execs = 1
            if o is not None:
                book_locate = o[0]
                sign = -1 if o[1] == 0 else 1  # the aggressor is opposite the resting side
                shares = rb.u32(msg, 19)[0]
                if t == b"E":
                    trade = (o[2] / 1e4, shares, sign)
                elif msg[31:32] == b"Y":
                    trade = (rb.u32(msg, 32)[0] / 1e4, shares, sign)
        elif t == b"P":
            trade = (rb.u32(msg, 32)[0] / 1e4, rb.u32(msg, 20)[0], 0)
        elif t == b"Q":
            shares = rb.u64(msg, 11)[0]
            if shares > 0:
                trade = (rb.u32(msg, 27)[0] / 1e4, shares, 0)
        else:
            return
        if not (changed or trade is not None):
            return
        sym = self.symbols.get(book_locate)
        if sym not in self.wanted:
            return
        book = self.books.get(book_locate) or rb.Book()
        bids = [(p / 1e4, q) for p, q in book.top(0, DEPTH)]
        asks = [(p / 1e4, q) for p, q in book.top(1, DEPTH)]
        self.ticks.append((self.wanted[sym], self.midnight + ts, bids, asks, adds, cancels, execs, trade))


def feature_names():
    names = ["mid", "log_return_5", "trade_imbalance_20", f"tick_rate_{WINDOW_NS}ns", "level_price_bid_3",
             "level_size_ask_2", "cumulative_depth_bid_5", "depth_imbalance_5", "queue_imbalance_1",
             "queue_imbalance_2", f"order_flow_imbalance_{OFI_LEVELS}_{OFI_TICKS}",
             f"order_rate_add_{WINDOW_NS}ns", f"order_rate_cancel_{WINDOW_NS}ns", f"order_rate_execute_{WINDOW_NS}ns"]
    for i in range(1, LOB_LEVELS + 1):
        names += [f"ask_price_{i}", f"ask_size_{i}", f"bid_price_{i}", f"bid_size_{i}"]
    return names


def level(side, i):
    """(price, size) of level i (0-based): an absent level has size 0 and the deepest price."""
    if i < len(side):
        return side[i]
    return side[-1][0], 0


def per_tick_features(ticks):
    """Values and warm flags after each accepted tick of one instrument; the accepted mask."""
    vals, warms, accepted = [], [], []
    have_quote = False
    top = None
    mids = []           # mids at quote ticks
    trades = []         # (sign * size, size)
    times = []          # accepted tick times
    flows = {0: [], 1: [], 2: []}  # (ts, running count)
    ofi_events = []
    prev_book = None
    first_ts = None
    for (_, ts, bids, asks, adds, cancels, execs, trade) in ticks:
        ok = bids and asks and bids[0][0] > 0 and bids[0][0] <= asks[0][0]
        if ok and trade is not None:
            ok = trade[0] > 0 and trade[1] > 0
        accepted.append(bool(ok))
        if not ok:
            continue
        if first_ts is None:
            first_ts = ts
        now_top = (bids[0][0], asks[0][0], bids[0][1], asks[0][1])
        if not have_quote or now_top != top:
            top = now_top
            mids.append((top[0] + top[1]) / 2)
            have_quote = True
        mid = mids[-1]
        row, warm = [], []
        row.append(mid)
        warm.append(True)
        k = 5
        row.append(math.log(mids[-1] / mids[max(0, len(mids) - 1 - k)]))
        warm.append(len(mids) > k)
        if trade is not None:
            trades.append((trade[2] * trade[1], trade[1]))
        last = trades[-20:]
        tot = sum(s for _, s in last)
        row.append(sum(x for x, _ in last) / tot if tot > 0 else 0.0)
        warm.append(len(trades) >= 20)
        times.append(ts)
        row.append((len(times) - bisect.bisect_right(times, ts - WINDOW_NS)) * 1e9 / WINDOW_NS)
        warm.append(ts - first_ts >= WINDOW_NS)
        row.append(level(bids, 2)[0])
        row.append(level(asks, 1)[1])
        row.append(float(sum(q for _, q in bids[:5])))
        b5, a5 = sum(q for _, q in bids[:5]), sum(q for _, q in asks[:5])
        row.append((b5 - a5) / (b5 + a5))
        for i in (0, 1):
            qb = bids[i][1] if i < len(bids) else 0
            qa = asks[i][1] if i < len(asks) else 0
            row.append((qb - qa) / (qb + qa) if qb + qa > 0 else 0.0)
        warm += [True] * 6
        # Multi-level OFI: absent bid levels at price 0, absent ask levels at +infinity, size 0.
        e = 0.0
        cur = ([bids[m] if m < len(bids) else (0.0, 0) for m in range(OFI_LEVELS)],
               [asks[m] if m < len(asks) else (math.inf, 0) for m in range(OFI_LEVELS)])
        if prev_book is not None:
            for m in range(OFI_LEVELS):
                (pb, qb), (ppb, pqb) = cur[0][m], prev_book[0][m]
                (pa, qa), (ppa, pqa) = cur[1][m], prev_book[1][m]
                e += (qb if pb >= ppb else 0) - (pqb if pb <= ppb else 0)
                e -= (qa if pa <= ppa else 0) - (pqa if pa >= ppa else 0)
        prev_book = cur
        ofi_events.append(e)
        row.append(float(sum(ofi_events[-OFI_TICKS:])))
        warm.append(len(ofi_events) >= OFI_TICKS)
        for kind, count in ((0, adds), (1, cancels), (2, execs)):
            if count:  # flows[kind]: (time, running count of this kind)
                flows[kind].append((ts, (flows[kind][-1][1] if flows[kind] else 0) + count))
            f = flows[kind]
            j = bisect.bisect_right(f, (ts - WINDOW_NS, math.inf))  # the first entry inside the window
            inside = (f[-1][1] - (f[j - 1][1] if j > 0 else 0)) if f else 0
            row.append(inside * 1e9 / WINDOW_NS)
            warm.append(ts - first_ts >= WINDOW_NS)
        for i in range(LOB_LEVELS):
            ap, aq = level(asks, i)
            bp, bq = level(bids, i)
            row += [ap, float(aq), bp, float(bq)]
            warm += [True] * 4
        vals.append(row)
        warms.append(all(warm))
    return np.array(vals, dtype=float).reshape(-1, len(feature_names())), np.array(warms, bool), np.array(accepted)


def bar_rows(inst, ticks, grid):
    """The rows of one instrument over the grid: last accepted tick per bar, short gaps filled
    linearly (edges like pandas limit_direction='both'), long ones invalid (NaN, state 0)."""
    g0, g1 = grid
    nbars = g1 - g0 + 1
    width = len(feature_names())
    vals, warm, ok = per_tick_features(ticks)
    row = np.full((nbars, width), np.nan)
    rwarm = np.zeros(nbars, bool)
    observed = np.zeros(nbars, bool)
    k = -1
    for i, t in enumerate(ticks):
        if not ok[i]:
            continue
        k += 1
        b = t[1] // BAR_NS - g0
        observed[b] = True
        row[b] = vals[k]
        rwarm[b] = warm[k]
    filled, state, rwarm = bar_rows_filled(row, observed, np.zeros(nbars, bool), rwarm, GAP_LIMIT)
    head = np.column_stack([np.full(nbars, inst), np.arange(g0, g1 + 1), state, rwarm])
    return np.column_stack([head.astype(float), filled])


def epoch_midnight(date):
    """Unix ns of midnight US Eastern on date (the 2007 US DST rule; the day has no 02:00 switch)."""
    import datetime
    y, m, d = map(int, date.split("-"))

    def nth_sunday(month, n):
        first = datetime.date(y, month, 1)
        return first + datetime.timedelta(days=(6 - first.weekday()) % 7 + 7 * (n - 1))
    day = datetime.date(y, m, d)
    dst = nth_sunday(3, 2) <= day < nth_sunday(11, 1)
    utc = datetime.datetime(y, m, d, tzinfo=datetime.timezone.utc) + datetime.timedelta(hours=4 if dst else 5)
    return int(utc.timestamp()) * 1_000_000_000


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("day")
    ap.add_argument("--symbols", required=True)
    ap.add_argument("--date", required=True)
    ap.add_argument("--spec")
    ap.add_argument("--expected", required=True)
    ap.add_argument("--check", help="tickinfer's output .npy to compare with --expected")
    args = ap.parse_args()
    if args.check:
        exp, got = np.load(args.expected), np.load(args.check)
        if exp.shape != got.shape:
            sys.exit(f"FAIL book features: shape {got.shape}, expected {exp.shape}")
        names = ["instrument", "bar", "state", "warm"] + feature_names()
        bad = ~np.isclose(got, exp, rtol=1e-9, atol=1e-9, equal_nan=True)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            sys.exit(f"FAIL book features: {int(bad.sum())} values differ; first at row {r} "
                     f"(instrument {exp[r, 0]:.0f}, bar {exp[r, 1]:.0f}) column {names[c]}: {got[r, c]!r} "
                     f"vs expected {exp[r, c]!r}")
        states = np.bincount(exp[:, 2].astype(int), minlength=4)
        print(f"ok   book features: {exp.shape[0]} rows x {exp.shape[1] - 4} features equal "
              f"(observed {states[1]}, interpolated {states[2]}, edge-filled {states[3]}, invalid {states[0]}; "
              f"{int(np.isfinite(exp[:, 4:]).sum())} finite values)")
        return
    symbols = [s for s in args.symbols.split(",") if s]
    rep = Collect(symbols, epoch_midnight(args.date))
    for seq, msg in rb.read_records(args.day):
        rep.on_message(seq, msg)
    per = {i + 1: [t for t in rep.ticks if t[0] == i + 1] for i in range(len(symbols))}
    all_ts = [t[1] for t in rep.ticks]
    if not all_ts:
        sys.exit("no ticks for the selected symbols")
    grid = (min(all_ts) // BAR_NS, max(all_ts) // BAR_NS)
    out = np.vstack([bar_rows(inst, per[inst], grid) for inst in sorted(per)])
    np.save(args.expected, out)
    if args.spec:
        with open(args.spec, "w") as f:
            f.write(spec_text(len(symbols)))
    print(f"reference: {len(rep.ticks)} ticks of {len(symbols)} symbols, {out.shape[0]} rows")


if __name__ == "__main__":
    main()
