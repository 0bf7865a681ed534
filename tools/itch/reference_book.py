#!/usr/bin/env python3
"""Reference full-depth order book for a Nasdaq TotalView-ITCH 5.0 day, and its book CSV.

Why: the C++ decoder and book are checked against an independent oracle. This one is written
for clarity, with plain dicts and lists, straight from the book rules below; speed is secondary
(200k messages take a few seconds).

Book rules (the C++ book implements the same list):
- R: locate -> symbol (padding spaces stripped).
- A/F: a new order at the tail of its price level; side 'B' bid, 'S' ask, any other side is
  ignored; an add whose ref is already live is ignored; an add of 0 shares is ignored.
- E, C, X: subtract shares at the order's display price (never C's execution price); at 0 the
  order leaves; more than it has left removes it. Unknown ref: nothing.
- D: remove. Unknown ref: nothing.
- U: the original leaves with all its shares; a new order new_ref with the original's side and
  locate, the new shares and new price joins the tail of its level (even at the same price).
  Unknown original: nothing. new_ref already live: the original is removed, nothing is added.
  New shares 0: the original is removed, nothing is added. The new_ref test comes after the
  original has left, so a U naming its own ref as new_ref re-adds the order at the tail.
- E/C/X/D/U apply to the order's own book (its locate), whatever the message's locate says.
- Every other message leaves the books alone.

CSV: header `seq,timestamp_ns,locate,symbol,bid_px_1,bid_qty_1,...,ask_px_N,ask_qty_N`, then one
row after each A, F, E, C, X, D and U once applied, for the message header's locate when that
symbol is selected (also when nothing changed, e.g. an unknown ref). seq is the record's 1-based
position in the file; prices print with exactly 4 decimals from the Price(4) integer; an absent
level is two empty fields.

LOBSTER (--lobster DIR), one message file and one orderbook file per selected symbol, named
TICKER_YYYY-MM-DD_34200000_57600000_{message,orderbook}_L.csv, without header lines:
- Window: only events with 09:30:00 <= timestamp < 16:00:00 (LOBSTER's default window); the book
  is still built over the whole day, so the first rows show the book carried over from before.
- Time: seconds after midnight with 9 decimals, printed from the integer nanoseconds.
- Types: A/F -> 1; X -> 2; D -> 3; E and C -> 4; P -> 5; Q -> 6; H and h -> 7. U -> two rows with
  the same time: 3 (the original ref, its remaining shares and price) then 1 (the new ref, new
  shares, new price). The book line of the 3-row is the book with the original removed and the new
  order not yet added; the 1-row shows the book after the whole U.
- Rows for E/C/X/D/U belong to the order's own symbol (the book that changed). A message naming
  an unknown ref, an ignored add and a U whose new order is not added write no row for that part.
- Size: the shares the message names, except D and the 3-row of U, which carry the shares the order
  still had. Price: the order's display price, also for C (its execution price moved nothing in
  the book). Direction: the resting order's side, 1 buy, -1 sell.
- Hidden executions (P): type 5, order id 0 (as on the wire), P's shares and price, direction 1
  (the wire always says 'B'; the hidden side is not knowable).
- Crosses (Q): type 6, order id 0, Q's shares and cross price, direction -1.
- Halts: type 7, order id 0, size 0, direction -1; price -1 for H 'H' (halted) and H 'P' (paused),
  0 for H 'Q' (quotation only), 1 for H 'T' (trading); for h (operational halt) -1 for action 'H'
  and 1 for 'T'. The book line repeats the current book, as for P and Q.
- Orderbook line: per level 1..L ask price, ask size, bid price, bid size; empty levels carry ask
  9999999999 / bid -9999999999 and size 0. Prices are the Price(4) integers.

Integrity stats go to stdout at the end: unknown refs, over-executions, duplicate refs, crossed or
locked books after a message (all day and during market hours), wrong lengths, unknown types.

Standard library only. Example:
    reference_book.py day.itch --symbols all --levels 10 --csv book.csv
"""
import argparse
import gzip
import os
import struct
import sys
import time

SPEC_LEN = {b"S": 12, b"R": 39, b"H": 25, b"Y": 20, b"L": 26, b"V": 35, b"W": 12, b"K": 28, b"J": 35,
            b"h": 21, b"A": 36, b"F": 40, b"E": 31, b"C": 36, b"X": 23, b"D": 19, b"U": 35, b"P": 44,
            b"Q": 40, b"B": 19, b"I": 50, b"N": 20, b"O": 48}
