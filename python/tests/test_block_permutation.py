"""tickinfer.block_permutation: the regrouped model computes what the original computed (Keras 3
and tf_keras predict both), and the search finds a grouping planted in the weights."""
import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

keras = pytest.importorskip("keras")

from conftest import load_source_module  # noqa: E402

bp = load_source_module("block_permutation")
pruning = load_source_module("pruning")


def mlp(k, widths, between=None):
    layers = [k.Input((10,))]
    for w in widths:
        layers.append(k.layers.Dense(w, activation="relu"))
        if between is not None:
            layers.append(between())
    model = k.Sequential(layers + [k.layers.Dense(1, activation="sigmoid")])
    rng = np.random.default_rng(3)
    # Heavy-tailed weights, so that groupings differ in what blocks keep.
    model.set_weights([rng.standard_t(2, w.shape).astype(np.float32) * 0.2 for w in model.get_weights()])
    return model


@pytest.mark.parametrize("which", ["keras", "tf_keras"])
def test_the_regrouped_model_predicts_what_the_original_did(which):
    k = pytest.importorskip(which)
    model = mlp(k, [64, 32], between=lambda: k.layers.Dropout(0.1))
    x = np.random.default_rng(4).standard_normal((256, 10)).astype(np.float32)
    before = model.predict(x, verbose=0)
    kernels_before = [l.get_weights()[0].copy() for l in model.layers if type(l).__name__ == "Dense"]
    report = bp.permute_units_for_blocks(model, 0.8, seed=1)
    after = model.predict(x, verbose=0)
    np.testing.assert_allclose(after, before, rtol=1e-5, atol=1e-6)  # sums in another order
    assert [r["layer"] for r in report] == [l.name for l in model.layers if type(l).__name__ == "Dense"]
    assert [r["permuted"] for r in report] == [True, True, False]
    assert "last Dense" in report[2]["why"]
    dense = [l for l in model.layers if type(l).__name__ == "Dense"]
    for row, layer, old in zip(report[:2], dense, kernels_before):
        new = layer.get_weights()[0]
        assert row["kept_after"] > row["kept_before"]
        assert row["kept_before"] == pytest.approx(bp.kept_block_mass(old, 0.8))
        assert row["kept_after"] == pytest.approx(bp.kept_block_mass(new, 0.8))
        # Weights moved, none changed.
        np.testing.assert_array_equal(np.sort(new, axis=None), np.sort(old, axis=None))
    # The first layer's inputs are the model's: only its columns moved.
    first_new, first_old = dense[0].get_weights()[0], kernels_before[0]
    assert sorted(map(tuple, first_new.T)) == sorted(map(tuple, first_old.T))


def test_the_search_finds_a_planted_grouping():
    # 32 units: even ones read inputs 0-15 strongly, odd ones 16-31. Blocks of 16 adjacent units
    # mix both halves until the units are sorted by parity; then half the blocks hold every
    # large weight, so a 50 % block mask keeps all of them.
    model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(32), keras.layers.Dense(1)])
    kernel = np.full((32, 32), 0.01, np.float32)
    for unit in range(32):
        rows = slice(0, 16) if unit % 2 == 0 else slice(16, 32)
        kernel[rows, unit] = 1.0
    w = model.get_weights()
    model.set_weights([kernel, np.arange(32, dtype=np.float32), w[2], w[3]])
    report = bp.permute_units_for_blocks(model, 0.5, seed=2)
    large = 32 * 16 * 1.0
    assert report[0]["kept_before"] == pytest.approx(32 * (8 + 8 * 0.01))
    assert report[0]["kept_after"] == pytest.approx(large)
    new_kernel, new_bias = model.layers[0].get_weights()
    mask, _ = pruning.magnitude_mask(new_kernel, 0.5, block=(1, 16))
    assert mask[new_kernel == 1.0].all() and not mask[new_kernel == 0.01].any()
    # The bias moved with its units, and the next layer's rows with them.
    order = new_bias.astype(int)
    np.testing.assert_array_equal(new_kernel, kernel[:, order])
    np.testing.assert_array_equal(model.layers[1].get_weights()[0], w[2][order, :])


def test_same_seed_same_order_and_what_is_left_alone():
    a, b = mlp(keras, [64, 32]), mlp(keras, [64, 32])
    bp.permute_units_for_blocks(a, 0.8, seed=5)
    bp.permute_units_for_blocks(b, 0.8, seed=5)
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_array_equal(wa, wb)
    bn = mlp(keras, [64, 32], between=keras.layers.BatchNormalization)
    report = bp.permute_units_for_blocks(bn, 0.8)
    assert not any(r["permuted"] for r in report)
    assert "BatchNormalization" in report[0]["why"]
    odd = mlp(keras, [24, 16])
    report = bp.permute_units_for_blocks(odd, 0.8)
    assert [r["permuted"] for r in report] == [False, False, False]
    assert "24 units" in report[0]["why"] and "16 units" in report[1]["why"]
    only = mlp(keras, [64, 32])
    report = bp.permute_units_for_blocks(only, 0.8, layers=["missing"])
    assert report == []


def test_blocks_kept_counted_as_pruning_counts_them():
    for blocks in range(1, 300):
        for s in (0.0, 0.25, 0.5, 0.8, 0.9, 0.97, 0.999):
            assert bp._kept(blocks, s) == pruning.kept_count(blocks, s), (blocks, s)


def test_refusals():
    inp = keras.Input((10,))
    functional = keras.Model(inp, keras.layers.Dense(1)(keras.layers.Dense(32)(inp)))
    with pytest.raises(ValueError, match="Sequential models only"):
        bp.permute_units_for_blocks(functional, 0.8)
    with pytest.raises(ValueError, match="sparsity"):
        bp.permute_units_for_blocks(mlp(keras, [32]), 1.0)
    with pytest.raises(ValueError, match="block_width"):
        bp.permute_units_for_blocks(mlp(keras, [32]), 0.5, block_width=1)
