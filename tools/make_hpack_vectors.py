#!/usr/bin/env python3
"""Writes tests/fixtures/hpack/vectors.json: HPACK test vectors made by an independent
implementation, the PyPI package `hpack` (python-hyper), pinned at hpack==4.2.0.

  sequences  Seeded random header lists, each sequence encoded by ONE hpack.Encoder (so later
             blocks index entries that earlier blocks added, and the dynamic table evicts), with
             names and values of any octets 0-255 and lengths 0-300, static-table names, repeated
             fields, never-indexed (sensitive) fields, Huffman on or off per block, and in some
             sequences dynamic table size changes (several in one block too, down to 0).
             Each block: {"block": hex of the encoded block, "headers": [[name hex, value hex],
             ...] (the list given to the encoder), "table_size": the encoder's dynamic table
             size in RFC bytes after the block}. The decoder under test starts with a 4096-octet
             table (hpack's default, which these blocks never exceed).
  huffman    Random octet strings (uniform octets, printable ASCII, header-like text) and all 256
             octets in order, with hpack's Huffman encoding of each: {"raw": hex, "encoded": hex}.

Each block is decoded back with hpack.Decoder as a sanity check of the generator itself.
The committed JSON is the fixture; hpack is not needed to run the tests.

Usage: pip install hpack==4.2.0  (any venv)
       python tools/make_hpack_vectors.py [--out tests/fixtures/hpack/vectors.json]
"""
import argparse
import json
import os
import random

import hpack
from hpack.huffman import HuffmanEncoder
from hpack.huffman_constants import REQUEST_CODES, REQUEST_CODES_LENGTH

HPACK_VERSION = "4.2.0"
SEED = 7541
TABLE_SIZE = 4096

STATIC_NAMES = [b":authority", b":method", b":path", b":scheme", b":status", b"accept-encoding",
                b"cache-control", b"content-type", b"content-length", b"cookie", b"date",
                b"user-agent", b"set-cookie", b"te", b"grpc-timeout", b"grpc-encoding"]
COMMON = [(b":method", b"GET"), (b":method", b"POST"), (b":path", b"/"), (b":scheme", b"http"),
          (b":status", b"200"), (b":status", b"404"), (b"accept-encoding", b"gzip, deflate"),
          (b"content-type", b"application/grpc"), (b"te", b"trailers")]


def random_length(rng):
    # Mostly short fields, some long ones so that sequences reach the 4096-octet table and evict.
    r = rng.random()
    if r < 0.5:
        return rng.randint(0, 16)
    if r < 0.8:
        return rng.randint(17, 80)
    return rng.randint(81, 300)


def random_bytes(rng, n, kind):
    if kind == "octets":  # every octet value, including 0x00 and 0x80-0xff
        return bytes(rng.randrange(256) for _ in range(n))
    if kind == "printable":
        return bytes(rng.randint(0x20, 0x7E) for _ in range(n))
    alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789-_./:;=, "
    return bytes(rng.choice(alphabet) for _ in range(n))


def random_field(rng, history):
    r = rng.random()
    if r < 0.2 and history:  # a field sent before: indexed from the dynamic table if still there
        return rng.choice(history)
    if r < 0.35:
        return rng.choice(COMMON)
    kind = rng.choice(["octets", "printable", "text"])
    if r < 0.6:  # a static-table (or common) name with a new value
        return (rng.choice(STATIC_NAMES), random_bytes(rng, random_length(rng), kind))
    return (random_bytes(rng, random_length(rng), kind), random_bytes(rng, random_length(rng), kind))


def table_size(codec):
    return codec.header_table._current_size  # RFC bytes; hpack 4.2.0 has no public accessor


def make_sequences(rng, count):
    sequences = []
    for seq_index in range(count):
        encoder = hpack.Encoder()
        decoder = hpack.Decoder()
        resizes = seq_index % 3 == 0
        history = []
        blocks = []
        for _ in range(rng.randint(2, 8)):
            if resizes and rng.random() < 0.4:
                # Several changes before one block are all signalled at its start (6.3).
                # (hpack 4.2.0 drops pending changes when the last one repeats the current size,
                # so each value differs from the one before.)
                for _ in range(rng.randint(1, 2)):
                    sizes = [s for s in (0, 64, 256, 1000, 2048, TABLE_SIZE) if s != encoder.header_table_size]
                    encoder.header_table_size = rng.choice(sizes)
            fields = []
            for _ in range(rng.randint(0, 10)):
                name, value = random_field(rng, history)
                sensitive = rng.random() < 0.1
                fields.append((name, value, sensitive))
                history.append((name, value))
            block = encoder.encode(fields, huffman=rng.random() < 0.5)
            headers = [(n, v) for n, v, _ in fields]
            decoded = decoder.decode(block, raw=True)
            assert [(bytes(n), bytes(v)) for n, v in decoded] == headers, "hpack round trip failed"
            assert table_size(decoder) == table_size(encoder), "hpack tables disagree"
            blocks.append({
                "block": block.hex(),
                "headers": [[n.hex(), v.hex()] for n, v in headers],
                "table_size": table_size(encoder),
            })
        sequences.append(blocks)
    return sequences


def make_huffman(rng, count):
    coder = HuffmanEncoder(REQUEST_CODES, REQUEST_CODES_LENGTH)
    strings = [bytes(range(256)), b""]
    for i in range(count):
        strings.append(random_bytes(rng, rng.randint(0, 300), ["octets", "printable", "text"][i % 3]))
    return [{"raw": s.hex(), "encoded": coder.encode(s).hex()} for s in strings]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="tests/fixtures/hpack/vectors.json")
    args = ap.parse_args()
    if hpack.__version__ != HPACK_VERSION:
        raise SystemExit(f"hpack {hpack.__version__} installed; these vectors are made with {HPACK_VERSION}")
    rng = random.Random(SEED)
    doc = {
        "generator": "tools/make_hpack_vectors.py",
        "hpack_version": HPACK_VERSION,
        "seed": SEED,
        "max_table_size": TABLE_SIZE,
        "sequences": make_sequences(rng, 60),
        "huffman": make_huffman(rng, 200),
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    blocks = sum(len(s) for s in doc["sequences"])
    print(f"{args.out}: {len(doc['sequences'])} sequences, {blocks} blocks, {len(doc['huffman'])} huffman strings")


if __name__ == "__main__":
    main()
