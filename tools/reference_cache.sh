#!/usr/bin/env bash
# Runs a reference generator once per machine for a given set of inputs:
#   tools/reference_cache.sh OUT_DIR -- GENERATOR COMMAND ... (naming OUT_DIR where it writes)
#
# The generators (tools/make_*.py) build their models from code with fixed seeds and take their
# expected outputs from the pinned frameworks (TensorFlow, the TFLite interpreter, onnxruntime,
# tfmot). Their output is a function of: the generator script and every module it imports from
# the checkout (followed import by import), the pinned requirements, the interpreter, the CPU
# (TensorFlow's kernels differ by ISA), and the command line. All of these are hashed into a key; a run whose key
# a previous run on this machine already produced copies that output instead of spending minutes
# of TensorFlow on the same bytes. Change any of them and the generator runs again. The engine's
# checks against the output run every time either way (this only replaces the generation).
#
# The cache is ${XDG_CACHE_HOME:-~/.cache}/tickinfer/references/<name>-<key>; REFERENCE_CACHE=0
# regenerates (and refreshes the entry). Each stage keeps its two newest entries.
set -euo pipefail

if [[ $# -lt 3 || "$2" != "--" ]]; then
  echo "usage: tools/reference_cache.sh OUT_DIR -- COMMAND ..." >&2
  exit 2
fi
out=$1
shift 2
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
name="$(basename "${out}")"

key_inputs() {
  # The command with OUT_DIR spelled as a placeholder, so the build directory is not in the key.
  local arg
  for arg in "$@"; do
    [[ "${arg}" == "${out}" ]] && arg="<out>"
    printf '%s\n' "${arg}"
  done
  # The generator script (the first argument ending in .py) and the checkout's modules it
  # imports, by content: a change to any other script does not invalidate this stage.
  python3 - "${repo_root}" "$@" <<'PY'
import ast, hashlib, os, sys
root, args = sys.argv[1], sys.argv[2:]
script = next((a for a in args if a.endswith(".py")), None)
if script is None:
    sys.exit("reference_cache: no generator script (.py) in the command")
# Where a local import can resolve: the script's folder (its sys.path[0]) and python/ (the
# tickinfer package).
dirs = [os.path.dirname(os.path.abspath(script)), os.path.join(root, "python")]
seen, todo = set(), [os.path.abspath(script)]
while todo:
    path = todo.pop()
    if path in seen:
        continue
    seen.add(path)
    for node in ast.walk(ast.parse(open(path, "rb").read(), path)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
            [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else [])
        for name in names:
            parts = name.split(".")
            for d in dirs:
                for cand in (os.path.join(d, *parts) + ".py", os.path.join(d, *parts, "__init__.py"),
                             os.path.join(d, parts[0]) + ".py", os.path.join(d, parts[0], "__init__.py")):
                    if os.path.isfile(cand):
                        todo.append(os.path.abspath(cand))
for path in sorted(seen):
    print(os.path.relpath(path, root), hashlib.sha256(open(path, "rb").read()).hexdigest())
PY
  python3 --version
  # The venv the generator runs in (the command's interpreter, VENV/bin/python): the hash of its
  # pins (setup_venv.sh's stamp) and the interpreter it links to.
  cat "$(dirname "$1")/../.requirements.sha256" 2>/dev/null || echo "no venv stamp"
  readlink -f "$1" 2>/dev/null || true
  uname -m
  grep -m1 -E '^(flags|Features)' /proc/cpuinfo || true
}
key="$(key_inputs "$@" | sha256sum | cut -c1-16)"
cache_root="${XDG_CACHE_HOME:-${HOME}/.cache}/tickinfer/references"
entry="${cache_root}/${name}-${key}"

if [[ "${REFERENCE_CACHE:-1}" != "0" && -f "${entry}/.complete" ]]; then
  rm -rf "${out}"
  mkdir -p "$(dirname "${out}")"
  cp -a "${entry}/output" "${out}"
  echo "reference cache: ${name}: same inputs as the run of $(cat "${entry}/.complete"); its output copied" \
       "(${entry}; REFERENCE_CACHE=0 regenerates)"
  exit 0
fi

"$@"

# Store a copy; a half-written entry never has .complete, and a concurrent writer loses the rename.
mkdir -p "${cache_root}"
tmp="$(mktemp -d "${cache_root}/.${name}.XXXXXX")"
cp -a "${out}" "${tmp}/output"
date -u +%Y-%m-%dT%H:%M:%SZ > "${tmp}/.complete"
rm -rf "${entry}"
mv -T "${tmp}" "${entry}" 2>/dev/null || rm -rf "${tmp}"
# Keep this stage's two newest entries.
ls -1dt "${cache_root}/${name}-"* 2>/dev/null | tail -n +3 | xargs -r rm -rf
