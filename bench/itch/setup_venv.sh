#!/usr/bin/env bash
# Creates .venv-itch in the repository root with the itch-book peer (a C++ ITCH 5.0 parser and
# full-depth book with Python bindings, pinned to 0.2.1), numpy, and pyarrow (itch-book's LOBSTER
# export writes its CSV files with it), for bench/itch/itch_book_peer.py.
# Kept apart from the project venv so the peer's wheel and its dependencies cannot change the
# project's own. Idempotent: does nothing when the pinned packages already import.
#
# usage: bench/itch/setup_venv.sh [VENV]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
venv=${1:-.venv-itch}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" - <<'PY' 2>/dev/null
import importlib.metadata as md, numpy, pyarrow, itch_book._core  # noqa: F401
assert md.version("itch-book") == "0.2.1"
PY
then
  "$venv/bin/pip" install -q "itch-book==0.2.1" numpy pyarrow
fi
"$venv/bin/python" -c 'import importlib.metadata as md; print("itch-book", md.version("itch-book"))'