BOOK_TYPES = b"AFECXDU"
NS = 1_000_000_000
OPEN_NS, CLOSE_NS = 34_200 * NS, 57_600 * NS
ASK_EMPTY, BID_EMPTY = 9_999_999_999, -9_999_999_999
HALT_PRICE = {b"H": -1, b"P": -1, b"Q": 0, b"T": 1}

u16 = struct.Struct(">H").unpack_from
u32 = struct.Struct(">I").unpack_from
u64 = struct.Struct(">Q").unpack_from


def read_records(path):
    """Yield (seq, message bytes) for every BinaryFILE record; seq is 1-based. Raw or gzip."""
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    f = gzip.open(path, "rb") if gz else open(path, "rb")
    with f:
        seq, pending = 0, b""
        while True:
            chunk = f.read(1 << 22)
            if not chunk:
                break
            data = pending + chunk
            pos = 0
            while pos + 2 <= len(data):
                n = (data[pos] << 8) | data[pos + 1]
                if pos + 2 + n > len(data):
                    break
                seq += 1
                yield seq, data[pos + 2: pos + 2 + n]
                pos += 2 + n
            pending = data[pos:]
        if pending:
            raise ValueError(f"{path}: {len(pending)} trailing bytes after record {seq}")


def price_text(p):
    return f"{p // 10000}.{p % 10000:04d}"


class Book:
    """One symbol's book: per side, price -> {ref: None} in queue order, and price -> total shares."""

    def __init__(self):
        self.queue = ({}, {})  # [0] bids, [1] asks
        self.qty = ({}, {})

    def insert(self, side, price, ref, shares):
        self.queue[side].setdefault(price, {})[ref] = None
        self.qty[side][price] = self.qty[side].get(price, 0) + shares

    def reduce(self, side, price, ref, shares, leaves):
        self.qty[side][price] -= shares
        if leaves:
            del self.queue[side][price][ref]
            if not self.queue[side][price]:
                del self.queue[side][price]
                del self.qty[side][price]

    def best(self, side):
        prices = self.qty[side]
        if not prices:
            return None
        return max(prices) if side == 0 else min(prices)

    def top(self, side, n):
        prices = sorted(self.qty[side], reverse=(side == 0))[:n]
        return [(p, self.qty[side][p]) for p in prices]

    def crossed(self):
        b, a = self.best(0), self.best(1)
        return b is not None and a is not None and b >= a


