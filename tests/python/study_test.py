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
