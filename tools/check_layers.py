#!/usr/bin/env python3
"""Fails when a lower layer includes a higher one.

The layer table is the fenced ```layers block in docs/architecture.md: one line per module,
"module: the modules it may include directly". What a module may include is that list and
everything those modules may include (the closure), so the table states each edge once.
Every directory under src/ must appear in it, so a new module has to be placed before it builds
on anything.

Public headers (include/tickinfer/*.hpp) belong to the module that implements them (the
`public` lines of the same block: "public tickinfer.hpp: engine"); a header with no owner is a
base header every module may include, and must itself include nothing from src/.

Usage: check_layers.py [--root DIR]     check the tree at DIR (default: this checkout)
       check_layers.py --self-test      check that a deliberate back-include is caught
"""
import argparse
import os
import re
import shutil
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCE_EXT = (".cpp", ".hpp", ".h", ".cc", ".inc", ".cu", ".cuh")


def read_table(root):
    """Returns (deps: module -> direct deps, owners: public header name -> module)."""
    doc = os.path.join(root, "docs", "architecture.md")
    text = open(doc, encoding="utf-8").read()
    m = re.search(r"^```layers\n(.*?)^```", text, re.S | re.M)
    if not m:
        sys.exit(f"{doc}: no ```layers block (the layer table this check reads)")
    deps, owners = {}, {}
    for n, line in enumerate(m.group(1).splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        head, _, rest = line.partition(":")
        words = head.split()
        if len(words) == 2 and words[0] == "public":
            owners[words[1]] = rest.strip()
        elif len(words) == 1:
            deps[words[0]] = rest.split()
        else:
            sys.exit(f"{doc}: layers block line {n}: expected 'module: deps' or 'public header: module'")
    for mod, ds in deps.items():
        for d in ds:
            if d not in deps:
                sys.exit(f"{doc}: layers block: {mod} lists {d}, which has no line of its own")
    for header, mod in owners.items():
        if mod not in deps:
            sys.exit(f"{doc}: layers block: public {header} is owned by unknown module {mod}")
    return deps, owners


def closure(deps):
    """module -> every module it may include (itself included)."""
    allowed = {}
    for mod in deps:
        seen, todo = {mod}, list(deps[mod])
        while todo:
            d = todo.pop()
            if d not in seen:
                seen.add(d)
                todo.extend(deps[d])
        allowed[mod] = seen
    return allowed


def sources(directory):
    for base, _, files in os.walk(directory):
        for f in sorted(files):
            if f.endswith(SOURCE_EXT):
                yield os.path.join(base, f)


def includes(path):
    """Yields (line number, included path, its first component) of every quoted #include."""
    for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
        m = INCLUDE.match(line)
        if m:
            yield n, m.group(1), m.group(1).split("/", 1)[0]


def check(root):
    deps, owners = read_table(root)
    allowed = closure(deps)
    src = os.path.join(root, "src")
    modules = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    problems = []
    for mod in modules:
        if mod not in deps:
            problems.append(f"src/{mod}/: module not in the layers table of docs/architecture.md")
    for mod in modules:
        if mod not in deps:
            continue
        for path in sources(os.path.join(src, mod)):
            rel = os.path.relpath(path, root)
            for n, target, first in includes(path):
                if first == "tickinfer":
                    owner = owners.get(target.split("/", 1)[1])
                    if owner and owner not in allowed[mod]:
                        problems.append(f'{rel}:{n}: includes "{target}", the public header of '
                                        f"{owner}, a layer above {mod}")
                elif first in deps and first not in allowed[mod]:
                    problems.append(f'{rel}:{n}: includes "{target}": {mod} may not include {first} '
                                    f"(it may include: {', '.join(sorted(allowed[mod] - {mod})) or 'nothing'})")
    public = os.path.join(root, "include", "tickinfer")
    for path in sources(public):
        rel = os.path.relpath(path, root)
        name = os.path.relpath(path, public)
        owner = owners.get(name)
        for n, target, first in includes(path):
            if first in deps:
                problems.append(f'{rel}:{n}: public header includes "{target}" from src/')
            elif first == "tickinfer" and owner is None:
                other = owners.get(target.split("/", 1)[1])
                if other:
                    problems.append(f'{rel}:{n}: base header includes "{target}" of {other}')
    return problems


def self_test(root):
    """A copy of the tree with one back-include must fail, naming the file and the layers."""
    with tempfile.TemporaryDirectory() as tmp:
        for part in ("src", "include", "docs"):
            shutil.copytree(os.path.join(root, part), os.path.join(tmp, part))
        clean = check(tmp)
        if clean:
            print("self-test: the tree itself does not pass:\n  " + "\n  ".join(clean))
            return 1
        bad = os.path.join(tmp, "src", "kernels", "back_include_probe.hpp")
        with open(bad, "w") as f:
            f.write('#pragma once\n#include "engine/plan_layout.hpp"\n')
        problems = check(tmp)
        expected = 'src/kernels/back_include_probe.hpp:2: includes "engine/plan_layout.hpp": kernels may not include engine'
        if not any(p.startswith(expected) for p in problems):
            print("self-test: a kernels -> engine include was not caught; got:\n  " + "\n  ".join(problems))
            return 1
        print("self-test: caught " + problems[0])
    return 0


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=here)
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test(args.root)
    problems = check(args.root)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} layering violation(s); the order is the layers block of docs/architecture.md")
        return 1
    print("layers: every include goes downhill")
    return 0


if __name__ == "__main__":
    sys.exit(main())