class Replay:
    def __init__(self, select, levels, csv_out, lobster_dir, date):
        self.select = select  # None = all symbols
        self.levels = levels
        self.csv = csv_out
        self.lobster_dir = lobster_dir
        self.date = date
        self.symbols = {}  # locate -> symbol
        self.books = {}  # locate -> Book
        self.orders = {}  # ref -> [locate, side, price, shares]
        self.lob = {}  # locate -> (message rows, book rows)
        self.market_open = False
        self.stats = dict.fromkeys((
            "messages", "book_messages", "csv_rows", "unknown_ref", "over_execution", "duplicate_add_ref",
            "duplicate_replace_ref", "reused_ref", "zero_share_add", "bad_side", "crossed_or_locked",
            "crossed_or_locked_market_hours", "wrong_length", "unknown_type", "timestamp_backwards",
            "duplicate_match", "broken_unknown_match", "live_orders_end", "max_levels_one_side_end",
            "max_orders_one_level_end"), 0)
        self.seen_refs = set()
        self.seen_matches = set()
        self.last_ts = 0

    def selected(self, locate):
        sym = self.symbols.get(locate)
        return sym is not None and (self.select is None or sym in self.select)

    def book(self, locate):
        if locate not in self.books:
            self.books[locate] = Book()
        return self.books[locate]

    # ------------------------------------------------------------------ book changes
    def add(self, locate, ref, side_byte, shares, price):
        if side_byte not in (b"B", b"S"):
            self.stats["bad_side"] += 1
            return None
        if ref in self.orders:
            self.stats["duplicate_add_ref"] += 1
            return None
        if shares == 0:
            self.stats["zero_share_add"] += 1
            return None
        if ref in self.seen_refs:
            self.stats["reused_ref"] += 1
        self.seen_refs.add(ref)
        side = 0 if side_byte == b"B" else 1
        self.orders[ref] = [locate, side, price, shares]
        self.book(locate).insert(side, price, ref, shares)
        return locate

    def reduce(self, ref, shares):
        """E/C/X. Returns (order's locate, side, display price) before the change, or None."""
        o = self.orders.get(ref)
        if o is None:
            self.stats["unknown_ref"] += 1
            return None
        locate, side, price, left = o
        if shares > left:
            self.stats["over_execution"] += 1
            shares = left
        o[3] = left - shares
        self.book(locate).reduce(side, price, ref, shares, o[3] == 0)
        if o[3] == 0:
            del self.orders[ref]
        return locate, side, price

    def delete(self, ref):
        o = self.orders.pop(ref, None)
        if o is None:
            self.stats["unknown_ref"] += 1
            return None
        locate, side, price, left = o
        self.book(locate).reduce(side, price, ref, left, True)
        return locate, side, price, left

    # ------------------------------------------------------------------ output
    def csv_row(self, seq, ts, locate):
        sym = self.symbols.get(locate, "")
        book = self.books.get(locate) or Book()
        cells = [str(seq), str(ts), str(locate), sym]
        for side in (0, 1):
            top = book.top(side, self.levels)
            for i in range(self.levels):
                if i < len(top):
                    cells += [price_text(top[i][0]), str(top[i][1])]
                else:
                    cells += ["", ""]
        self.csv.write(",".join(cells) + "\n")
        self.stats["csv_rows"] += 1

    def lob_row(self, locate, ts, etype, ref, size, price, direction):
        if self.lobster_dir is None or not (OPEN_NS <= ts < CLOSE_NS) or not self.selected(locate):
            return
        book = self.books.get(locate) or Book()
        asks, bids = book.top(1, self.levels), book.top(0, self.levels)
        line = []
        for i in range(self.levels):
            line += [asks[i][0], asks[i][1]] if i < len(asks) else [ASK_EMPTY, 0]
            line += [bids[i][0], bids[i][1]] if i < len(bids) else [BID_EMPTY, 0]
        msgs, books = self.lob.setdefault(locate, ([], []))
        msgs.append(f"{ts // NS}.{ts % NS:09d},{etype},{ref},{size},{price},{direction}")
        books.append(",".join(map(str, line)))

    def check_crossed(self, locate):
        book = self.books.get(locate)
        if book is not None and book.crossed():
            self.stats["crossed_or_locked"] += 1
            if self.market_open:
                self.stats["crossed_or_locked_market_hours"] += 1

    # ------------------------------------------------------------------ one message
    def on_message(self, seq, msg):
        st = self.stats
        st["messages"] += 1
        t = msg[:1]
        if t not in SPEC_LEN:
            st["unknown_type"] += 1
            return
        if len(msg) != SPEC_LEN[t]:
            st["wrong_length"] += 1
            return
        locate = u16(msg, 1)[0]
        ts = (u16(msg, 5)[0] << 32) | u32(msg, 7)[0]
        if ts < self.last_ts:
            st["timestamp_backwards"] += 1
        self.last_ts = ts
        touched = None  # locate of the book that changed
        if t == b"R":
            self.symbols[locate] = msg[11:19].decode("ascii").rstrip(" ")
        elif t == b"S":
            if msg[11:12] == b"Q":
                self.market_open = True
            elif msg[11:12] == b"M":
                self.market_open = False
        elif t in (b"A", b"F"):
            ref, side, shares, price = u64(msg, 11)[0], msg[19:20], u32(msg, 20)[0], u32(msg, 32)[0]
            touched = self.add(locate, ref, side, shares, price)
            if touched is not None:
                self.lob_row(touched, ts, 1, ref, shares, price, 1 if side == b"B" else -1)
        elif t in (b"E", b"C", b"X"):
            ref, shares = u64(msg, 11)[0], u32(msg, 19)[0]
            if t != b"X":
                self.match(u64(msg, 23)[0])
            r = self.reduce(ref, shares)
            if r is not None:
                touched = r[0]
                self.lob_row(touched, ts, 2 if t == b"X" else 4, ref, shares, r[2], 1 if r[1] == 0 else -1)
        elif t == b"D":
            ref = u64(msg, 11)[0]
            r = self.delete(ref)
            if r is not None:
                touched = r[0]
                self.lob_row(touched, ts, 3, ref, r[3], r[2], 1 if r[1] == 0 else -1)
        elif t == b"U":
            old, new, shares, price = u64(msg, 11)[0], u64(msg, 19)[0], u32(msg, 27)[0], u32(msg, 31)[0]
            r = self.delete(old)
            if r is not None:
                touched, side = r[0], r[1]
                self.lob_row(touched, ts, 3, old, r[3], r[2], 1 if side == 0 else -1)
                if new in self.orders:
                    st["duplicate_replace_ref"] += 1
                elif shares:
                    self.add(touched, new, b"B" if side == 0 else b"S", shares, price)
                    self.lob_row(touched, ts, 1, new, shares, price, 1 if side == 0 else -1)
        elif t == b"P":
            self.match(u64(msg, 36)[0])
            self.lob_row(locate, ts, 5, 0, u32(msg, 20)[0], u32(msg, 32)[0], 1)
        elif t == b"Q":
            self.match(u64(msg, 31)[0])
            self.lob_row(locate, ts, 6, 0, u64(msg, 11)[0], u32(msg, 27)[0], -1)
        elif t == b"H":
            self.lob_row(locate, ts, 7, 0, 0, HALT_PRICE.get(msg[19:20], -1), -1)
        elif t == b"h":
            self.lob_row(locate, ts, 7, 0, 0, -1 if msg[20:21] == b"H" else 1, -1)
        elif t == b"B":
            if u64(msg, 11)[0] not in self.seen_matches:
                st["broken_unknown_match"] += 1
        if t in (b"A", b"F", b"E", b"C", b"X", b"D", b"U"):
            st["book_messages"] += 1
            if touched is not None:
                self.check_crossed(touched)
            if self.csv is not None and self.selected(locate):
                self.csv_row(seq, ts, locate)

    def match(self, number):
        if number in self.seen_matches:
            self.stats["duplicate_match"] += 1
        self.seen_matches.add(number)

    def finish(self):
        self.stats["live_orders_end"] = len(self.orders)
        sides = [(len(b.qty[s]), max(map(len, b.queue[s].values()), default=0))
                 for b in self.books.values() for s in (0, 1)]
        self.stats["max_levels_one_side_end"] = max((n for n, _ in sides), default=0)
        self.stats["max_orders_one_level_end"] = max((n for _, n in sides), default=0)
        if self.lobster_dir is None:
            return []
        os.makedirs(self.lobster_dir, exist_ok=True)
        written = []
        for locate, (msgs, books) in sorted(self.lob.items()):
            stem = f"{self.symbols[locate]}_{self.date}_{OPEN_NS // 10**6}_{CLOSE_NS // 10**6}"
            for kind, rows in (("message", msgs), ("orderbook", books)):
                path = os.path.join(self.lobster_dir, f"{stem}_{kind}_{self.levels}.csv")
                with open(path, "w") as f:
                    f.write("".join(r + "\n" for r in rows))
                written.append((path, len(rows)))
        return written


