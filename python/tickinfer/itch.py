"""NASDAQ TotalView-ITCH 5.0 from Python: a day file (raw or gzip) or a pcap/pcapng capture of
MoldUDP64 into columnar numpy tables, through tickinfer's own decoder and full-depth books, and
tickinfer's book features on top. docs/python.md, "ITCH 5.0".

    for batch in tickinfer.iter_itch("12302019.NASDAQ_ITCH50.gz", symbols=["AAPL"], levels=10):
        depth = batch["depth"]        # seq, timestamp_ns, locate, bid_price [n, 10], bid_size, ...
    tables = tickinfer.read_itch(path, symbols=["AAPL", "MSFT"], tables=("bbo", "trades"))
    names, x = tickinfer.itch_features("features.toml", path, symbols=["AAPL", "MSFT"])
    tickinfer.itch_to_parquet(path, "out/", symbols=["AAPL"])   # needs pyarrow

Tables (one row per event of a selected symbol; prices in dollars, sizes in shares):
  depth   after every A F E C X D U: the top `levels` levels of each side (NaN price, 0 size
          where a side has fewer): the rows `tickinfer book --csv` writes
  bbo     the depth rows whose best bid or ask (price or size) changed: bid/ask price and size
  trades  E (resting order's price, aggressor opposite the resting side: +1 buy, -1 sell), C (its
          own price; `printable` 0 for a non-printable one), P and Q (aggressor 0, unknown)
  orders  every A F E C X D U: type byte, ref, new_ref (U), side (+1 bid, -1 ask) and price of
          the order (the resting order's for E C X D; the new price for U), shares (added,
          executed, cancelled, deleted, or the U's new shares)
Every table has seq (the message's 1-based position in the day: its MoldUDP64 sequence number),
timestamp_ns (ITCH's ns since midnight) and locate (`reader.symbols` maps it to the symbol).
"""
from __future__ import annotations

import os
from typing import Iterable, Iterator, Sequence

import numpy as np

from ._tickinfer import ItchReader, itch_features

TABLES = ("depth", "bbo", "trades", "orders")


def iter_itch(path: str, symbols: Sequence[str] = (), levels: int = 10, tables: Iterable[str] = TABLES,
              batch_messages: int = 1 << 22) -> Iterator[dict]:
    """Batches of tables, each from at most `batch_messages` messages of a day file (a capture
    comes in one batch). Each batch is a dict of tables, each a dict of numpy columns; the decode
    and the books run with the GIL released and the columns are the C++ buffers (no copy)."""
    reader = ItchReader(str(path), list(symbols), levels, list(tables), batch_messages)
    while (batch := reader.next_batch()) is not None:
        batch["symbols"] = reader.symbols
        batch["stats"] = reader.stats()
        yield batch
    if reader.stats()["error"]:
        raise RuntimeError(f"itch '{path}': {reader.stats()['error']}")


def read_itch(path: str, symbols: Sequence[str] = (), levels: int = 10, tables: Iterable[str] = TABLES) -> dict:
    """The whole source's tables (iter_itch's batches joined)."""
    tables = list(tables)
    parts, last = [], None
    for batch in iter_itch(path, symbols, levels, tables):
        parts.append(batch)
        last = batch
    out = {}
    for t in tables:
        cols = parts[0][t].keys() if parts else []
        out[t] = {c: np.concatenate([p[t][c] for p in parts]) if len(parts) > 1 else parts[0][t][c] for c in cols}
    out["symbols"] = last["symbols"] if last else {}
    out["stats"] = last["stats"] if last else {}
    return out


def itch_to_parquet(path: str, out_dir: str, symbols: Sequence[str] = (), levels: int = 10,
                    tables: Iterable[str] = TABLES, batch_messages: int = 1 << 22) -> dict:
    """Writes each table to OUT_DIR/<table>.parquet (pyarrow), batch by batch, with a `symbol`
    column; depth levels as bid_price_1 .. bid_price_N columns. Returns rows written per table."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("itch_to_parquet needs pyarrow (pip install pyarrow)") from e
    os.makedirs(out_dir, exist_ok=True)
    writers, rows = {}, {}
    try:
        for batch in iter_itch(path, symbols, levels, tables, batch_messages):
            names = batch["symbols"]
            for t in tables:
                cols = {}
                for c, v in batch[t].items():
                    if v.ndim == 2:
                        for i in range(v.shape[1]):
                            cols[f"{c}_{i + 1}"] = v[:, i]
                    else:
                        cols[c] = v
                cols["symbol"] = pa.array([names.get(int(x), "") for x in batch[t]["locate"]], type=pa.string())
                table = pa.table(cols)
                if t not in writers:
                    writers[t] = pq.ParquetWriter(os.path.join(out_dir, f"{t}.parquet"), table.schema)
                writers[t].write_table(table)
                rows[t] = rows.get(t, 0) + table.num_rows
    finally:
        for w in writers.values():
            w.close()
    return rows


__all__ = ["ItchReader", "iter_itch", "read_itch", "itch_features", "itch_to_parquet"]
