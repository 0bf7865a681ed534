#!/usr/bin/env python3
"""Synthetic Nasdaq TotalView-ITCH 5.0 trading day, written as a BinaryFILE.

Why: the project's ITCH decoder and full-depth order book need a day file that exercises every
message type and a realistic full-depth order flow, that can be regenerated bit for bit from a
seed, and that can be made as large as a benchmark needs. Real day files are 8-13 GB and cannot
be committed; this script writes a day of any size in their exact format.

Format (BinaryFILE): one record after another, each a u16 big-endian length followed by one ITCH
5.0 message of exactly the spec's length, all integers big-endian, alpha fields space padded. No
file header. The seq of a record is its 1-based position in the file.

Day shape: S 'O'; the R directory (locate 1..K); H 'T' spin, Y spin, L for a few symbols, V;
K; S 'S'; pre-market flow; NOII (I) before the open; S 'Q'; opening cross (C non-printable against
the best orders, one Q per symbol); continuous trading with a LULD pause (H 'P', J, Q 'H',
H 'T'), a regulatory halt, an operational halt (h), W, N, O, B and hidden executions (P);
closing NOII; closing cross; S 'M'; extended-close NOII (cross type 'A'); post-market flow;
S 'E'; late D and B; S 'C'. Every one of the 23 message types appears at least once.

Order flow per symbol: a random-walk mid price, adds at exponentially distributed distances from
it (tens to hundreds of levels, several orders per level), deletes, partial cancels, replaces
(same price, moved, chained), executions always against the first order of the best level, never
more than it has left. A marketable incoming order is written as executions of resting orders
(a sweep), and any remainder rests at its limit, so the book is never crossed or locked after any
message. Orders end by E/C/X reaching zero (no D follows) or by D; order references and match
numbers are unique and increasing; timestamps never decrease.

Standard library only. Example:
    make_itch_day.py --out day.itch --messages 200000 --symbols 120 --seed 1
"""
import argparse
import bisect
import gzip
import random
import struct
import sys
import time

NS = 1_000_000_000
TICK = 100  # Price(4) units of one cent

HDR = ">HcHQ"  # record length, type, locate, tracking number (2 bytes) + timestamp (6 bytes) as one u64
FORMATS = {  # body after the 11-byte prefix; lengths are checked against SPEC_LEN at import
    b"S": "c", b"R": "8sccIcc2scccccIc", b"H": "8scc4s", b"Y": "8sc", b"L": "4s8sccc",
    b"V": "QQQ", b"W": "c", b"K": "8sIcI", b"J": "8sIIII", b"h": "8scc",
    b"A": "QcI8sI", b"F": "QcI8sI4s", b"E": "QIQ", b"C": "QIQcI", b"X": "QI", b"D": "Q",
    b"U": "QQII", b"P": "QcI8sIQ", b"Q": "Q8sIQc", b"B": "Q", b"I": "QQc8sIIIcc", b"N": "8sc",
    b"O": "8scIIIQII",
}
SPEC_LEN = {b"S": 12, b"R": 39, b"H": 25, b"Y": 20, b"L": 26, b"V": 35, b"W": 12, b"K": 28, b"J": 35,
            b"h": 21, b"A": 36, b"F": 40, b"E": 31, b"C": 36, b"X": 23, b"D": 19, b"U": 35, b"P": 44,
            b"Q": 40, b"B": 19, b"I": 50, b"N": 20, b"O": 48}
PACK = {t: struct.Struct(HDR + f).pack for t, f in FORMATS.items()}
for _t, _f in FORMATS.items():
    assert struct.calcsize(HDR + _f) - 2 == SPEC_LEN[_t], _t

FAMOUS = ["AAPL", "MSFT", "AMZN", "GOOGL", "TSLA", "NVDA", "META", "QQQ", "INTC", "CSCO", "AMD", "NFLX",
          "ADBE", "PEP", "COST", "SBUX", "ZVZZT"]
LONG_SYMBOL = "ABCDWXYZ"  # eight letters: no padding in the Stock field
MPIDS = [b"GSCO", b"MSCO", b"JPMS", b"UBSS", b"CDEL", b"VIRT", b"NITE", b"SUSQ"]
LOTS = (100, 100, 100, 100, 200, 200, 300, 500, 1000, 50, 10, 400, 2500)


