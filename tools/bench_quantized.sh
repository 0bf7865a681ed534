#!/usr/bin/env bash
# Quantizes every bench model (bench/models/<name>/model.keras) the ways the bench suite compares:
# --mode int8, dynamic, bf16, and auto at --max-error 1e-2, each calibrated on 200 and validated
# on 500 seeded N(0, 1) windows (what `tickinfer bench` feeds), into OUT/<name>.<variant>.tkq.
# The per-layer tables go to OUT/<name>.<variant>.txt.
#   tools/bench_quantized.sh BUILD_DIR OUT_DIR
set -euo pipefail
build=$1
out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
py=${VENV:-$root/.venv}/bin/python
mkdir -p "$out"
for dir in "$root"/bench/models/*/; do
  name=$(basename "$dir")
  model="$dir/model.keras"
  [ -f "$model" ] || continue
  "$py" - "$model" "$out/$name" <<'PY'
import json, sys, zipfile
import numpy as np
model, prefix = sys.argv[1], sys.argv[2]
cfg = json.loads(zipfile.ZipFile(model).read("config.json"))
layers = cfg["config"]["layers"]
shape = [d for d in layers[0]["config"]["batch_shape"][1:]]
rng = np.random.default_rng(20261130)
np.save(prefix + ".cal.npy", rng.standard_normal([200] + shape).astype(np.float32))
np.save(prefix + ".val.npy", rng.standard_normal([500] + shape).astype(np.float32))
PY
  for variant in int8 dynamic bf16 auto; do
    args=(--mode "$variant")
    [ "$variant" = auto ] && args+=(--max-error 0.01)
    "$build/tickinfer" quantize "$model" --calibration "$out/$name.cal.npy" --validation "$out/$name.val.npy" \
      -o "$out/$name.$variant.tkq" "${args[@]}" >"$out/$name.$variant.txt" 2>&1 ||
      echo "$name $variant: $(tail -1 "$out/$name.$variant.txt")" >&2
  done
done
