#!/usr/bin/env python3
"""Fails when a file in src/ passes 600 lines or a function in it passes 150.

Both limits are the project's rule for files with one job (docs/architecture.md, "Size"). A
function is measured in physical lines from the first line of its signature to its closing brace,
comments and lambdas inside it included, so a long function cannot hide behind comments or a
lambda. The parser is a brace counter over the source with comments, string literals and
preprocessor lines blanked: at namespace or class scope, a `{` whose header (the text since the
previous `;`, `{` or `}`) has a parameter list and is not an initializer (`= {`) opens a function.

Usage: check_code_size.py [--root DIR] [--max-file N] [--max-function N] [--list K]
"""
import argparse
import os
import re
import sys

SOURCE_EXT = (".cpp", ".hpp", ".h", ".cc", ".inc", ".cu", ".cuh")
SCOPE_HEAD = re.compile(r"^\s*(template\s*<.*>\s*)?(namespace|class|struct|union|enum)\b|^\s*extern\s*$", re.S)


def blank_non_code(text):
    """Comments, literals and preprocessor lines become spaces; newlines are kept."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            j = i
            while j < n and text[j] != "\n":  # a preprocessor line, with its continuations
                if text[j] == "\\" and j + 1 < n and text[j + 1] == "\n":
                    out.append(" \n")
                    j += 2
                    continue
                out.append(" ")
                j += 1
            i = j
            continue
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c == "R" and i + 1 < n and text[i + 1] == '"':
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if m:
                end = text.find(")" + m.group(1) + '"', i)
                j = n if end < 0 else end + len(m.group(1)) + 2
                out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:j]))
                i = j
                continue
        if c in "\"'":
            # A digit separator (1'000'000) is not a character literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + c)
            i = j + 1
            continue
        out.append(c)
        line_start = c == "\n" or (line_start and c in " \t")
        i += 1
    return "".join(out)


def functions(text):
    """Yields (first_line, last_line, header) of every function body at namespace/class scope."""
    code = blank_non_code(text)
    stack = []  # "scope", "data" or ("function", first_line, header)
    header_start = 0
    lines_before = [0]  # lines_before[i]: newlines before offset i
    for ch in code:
        lines_before.append(lines_before[-1] + (ch == "\n"))
    for i, ch in enumerate(code):
        if ch not in "{};":
            continue
        in_function = any(isinstance(s, tuple) for s in stack)
        if ch == ";":
            if not in_function and (not stack or stack[-1] == "scope"):
                header_start = i + 1
            continue
        if ch == "{":
            if in_function or (stack and stack[-1] == "data"):
                stack.append("inner")
                continue
            header = code[header_start:i]
            flat = " ".join(header.split())
            if SCOPE_HEAD.match(header) and "(" not in flat.split("{")[0].split("=")[0] or not flat:
                kind = "scope"
            elif "(" in flat and not re.search(r"=\s*$", flat) and (
                    "=" not in flat.split("(")[0] or re.search(r"=\s*\[", flat)):
                first = lines_before[header_start + len(header) - len(header.lstrip())] + 1
                kind = ("function", first, flat[:80])
            else:
                kind = "data"
            stack.append(kind)
            header_start = i + 1
            continue
        # "}"
        if not stack:
            continue
        top = stack.pop()
        if isinstance(top, tuple):
            yield top[1], lines_before[i] + 1, top[2]
        if not any(isinstance(s, tuple) for s in stack):
            header_start = i + 1


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=here)
    ap.add_argument("--max-file", type=int, default=600)
    ap.add_argument("--max-function", type=int, default=150)
    ap.add_argument("--list", type=int, default=0, help="also print the K longest functions")
    args = ap.parse_args()
    problems, sizes = [], []
    src = os.path.join(args.root, "src")
    for base, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith(SOURCE_EXT):
                continue
            path = os.path.join(base, f)
            rel = os.path.relpath(path, args.root)
            text = open(path, encoding="utf-8", errors="replace").read()
            count = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
            if count > args.max_file:
                problems.append(f"{rel}: {count} lines (limit {args.max_file}): split it by job")
            for first, last, header in functions(text):
                length = last - first + 1
                sizes.append((length, f"{rel}:{first}", header))
                if length > args.max_function:
                    problems.append(f"{rel}:{first}: function of {length} lines (limit "
                                    f"{args.max_function}): {header}")
    for length, where, header in sorted(sizes, reverse=True)[:args.list]:
        print(f"{length:5d}  {where}  {header}")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} size violation(s)")
        return 1
    print(f"code size: every file in src/ <= {args.max_file} lines, every function <= {args.max_function}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
