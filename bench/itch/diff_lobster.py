#!/usr/bin/env python3
"""Diff two sets of LOBSTER files (ours from tools/itch/reference_book.py, theirs from itch-book).

Why: the two exporters differ on a few documented conventions (the execution price of C, the book
line of the delete half of a U, time printing). This script pairs the files by name, compares
message rows and orderbook rows line by line and sorts every difference into a named category,
so a real book difference is not lost among convention differences.

Times are compared as integer nanoseconds (itch-book prints a float with the shortest repr), so
a difference in time printing alone is not a difference.

Example:
    diff_lobster.py OURS_DIR THEIRS_DIR
"""
import argparse
import os
import sys
from collections import Counter
from decimal import Decimal


def ns(text):
    return int((Decimal(text) * 1_000_000_000).to_integral_value())


def load(path):
    with open(path) as f:
        return [line.rstrip("\n").split(",") for line in f if line.strip()]


def diff_pair(ours_msg, theirs_msg, ours_book, theirs_book, cats, examples):
    if len(ours_msg) != len(theirs_msg):
        cats["row_count"] += 1
    for i, (a, b) in enumerate(zip(ours_msg, theirs_msg)):
        ta, tb = ns(a[0]), ns(b[0])
        fields_a, fields_b = [int(x) for x in a[1:]], [int(x) for x in b[1:]]
        if ta != tb:
            cats["time"] += 1
        if fields_a != fields_b:
            if fields_a[0] == fields_b[0] == 4 and fields_a[:3] == fields_b[:3] and fields_a[4] == fields_b[4]:
                cats["execution_price(C: display vs execution price)"] += 1
            else:
                cats["message_fields"] += 1
                if len(examples) < 5:
                    examples.append(("message", i + 1, a, b))
        if ours_book[i] != theirs_book[i]:
            nxt = ours_msg[i + 1] if i + 1 < len(ours_msg) else None
            u_delete = fields_a[0] == 3 and nxt is not None and nxt[0] == a[0] and nxt[1] == "1"
            if u_delete and ours_book[i + 1] == theirs_book[i]:
                cats["book_line(U delete half: before vs after the new order)"] += 1
            else:
                cats["book_line"] += 1
                if len(examples) < 5:
                    examples.append(("orderbook", i + 1, ours_book[i][:8], theirs_book[i][:8]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ours")
    ap.add_argument("theirs")
    a = ap.parse_args(argv)
    names = sorted(n for n in os.listdir(a.theirs) if "_message_" in n)
    total = Counter()
    for name in names:
        book_name = name.replace("_message_", "_orderbook_")
        if not os.path.exists(os.path.join(a.ours, name)):
            print(f"{name}: missing in {a.ours}")
            total["missing_file"] += 1
            continue
        cats, examples = Counter(), []
        om, tm = load(os.path.join(a.ours, name)), load(os.path.join(a.theirs, name))
        ob, tb = load(os.path.join(a.ours, book_name)), load(os.path.join(a.theirs, book_name))
        diff_pair(om, tm, ob, tb, cats, examples)
        total.update(cats)
        print(f"{name}: {len(om)} / {len(tm)} rows; " + (", ".join(f"{k}={v}" for k, v in cats.items()) or "identical"))
        for e in examples:
            print("   ", e)
    print("total: " + (", ".join(f"{k}={v}" for k, v in total.items()) or "identical"))
    unexplained = sum(total[k] for k in ("row_count", "message_fields", "book_line", "time", "missing_file"))
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
