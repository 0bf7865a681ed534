"""tickinfer.ItchReader / read_itch / iter_itch / itch_features / itch_to_parquet on a synthetic
ITCH 5.0 day (tools/itch/make_itch_day.py), against references that share no code with
tickinfer: the depth and bbo tables against tools/itch/reference_book.py's top-N CSV (a
plain-Python book written from the spec), the trades and orders against a small decoder written
here from the spec's field offsets. The book features are checked against their numpy/pandas
reference by tests/book_features_reference_test.sh; here, that the Python call gives what
`tickinfer features --symbols` writes.
"""
import csv
import struct
import subprocess
import sys

import numpy as np
import pytest

import tickinfer
from conftest import ROOT

ITCH_TOOLS = ROOT / "tools" / "itch"
SYMBOLS = ["ADBE", "EVTA", "UHV"]
LEVELS = 5


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    d = tmp_path_factory.mktemp("itch")
    path = d / "day.itch"
    subprocess.run([sys.executable, str(ITCH_TOOLS / "make_itch_day.py"), "--out", str(path), "--messages", "60000",
                    "--symbols", "30", "--seed", "13"], check=True, stdout=subprocess.DEVNULL)
    return path


@pytest.fixture(scope="module")
def reference_csv(day):
    out = day.parent / "ref.csv"
    subprocess.run([sys.executable, str(ITCH_TOOLS / "reference_book.py"), str(day), "--symbols", ",".join(SYMBOLS),
                    "--levels", str(LEVELS), "--csv", str(out)], check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return list(csv.DictReader(f))


def test_depth_and_bbo_match_the_reference_book(day, reference_csv):
    t = tickinfer.read_itch(str(day), symbols=SYMBOLS, levels=LEVELS)
    depth, names = t["depth"], t["symbols"]
    assert len(depth["seq"]) == len(reference_csv) > 1000
    for i, row in enumerate(reference_csv):
        assert depth["seq"][i] == int(row["seq"])
        assert depth["timestamp_ns"][i] == int(row["timestamp_ns"])
        assert names[int(depth["locate"][i])] == row["symbol"]
        for side in ("bid", "ask"):
            for k in range(LEVELS):
                px, qty = row[f"{side}_px_{k + 1}"], row[f"{side}_qty_{k + 1}"]
                got_px, got_qty = depth[f"{side}_price"][i, k], depth[f"{side}_size"][i, k]
                if px == "":
                    assert np.isnan(got_px) and got_qty == 0
                else:
                    assert f"{got_px:.4f}" == px and got_qty == int(qty), (i, side, k)
    # bbo: the reference rows whose level 1 (either side) differs from that symbol's previous row.
    last, want = {}, []
    for row in reference_csv:
        top = tuple(row[c] for c in ("bid_px_1", "bid_qty_1", "ask_px_1", "ask_qty_1"))
        if last.get(row["symbol"]) != top:
            want.append(int(row["seq"]))
        last[row["symbol"]] = top
    assert t["bbo"]["seq"].tolist() == want
    assert t["stats"]["unknown_ref"] == 0 and t["stats"]["error"] == ""


def spec_decode(day, symbols):
    """Trades and order messages of the symbols, decoded here from the spec's offsets."""
    data = open(day, "rb").read()
    be = {2: ">H", 4: ">I", 8: ">Q"}

    def u(m, offset, size):
        return struct.unpack_from(be[size], m, offset)[0]
    pos, seq = 0, 0
    names, orders, trades, rows = {}, {}, [], []  # orders: ref -> [side, price, shares left]
    while pos < len(data):
        n = u(data, pos, 2)
        m = data[pos + 2:pos + 2 + n]
        pos, seq = pos + 2 + n, seq + 1
        t, loc = m[:1], u(m, 1, 2)
        if t == b"R":
            names[loc] = m[11:19].decode().strip()
        if names.get(loc) not in symbols:
            continue
        if t in (b"A", b"F"):
            ref, side, shares, price = u(m, 11, 8), 1 if m[19:20] == b"B" else -1, u(m, 20, 4), u(m, 32, 4)
            orders[ref] = [side, price, shares]
            rows.append((seq, t, ref, side, shares, price))
        elif t in (b"E", b"C", b"X"):
            ref, shares = u(m, 11, 8), u(m, 19, 4)
            side, price, left = orders[ref]
            if t == b"E":
                trades.append((seq, price, shares, -side))
            elif t == b"C":
                trades.append((seq, u(m, 32, 4), shares, -side))
            rows.append((seq, t, ref, side, shares, price))
            orders[ref][2] -= shares
            if orders[ref][2] <= 0:
                del orders[ref]
        elif t == b"D":
            ref = u(m, 11, 8)
            side, price, left = orders.pop(ref)
            rows.append((seq, t, ref, side, left, price))
        elif t == b"U":
            ref, new, shares, price = u(m, 11, 8), u(m, 19, 8), u(m, 27, 4), u(m, 31, 4)
            side = orders.pop(ref)[0]
            orders[new] = [side, price, shares]
            rows.append((seq, t, ref, side, shares, price))
        elif t == b"P":
            trades.append((seq, u(m, 32, 4), u(m, 20, 4), 0))
        elif t == b"Q" and u(m, 11, 8) > 0:
            trades.append((seq, u(m, 27, 4), u(m, 11, 8), 0))
    return trades, rows


def test_trades_and_orders_match_a_decoder_written_from_the_spec(day):
    t = tickinfer.read_itch(str(day), symbols=SYMBOLS, tables=("trades", "orders"))
    trades, orders = spec_decode(day, SYMBOLS)
    got = t["trades"]
    assert len(got["seq"]) == len(trades) > 50
    assert got["seq"].tolist() == [x[0] for x in trades]
    assert np.array_equal(got["price"], np.array([x[1] for x in trades]) / 1e4)
    assert got["shares"].tolist() == [x[2] for x in trades]
    assert got["aggressor"].tolist() == [x[3] for x in trades]
    o = t["orders"]
    assert o["seq"].tolist() == [x[0] for x in orders]
    assert bytes(o["type"].tolist()) == b"".join(x[1] for x in orders)
    assert o["ref"].tolist() == [x[2] for x in orders]
    assert o["side"].tolist() == [x[3] for x in orders]
    assert o["shares"].tolist() == [x[4] for x in orders]
    assert np.array_equal(o["price"], np.array([x[5] for x in orders]) / 1e4)


def test_batches_join_to_the_whole(day):
    whole = tickinfer.read_itch(str(day), symbols=SYMBOLS, levels=3)
    batches = list(tickinfer.iter_itch(str(day), symbols=SYMBOLS, levels=3, batch_messages=7000))
    assert len(batches) >= 8
    for table in ("depth", "bbo", "trades", "orders"):
        for col, v in whole[table].items():
            joined = np.concatenate([b[table][col] for b in batches])
            assert np.array_equal(joined, v, equal_nan=True), (table, col)
    # The columns are the C++ buffers handed over, not copies: numpy owns nothing of its own.
    assert not whole["depth"]["bid_price"].flags.owndata


def test_itch_features_equal_the_command(day, tmp_path):
    spec = tmp_path / "spec.toml"
    subprocess.run([sys.executable, str(ITCH_TOOLS / "book_feature_reference.py"), str(day), "--symbols",
                    ",".join(SYMBOLS), "--date", "2019-12-30", "--spec", str(spec), "--expected",
                    str(tmp_path / "expected.npy")], check=True, stdout=subprocess.DEVNULL)
    names, x = tickinfer.itch_features(str(spec), str(day), SYMBOLS, date="2019-12-30")
    assert names[:4] == ["instrument", "bar", "state", "warm"] and len(names) == x.shape[1] == 58
    expected = np.load(tmp_path / "expected.npy")
    assert np.allclose(x, expected, rtol=1e-9, atol=1e-9, equal_nan=True)


def test_parquet(day, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    rows = tickinfer.itch_to_parquet(str(day), str(tmp_path / "pq"), symbols=SYMBOLS, levels=2, batch_messages=20000)
    whole = tickinfer.read_itch(str(day), symbols=SYMBOLS, levels=2)
    depth = pq.read_table(tmp_path / "pq" / "depth.parquet").to_pandas()
    assert rows["depth"] == len(depth) == len(whole["depth"]["seq"])
    assert np.array_equal(depth["bid_price_2"].to_numpy(), whole["depth"]["bid_price"][:, 1], equal_nan=True)
    assert set(depth["symbol"]) == set(SYMBOLS)


def test_bad_sources_and_arguments_are_refused(tmp_path):
    text = tmp_path / "not_itch.bin"
    text.write_text("seq,timestamp\n1,2\n")
    with pytest.raises(tickinfer.Error, match="not an ITCH 5.0 day file"):
        tickinfer.ItchReader(str(text))
    with pytest.raises(tickinfer.Error, match="unknown table 'quotes'"):
        tickinfer.ItchReader(str(text), tables=["quotes"])
    with pytest.raises(tickinfer.Error, match="levels must be 1..1000"):
        tickinfer.ItchReader(str(text), levels=0)
    with pytest.raises(tickinfer.Error, match="cannot open|No such file"):
        tickinfer.ItchReader(str(tmp_path / "missing.itch"))
