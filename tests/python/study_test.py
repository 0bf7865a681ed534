"""`tickinfer study` on the committed direction task: the labelled data set from the synthetic
exchange (tools/make_direction_task.py --small, seeded), the task-trained mlp_large and its
pruned twins (tools/make_pruned_models.py). Its metrics are checked against Keras' outputs on
the same rows scored by scikit-learn; the table, the Pareto front, the knee and the HTML plot are
checked for what they promise."""
import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
from sklearn.metrics import accuracy_score, roc_auc_score

from serving_support import BIN, ROOT

BENCH = os.path.join(ROOT, "bench", "models")


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    out = tmp_path_factory.mktemp("direction_task")
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "make_direction_task.py"), "--small",
                    "--tickinfer", BIN, "--out", str(out)], check=True, capture_output=True)
    return out


def test_study_metrics_match_keras_and_sklearn_and_the_knee_is_on_the_front(task, tmp_path):
    x = np.load(task / "x_val.npy")
    y = np.load(task / "y_val.npy").reshape(-1)
    dense = os.path.join(BENCH, "mlp_large_task", "model.keras")
    pruned = os.path.join(BENCH, "mlp_large_pruned80", "model.keras")
    report = tmp_path / "study.json"
    html = tmp_path / "study.html"
    run = subprocess.run([BIN, "study", "--model", dense, "--model", pruned, "--x", str(task / "x_val.npy"),
                          "--y", str(task / "y_val.npy"), "--prune", "0.8", "--rounds", "1", "--seconds", "0.05",
                          "--json", str(report), "--html", str(html)], check=True, capture_output=True, text=True)
    assert "order applied: structure (the candidates), then pruning, then quantization" in run.stdout
    variants = json.loads(report.read_text())["variants"]
    by = {(v["candidate"], v["variant"]): v for v in variants}
    # The structure as given, one-shot pruned, int8 of each, auto mixed precision: per candidate.
    assert len(variants) == 2 * 5
    for model in (dense, pruned):
        scores = keras.models.load_model(model).predict(x, verbose=0).reshape(-1)
        v = by[(model, "fp32")]
        assert v["auc"] == pytest.approx(roc_auc_score(y, scores), abs=1e-4)
        assert v["accuracy"] == pytest.approx(accuracy_score(y, scores > 0.5), abs=1e-3)
    assert by[(pruned, "fp32")]["zero_weights"] > 0.75 * by[(pruned, "fp32")]["params"]
    assert by[(dense, "pruned 80% (1x16, one-shot)")]["zero_weights"] > 0.7 * by[(dense, "fp32")]["params"]
    front = [v for v in variants if v["pareto"]]
    knees = [v for v in variants if v["knee"]]
    assert len(knees) == 1 and knees[0]["pareto"]
    # The front: no variant is both faster and better than a front member.
    for f in front:
        assert not any(v["p50_ns"] < f["p50_ns"] and v["auc"] > f["auc"] for v in variants)
    best = max(v["auc"] for v in variants)
    assert knees[0]["auc"] >= best - 0.005
    page = html.read_text()
    assert "<svg" in page and "knee: " in page and "Order applied" in page


def _load_study_module():
    # tickinfer.study is pure Python: load it from the source tree without the native module.
    import importlib.util
    spec = importlib.util.spec_from_file_location("tickinfer_study", os.path.join(ROOT, "python", "tickinfer", "study.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_grid_trained_and_pruned_candidates_go_through_the_study(task, tmp_path):
    study = _load_study_module()
    x = np.load(task / "x_train.npy")[:4000]
    y = np.load(task / "y_train.npy").reshape(-1)[:4000]
    files = study.train_grid(x, y, depths=[1, 3], widths=[64], out_dir=str(tmp_path), epochs=1)
    assert [os.path.basename(f) for f in files] == ["d1_w64.keras", "d3_w64.keras"]
    pruned = study.prune_candidates(files[1:], x, y, sparsities=[0.8], epochs=1)
    m = keras.models.load_model(pruned[0])
    k = m.layers[1].get_weights()[0]  # the 64 x 32 hidden kernel
    assert k.shape == (64, 32) and (k == 0).mean() == pytest.approx(0.8, abs=0.02)
    # Whole 1 x 16 blocks are zero: the pattern the sparse kernel skips.
    blocks = np.abs(k).reshape(64, 2, 16).sum(axis=2)
    assert (blocks == 0).mean() == pytest.approx(0.8, abs=0.02)
    report = tmp_path / "study.json"
    subprocess.run([BIN, "study", *sum((["--model", f] for f in files + pruned), []), "--x", str(task / "x_val.npy"),
                    "--y", str(task / "y_val.npy"), "--prune", "", "--no-quantize", "--rounds", "1",
                    "--seconds", "0.05", "--json", str(report)], check=True, capture_output=True)
    variants = json.loads(report.read_text())["variants"]
    assert [v["candidate"] for v in variants] == files + pruned
    assert sum(v["knee"] for v in variants) == 1