def hms(h, m, s=0.0):
    return int((h * 3600 + m * 60 + s) * NS)


class Sym:
    """One symbol's generator state: the mid, its book (price in ticks -> queue of refs), live refs."""
    __slots__ = ("loc", "name", "stock", "m", "scale", "target", "bids", "asks", "bpx", "apx", "live", "trk")

    def __init__(self, loc, name, m, scale, target):
        self.loc, self.name, self.m, self.scale, self.target = loc, name, m, scale, target
        self.stock = name.encode().ljust(8)
        self.bids, self.asks, self.bpx, self.apx, self.live = {}, {}, [], [], []
        self.trk = (loc % 5) << 48  # tracking number shares the u64 with the 48-bit timestamp


class Day:
    def __init__(self, out, n_messages, n_symbols, seed):
        self.rng = random.Random(seed)
        self.out = out
        self.n_target = n_messages
        self.parts = []
        self.written = 0
        self.nbytes = 0
        self.counts = dict.fromkeys(FORMATS, 0)
        self.ts = 0
        self.next_ref = 1000
        self.next_match = 1
        self.orders = {}  # ref -> [sym, side 0 bid/1 ask, price ticks, shares, position in sym.live]
        self.matches = []
        self.schedule = []
        self.syms = self._symbols(n_symbols)

    # ---------------------------------------------------------------- output
    def emit(self, t, *fields):
        self.parts.append(PACK[t](SPEC_LEN[t], t, *fields))
        self.counts[t] += 1
        if len(self.parts) >= 1 << 20:
            self.flush()

    def flush(self):
        blob = b"".join(self.parts)
        self.out.write(blob)
        self.nbytes += len(blob)
        self.written += len(self.parts)
        self.parts = []

    @property
    def count(self):
        return self.written + len(self.parts)

    # ---------------------------------------------------------------- set-up
    def _symbols(self, k):
        rng = self.rng
        names = list(FAMOUS[: max(0, k - 1)])
        seen = set(names) | {LONG_SYMBOL}
        while len(names) < k - 1:
            n = rng.choice((1, 2, 3, 3, 4, 4, 4, 4, 5))
            s = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(n))
            if s not in seen:
                seen.add(s)
                names.append(s)
        names.insert(min(len(names), 5), LONG_SYMBOL)
        syms = []
        for i, name in enumerate(names[:k]):
            dollars = 10 ** rng.uniform(0.7, 2.7)  # ~$5 .. ~$500
            if i == 6 % k:
                dollars = rng.uniform(12000, 15000)  # one very high priced symbol
            m = int(dollars * 100)
            busy = rng.random() < 0.05
            scale = rng.uniform(20, 120) if busy else rng.uniform(2, 30)
            target = rng.randint(800, 2500) if busy else rng.randint(20, 300)
            syms.append(Sym(i + 1, name, m, scale, target))
        # activity: Zipf-like weights, so a few symbols carry most of the flow
        w = [1.0 / (r + 3) ** 0.9 for r in range(k)]
        rng.shuffle(w)
        acc, self.cum = 0.0, []
        for x in w:
            acc += x
            self.cum.append(acc)
        return syms

    def opening_spins(self):
        self.ts = hms(3, 5) + self.rng.randrange(NS)
        self.emit(b"S", 0, self.ts, b"O")
        for s in self.syms:
            self.ts += self.rng.randrange(20_000, 200_000)
            test = s.name == "ZVZZT"
            self.emit(b"R", s.loc, s.trk | self.ts, s.stock, b"Q", b"N", 100, b"N", b"C", b"Z ",
                      b"T" if test else b"P", b"N", b"N", b"1" if s.m > 300 else b"2", b"N", 0, b"N")
        for s in self.syms:
            self.ts += self.rng.randrange(5_000, 50_000)
            self.emit(b"H", s.loc, s.trk | self.ts, s.stock, b"T", b" ", b"    ")
        for s in self.syms:
            self.ts += self.rng.randrange(5_000, 50_000)
            self.emit(b"Y", s.loc, s.trk | self.ts, s.stock, b"1" if s.loc % 97 == 3 else b"0")
        for s in self.syms[:20]:
            for mpid in MPIDS[: 2 + s.loc % 3]:
                self.ts += self.rng.randrange(5_000, 50_000)
                self.emit(b"L", s.loc, s.trk | self.ts, mpid, s.stock, b"Y" if mpid == b"GSCO" else b"N",
                          b"N", b"A")
        self.ts += 1_000_000
        self.emit(b"V", 0, self.ts, 2_774_880_000_000, 2_577_280_000_000, 2_313_360_000_000)
        s = self.syms[-1]
        self.ts += 1_000_000
        self.emit(b"K", 0, self.ts, s.stock, 9 * 3600 + 45 * 60, b"A", 2_000_000)

    def plan_events(self):
        """Single-message events at fixed times, emitted between flow messages as time passes."""
        rng, syms, ev = self.rng, self.syms, []
        n_noii = max(1, min(len(syms), (self.n_target // 300) // 528))
        noii = syms[:n_noii]
        times = [(hms(9, 25) + i * 10 * NS, b"O") for i in range(18)]
        times += [(hms(9, 28) + i * NS, b"O") for i in range(120)]
        times += [(hms(15, 50) + i * 10 * NS, b"C") for i in range(30)]
        times += [(hms(15, 55) + i * NS, b"C") for i in range(300)]
        times += [(hms(16, 0, 5) + i * 5 * NS, b"A") for i in range(60)]
        for t, ct in times:
            for j, s in enumerate(noii):
                ev.append((t + j * 1000, "noii", s, ct))
        a, b, c, d = syms[1 % len(syms)], syms[2 % len(syms)], syms[3 % len(syms)], syms[-1]
        ev += [(hms(11, 0), "H", a, b"P", b"LUDP"), (hms(11, 0, 0.5), "J", a),
               (hms(11, 5), "Qx", a, b"H"), (hms(11, 5, 0.001), "H", a, b"T", b"LUDP"),
               (hms(13, 0), "H", b, b"H", b"T1  "), (hms(13, 30), "Qx", b, b"H"),
               (hms(13, 30, 0.001), "H", b, b"T", b"T3  "),
               (hms(12, 0), "h", c, b"H"), (hms(12, 10), "h", c, b"T"),
               (hms(14, 0), "W", None), (hms(9, 29), "O", d)]
        for i in range(max(3, self.n_target // 100_000)):
            ev.append((rng.randrange(hms(4, 0), hms(19, 59)), "N", rng.choice(syms)))
        for i in range(max(2, self.n_target // 200_000)):
            ev.append((rng.randrange(hms(9, 31), hms(19, 0)), "B", None))
        ev.sort(key=lambda e: e[0])
        self.schedule = ev
        self.next_event = 0

    def run_event(self, e):
        t, kind, s = e[0], e[1], e[2]
        self.ts = ts = max(self.ts, t)
        if kind == "noii":
            far = s.m * TICK
            self.emit(b"I", s.loc, s.trk | ts, self.rng.randrange(1, 50) * 100, self.rng.randrange(0, 30) * 100,
                      self.rng.choice((b"B", b"S", b"N", b"O")), s.stock, far, far + TICK, far, e[3], b"L")
        elif kind == "H":
            self.emit(b"H", s.loc, s.trk | ts, s.stock, e[3], b" ", e[4])
        elif kind == "J":
            ref = s.m * TICK
            self.emit(b"J", s.loc, s.trk | ts, s.stock, ref, ref + ref // 20, ref - ref // 20, 1)
        elif kind == "Qx":
            self.emit(b"Q", s.loc, s.trk | ts, 0, s.stock, s.m * TICK, self.new_match(), e[3])
        elif kind == "h":
            self.emit(b"h", s.loc, s.trk | ts, s.stock, b"B", e[3])
        elif kind == "W":
            self.emit(b"W", 0, ts, b"1")
        elif kind == "O":
            p = s.m * TICK
            self.emit(b"O", s.loc, s.trk | ts, s.stock, b"Y", p // 2, p * 2, p, hms(9, 30), p - p // 10, p + p // 10)
        elif kind == "N":
            self.emit(b"N", s.loc, s.trk | ts, s.stock, self.rng.choice((b"B", b"S", b"A", b"N")))
        elif kind == "B":
            if self.matches:
                self.emit(b"B", 0, ts, self.rng.choice(self.matches))
            else:
                s = self.syms[0]
                self.emit(b"N", s.loc, s.trk | ts, s.stock, b"N")

    def events_until(self, t):
        sch, i = self.schedule, self.next_event
        while i < len(sch) and sch[i][0] <= t:
            self.run_event(sch[i])
            i += 1
        self.next_event = i
        return sch[i][0] if i < len(sch) else 1 << 62

    def new_match(self):
        m = self.next_match
        self.next_match += 1 + (m & 1)
        if len(self.matches) < 64:
            self.matches.append(m)
        elif self.rng.random() < 0.01:
            self.matches[self.rng.randrange(64)] = m
        return m

    # ---------------------------------------------------------------- book helpers
    def add(self, s, side, px, shares, ts):
        ref = self.next_ref
        self.next_ref = ref + 1 + (ref & 3 == 0)
        levels, prices = (s.bids, s.bpx) if side == 0 else (s.asks, s.apx)
        q = levels.get(px)
        if q is None:
            levels[px] = [ref]
            bisect.insort(prices, px)
        else:
            q.append(ref)
        self.orders[ref] = [s, side, px, shares, len(s.live)]
        s.live.append(ref)
        if self.rng.random() < 0.1:
            self.emit(b"F", s.loc, s.trk | ts, ref, b"S" if side else b"B", shares, s.stock, px * TICK,
                      MPIDS[ref % len(MPIDS)])
        else:
            self.emit(b"A", s.loc, s.trk | ts, ref, b"S" if side else b"B", shares, s.stock, px * TICK)
        return ref

    def unlink(self, ref, o):
        s, side, px = o[0], o[1], o[2]
        levels, prices = (s.bids, s.bpx) if side == 0 else (s.asks, s.apx)
        q = levels[px]
        if q[0] == ref:
            del q[0]
        else:
            q.remove(ref)
        if not q:
            del levels[px]
            del prices[bisect.bisect_left(prices, px)]
        live, pos = s.live, o[4]
        last = live.pop()
        if last != ref:
            live[pos] = last
            self.orders[last][4] = pos
        del self.orders[ref]

    def execute_best(self, s, side, shares, ts, printable=b"Y", cross_px=None):
        """Execute up to `shares` against the first order of the best level of `side`. Returns shares done."""
        prices = s.bpx if side == 0 else s.apx
        if not prices:
            return 0
        px = prices[-1] if side == 0 else prices[0]
        ref = (s.bids if side == 0 else s.asks)[px][0]
        o = self.orders[ref]
        n = min(shares, o[3])
        if cross_px is not None or self.rng.random() < 0.08:
            xp = cross_px if cross_px is not None else px + self.rng.choice((-1, 1))
            pr = printable if cross_px is not None else (b"N" if self.rng.random() < 0.3 else b"Y")
            self.emit(b"C", s.loc, s.trk | ts, ref, n, self.new_match(), pr, max(1, xp) * TICK)
        else:
            self.emit(b"E", s.loc, s.trk | ts, ref, n, self.new_match())
        o[3] -= n
        if o[3] == 0:
            self.unlink(ref, o)
        return n

    def incoming(self, s, side, px, shares, ts, budget):
        """A new order on `side` at `px`: sweeps the other side while marketable, rests the rest."""
        other = 1 - side
        oprices = s.apx if side == 0 else s.bpx
        used = 0
        while shares > 0 and oprices and used < budget - 1 and used < 6:
            best = oprices[0] if side == 0 else oprices[-1]
            if (side == 0 and px < best) or (side == 1 and px > best):
                break
            shares -= self.execute_best(s, other, shares, ts)
            used += 1
        if shares > 0 and used < budget:
            if oprices:
                best = oprices[0] if side == 0 else oprices[-1]
                if (side == 0 and px >= best) or (side == 1 and px <= best):
                    return used  # still marketable after the sweep limit: the rest is cancelled (IOC)
            self.add(s, side, px, shares, ts)
            used += 1
        return used

    # ---------------------------------------------------------------- flow
    def flow(self, n, t0, t1):
        """Emit exactly n order-flow messages with timestamps spread over [t0, t1)."""
        rng = self.rng
        rnd, expo = rng.random, rng.expovariate
        syms, orders = self.syms, self.orders
        gap2 = max(2, 2 * (t1 - t0) // max(1, n))
        self.ts = max(self.ts, t0)
        next_ev = self.events_until(self.ts)
        done = 0
        while done < n:
            picks = rng.choices(syms, cum_weights=self.cum, k=min(1 << 16, n - done))
            for s in picks:
                if done >= n:
                    break
                ts = self.ts + int(rnd() * gap2)
                if ts >= t1:
                    ts = t1 - 1 if t1 - 1 > self.ts else self.ts
                if ts >= next_ev:
                    next_ev = self.events_until(ts)
                self.ts = ts
                left = n - done
                live = s.live
                r = rnd()
                if r < 0.45 or len(live) < 2 or (r < 0.86 and len(live) < s.target // 2):
                    if r < 0.45 and len(live) > s.target * 1.5:
                        r = 0.5  # book is full: delete instead
                    else:
                        if rnd() < 0.12:
                            s.m += 1 if rnd() < 0.5 else -1
                            if s.m < 300:
                                s.m = 300
                        side = 0 if rnd() < 0.5 else 1
                        off = int(expo(1.0) * s.scale) - (1 if rnd() < 0.02 else 0)
                        px = s.m - off if side == 0 else s.m + 1 + off
                        if px < 1:
                            px = 1
                        done += self.incoming(s, side, px, LOTS[int(rnd() * 13)], ts, left)
                        continue
                if r < 0.86 or r >= 0.965:
                    ref = live[int(rnd() * len(live))]
                    self.unlink(ref, orders[ref])
                    self.emit(b"D", s.loc, s.trk | ts, ref)
                elif r < 0.91:
                    ref = live[int(rnd() * len(live))]
                    o = orders[ref]
                    k = o[3] if o[3] < 100 or rnd() < 0.25 else max(1, int(o[3] * rnd()))
                    self.emit(b"X", s.loc, s.trk | ts, ref, k)
                    o[3] -= k
                    if o[3] == 0:
                        self.unlink(ref, o)
                elif r < 0.94:
                    self.replace(s, ts)
                elif r < 0.955:
                    side = 0 if rnd() < 0.5 else 1
                    o_side = s.bpx if side == 0 else s.apx
                    if not o_side:
                        side, o_side = 1 - side, (s.apx if side == 0 else s.bpx)
                    k = 1 << 30 if rnd() < 0.5 else LOTS[int(rnd() * 13)]
                    self.execute_best(s, side, k, ts)
                else:
                    bb = s.bpx[-1] if s.bpx else s.m
                    ba = s.apx[0] if s.apx else s.m + 1
                    self.emit(b"P", s.loc, s.trk | ts, 0, b"B", LOTS[int(rnd() * 13)], s.stock,
                              ((bb + ba) // 2) * TICK, self.new_match())
                done += 1

    def replace(self, s, ts):
        rnd, orders = self.rng.random, self.orders
        live = s.live
        ref = live[-1] if rnd() < 0.3 else live[int(rnd() * len(live))]  # the newest is often a replace: chains
        o = orders[ref]
        side, px = o[1], o[2]
        if rnd() >= 0.35:
            step = 1 + int(self.rng.expovariate(1.0) * s.scale / 3)
            npx = px + (step if rnd() < 0.5 else -step)
            if npx < 1:
                npx = px
            if side == 0 and s.apx and npx >= s.apx[0]:
                npx = px
            if side == 1 and s.bpx and npx <= s.bpx[-1]:
                npx = px
            px = npx
        shares = LOTS[int(rnd() * 13)]
        self.unlink(ref, o)
        new = self.next_ref
        self.next_ref += 1
        levels, prices = (s.bids, s.bpx) if side == 0 else (s.asks, s.apx)
        q = levels.get(px)
        if q is None:
            levels[px] = [new]
            bisect.insort(prices, px)
        else:
            q.append(new)
        orders[new] = [s, side, px, shares, len(live)]
        live.append(new)
        self.emit(b"U", s.loc, s.trk | ts, ref, new, shares, px * TICK)

    def cross(self, t, cross_type):
        """Opening/closing cross: non-printable C against the best orders of both sides, one Q each."""
        for s in self.syms:
            self.ts = max(self.ts, t) + 100
            paired = 0
            if s.bpx and s.apx:
                cpx = s.bpx[-1]
                for _ in range(self.rng.randint(1, 3)):
                    if not (s.bpx and s.apx):
                        break
                    n = self.execute_best(s, 1, LOTS[self.rng.randrange(13)], self.ts, b"N", cpx)
                    self.execute_best(s, 0, n, self.ts, b"N", cpx)
                    paired += n
            self.emit(b"Q", s.loc, s.trk | self.ts, paired, s.stock, (s.bpx[-1] if s.bpx else s.m) * TICK,
                      self.new_match(), cross_type)

    # ---------------------------------------------------------------- the day
    def run(self):
        tail = 7  # S 'E', three late D, two late B, S 'C'
        self.opening_spins()
        self.plan_events()
        fixed = self.count + len(self.schedule) + 4 + tail  # + S 'S', S 'Q', S 'M' and one spare
        budget = self.n_target - fixed - 2 * len(self.syms) * 7
        if budget < 1000:
            raise SystemExit(f"--messages {self.n_target} is too small for {len(self.syms)} symbols")
        self.ts = max(self.ts, hms(4, 0))
        self.emit(b"S", 0, self.ts, b"S")
        self.flow(budget * 5 // 100, hms(4, 0, 1), hms(9, 30))
        self.events_until(hms(9, 30) - 1)
        self.ts = max(self.ts, hms(9, 30))
        self.emit(b"S", 0, self.ts, b"Q")
        self.cross(hms(9, 30), b"O")
        self.flow(budget * 92 // 100, hms(9, 30, 0.01), hms(16, 0))
        self.events_until(hms(16, 0) - 1)
        self.cross(hms(16, 0), b"C")
        self.ts += 1000
        self.emit(b"S", 0, self.ts, b"M")
        rest = self.n_target - self.count - (len(self.schedule) - self.next_event) - tail
        self.flow(rest, hms(16, 0, 1), hms(19, 59, 50))
        self.events_until(1 << 62)
        self.ts = max(self.ts, hms(20, 0))
        self.emit(b"S", 0, self.ts, b"E")
        for _ in range(3):
            self.ts += self.rng.randrange(1000, 10 ** 6)
            s = max(self.syms, key=lambda x: len(x.live))
            ref = s.live[-1]
            self.unlink(ref, self.orders[ref])
            self.emit(b"D", s.loc, s.trk | self.ts, ref)
        for _ in range(2):
            self.ts += self.rng.randrange(1000, 10 ** 6)
            self.emit(b"B", 0, self.ts, self.rng.choice(self.matches))
        self.ts = max(self.ts, hms(20, 5))
        self.emit(b"S", 0, self.ts, b"C")
        self.flush()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="day file to write (BinaryFILE)")
    ap.add_argument("--gzip", action="store_true", help="gzip the output (level 1, no name, mtime 0)")
    ap.add_argument("--messages", type=int, default=200_000, help="exact number of records")
    ap.add_argument("--symbols", type=int, default=120, help="number of symbols (locates 1..K)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--date", default="2019-12-30", help="session date (only reported: ITCH carries no date)")
    a = ap.parse_args(argv)
    if a.symbols < 8:
        ap.error("--symbols must be at least 8")
    t0 = time.perf_counter()
    raw = open(a.out, "wb")
    out = gzip.GzipFile(filename="", mode="wb", compresslevel=1, fileobj=raw, mtime=0) if a.gzip else raw
    day = Day(out, a.messages, a.symbols, a.seed)
    day.run()
    out.close()
    if out is not raw:
        raw.close()
    assert day.count == a.messages, (day.count, a.messages)
    mix = " ".join(f"{t.decode()}={n}" for t, n in sorted(day.counts.items(), key=lambda kv: -kv[1]))
    print(f"{a.out}: date {a.date}, {day.count} messages, {a.symbols} symbols, {day.nbytes} bytes "
          f"(uncompressed), {time.perf_counter() - t0:.1f} s; {mix}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
