"""tickinfer's own quantized files of a bench-suite model, made the way a user makes them:
`tickinfer quantize MODEL --mode int8|dynamic|auto --calibration CAL --validation VAL -o X.tkq`.

The calibration windows are the ones LiteRT's full-int8 converter gets (convert.py), so both
engines quantize from the same data; the validation windows are another seeded draw (auto mode
checks --max-error on them). Neither set overlaps the timing or agreement inputs of run.py.
Files are cached under OUT/<model>/ keyed by the model file, the tickinfer binary and the data;
a mode that fails leaves <file>.failed with the command's last line (the row is then reported
as not run).
"""
import hashlib
import pathlib
import subprocess

import numpy as np

# mode -> extra arguments. auto: per-layer mixed precision at the bench suite's error budget
# (tools/bench_quantized.sh uses the same), measured against fp32 as the command does.
MODES = {"int8": [], "dynamic": [], "auto": ["--max-error", "0.01"]}


def _fingerprint(*parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else pathlib.Path(p).read_bytes())
    return h.hexdigest()[:16]


def quantize(build, model_path, out_dir, calibration, validation, log):
    """Returns {"tkq_int8": file, "tkq_dynamic": file, "tkq_auto": file} (a file may be missing:
    its .failed says why). calibration, validation: one [N, *shape] float32 array per input."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tool = pathlib.Path(build) / "tickinfer"
    cal = [out_dir / f"tickinfer_calibration_{i}.npy" for i in range(len(calibration))]
    val = [out_dir / f"tickinfer_validation_{i}.npy" for i in range(len(validation))]
    for path, a in zip(cal + val, list(calibration) + list(validation)):
        np.save(path, a)
    key = _fingerprint(model_path, tool, *cal, *val)
    stamp = out_dir / "tickinfer_quantized.stamp"
    paths = {f"tkq_{m}": out_dir / f"model.{m}.tkq" for m in MODES}
    if not (stamp.exists() and stamp.read_text() == key):
        for p in paths.values():
            p.unlink(missing_ok=True)
            p.with_name(p.name + ".failed").unlink(missing_ok=True)
    made = []
    for mode, extra in MODES.items():
        path = paths[f"tkq_{mode}"]
        failed = path.with_name(path.name + ".failed")
        if path.exists() or failed.exists():
            continue
        cmd = [str(tool), "quantize", str(model_path), "--mode", mode, "-o", str(path), *extra]
        for c in cal:
            cmd += ["--calibration", str(c)]
        for v in val:
            cmd += ["--validation", str(v)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        (out_dir / f"model.{mode}.txt").write_text(proc.stdout + proc.stderr)
        if proc.returncode != 0 or not path.exists():
            tail = (proc.stderr.strip().splitlines() or proc.stdout.strip().splitlines() or ["?"])[-1]
            failed.write_text(f"tickinfer quantize --mode {mode} failed: {tail[:300]}")
            log(f"    {failed.read_text()}")
        else:
            made.append(mode)
    stamp.write_text(key)
    if made:
        log("    tickinfer quantize: " + ", ".join(made))
    return {k: str(p) for k, p in paths.items()}
