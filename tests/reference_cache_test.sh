#!/usr/bin/env bash
# tools/reference_cache.sh reuses a generator's output only for the same inputs: a second run
# with nothing changed copies the stored output (the generator does not run), and a changed
# generator, a changed module it imports, changed arguments, or REFERENCE_CACHE=0 run it again.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
export XDG_CACHE_HOME="${work}/cache"
mkdir -p "${work}/gen"
cat > "${work}/gen/helper.py" <<'PY'
VALUE = 1
PY
cat > "${work}/gen/make_thing.py" <<'PY'
import os, sys
import helper
out = sys.argv[sys.argv.index("--out") + 1]
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "value.txt"), "w") as f:
    f.write(f"{helper.VALUE} {sys.argv[-1]}\n")
with open(os.path.join(os.path.dirname(__file__), "runs.log"), "a") as f:
    f.write("ran\n")
PY
runs() { wc -l < "${work}/gen/runs.log"; }
gen() { "${root}/tools/reference_cache.sh" "${work}/out/thing" -- python3 "${work}/gen/make_thing.py" --out "${work}/out/thing" "$@" >/dev/null; }
fail() { echo "FAIL: $*" >&2; exit 1; }

gen a;                         [[ "$(runs)" == 1 ]] || fail "first run did not generate"
gen a;                         [[ "$(runs)" == 1 ]] || fail "same inputs generated again"
[[ "$(cat "${work}/out/thing/value.txt")" == "1 a" ]] || fail "a hit did not restore the output"
gen b;                         [[ "$(runs)" == 2 ]] || fail "changed arguments reused the output"
echo "# edited" >> "${work}/gen/make_thing.py"
gen b;                         [[ "$(runs)" == 3 ]] || fail "a changed generator reused the output"
echo "VALUE = 2" > "${work}/gen/helper.py"
gen b;                         [[ "$(runs)" == 4 ]] || fail "a changed imported module reused the output"
[[ "$(cat "${work}/out/thing/value.txt")" == "2 b" ]] || fail "wrong output after a change"
REFERENCE_CACHE=0 gen b;       [[ "$(runs)" == 5 ]] || fail "REFERENCE_CACHE=0 did not regenerate"
gen b;                         [[ "$(runs)" == 5 ]] || fail "the refreshed entry was not reused"
echo "reference_cache_test: ok"