def header(levels):
    cols = ["seq", "timestamp_ns", "locate", "symbol"]
    for side in ("bid", "ask"):
        for i in range(1, levels + 1):
            cols += [f"{side}_px_{i}", f"{side}_qty_{i}"]
    return ",".join(cols) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("day", help="ITCH 5.0 BinaryFILE, raw or .gz")
    ap.add_argument("--symbols", default="all", help="comma-separated symbols, or 'all' (default)")
    ap.add_argument("--levels", type=int, default=10, help="levels per side in the CSV and LOBSTER files")
    ap.add_argument("--csv", help="book CSV to write")
    ap.add_argument("--lobster", metavar="DIR", help="also write LOBSTER message/orderbook files here")
    ap.add_argument("--date", default="2019-12-30", help="session date for LOBSTER file names")
    a = ap.parse_args(argv)
    select = None if a.symbols == "all" else {s.strip().upper() for s in a.symbols.split(",") if s.strip()}
    t0 = time.perf_counter()
    out = open(a.csv, "w", newline="") if a.csv else None
    if out:
        out.write(header(a.levels))
    rp = Replay(select, a.levels, out, a.lobster, a.date)
    for seq, msg in read_records(a.day):
        rp.on_message(seq, msg)
    written = rp.finish()
    if out:
        out.close()
    for path, rows in written:
        print(f"{rows:>10} rows  {path}")
    print(f"{a.day}: {time.perf_counter() - t0:.1f} s")
    for k, v in rp.stats.items():
        print(f"{k:32s} {v}")
    bad = sum(rp.stats[k] for k in ("unknown_ref", "over_execution", "duplicate_add_ref", "duplicate_replace_ref",
                                    "crossed_or_locked_market_hours", "wrong_length", "unknown_type"))
    print("CLEAN" if bad == 0 else "NOT CLEAN")
    return 0


if __name__ == "__main__":
    sys.exit(main())
