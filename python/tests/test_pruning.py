"""tickinfer.pruning against tfmot 0.8.1 (tf_keras), step by step, and on Keras 3.

Same model, same initial weights, same batches, same deterministic optimizer (SGD with momentum):
tfmot's prune_low_magnitude + UpdatePruningStep on one copy, ours on the other; the masks are
compared after every training step (bit for bit), and the final weights too. Then the mask
computation of a Keras 3 model on the weights of the tf_keras run, and Keras 3 fit end to end.

tfmot selects tf_keras itself when tf.keras is Keras 3 (it also sets TF_USE_LEGACY_KERAS=1 for
the process); this file reaches both Kerases by name (`keras`, `tf_keras`), never via tf.keras.
"""
import os
import warnings

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("TF_DETERMINISTIC_OPS", "1")
warnings.filterwarnings("ignore", category=DeprecationWarning)

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")
tf_keras = pytest.importorskip("tf_keras")
tfmot = pytest.importorskip("tensorflow_model_optimization")

from conftest import load_source_module  # noqa: E402

pr = load_source_module("pruning")
S = tfmot.sparsity.keras
from tensorflow_model_optimization.python.core.sparsity.keras.pruning_wrapper import PruneLowMagnitude  # noqa: E402
tf_keras.utils.disable_interactive_logging()


def mlp(K, widths=(32, 64), features=10, names=None):
    names = names or [None] * len(widths)
    return K.Sequential([K.Input((features,))] + [K.layers.Dense(w, activation="relu", name=n) for w, n in zip(widths, names)]
                        + [K.layers.Dense(1, activation="sigmoid")])


def mlp_named(K):
    # tfmot cannot block-prune a [64, 1] kernel (it squeezes it to rank 1): the 16-wide ones only.
    return mlp(K, names=["b16_a", "b16_b"])


def conv_lstm(K):
    return K.Sequential([K.Input((6, 4)), K.layers.Conv1D(16, 3, padding="causal", activation="relu"),
                         K.layers.LSTM(16), K.layers.Dense(1, activation="sigmoid")])


def random_weights(model, seed):
    rng = np.random.RandomState(seed)
    return [(rng.standard_normal(w.shape) * 0.4).astype(np.float32) for w in model.get_weights()]


def data(shape, rows, seed):
    rng = np.random.RandomState(seed)
    x = rng.standard_normal((rows,) + shape).astype(np.float32)
    y = (x.reshape(rows, -1)[:, :3].sum(1) + 0.5 * rng.standard_normal(rows) > 0).astype(np.float32)
    return x, y


class Recorder(tf_keras.callbacks.Callback):
    """Masks after every training step; for the tfmot model also the prunable weights at the
    start of each batch (what the mask update of that step sees)."""

    def __init__(self, masks_fn, weights_fn=None):
        super().__init__()
        self.masks_fn, self.weights_fn = masks_fn, weights_fn
        self.masks, self.weights = [], []

    def on_train_batch_begin(self, batch, logs=None):
        if self.weights_fn:
            self.weights.append(self.weights_fn())

    def on_train_batch_end(self, batch, logs=None):
        self.masks.append(self.masks_fn())


def tfmot_wrappers(model):
    return [l for l in model.layers if isinstance(l, PruneLowMagnitude)]


def run_pair(build, x, y, tfmot_schedule, our_schedule, epochs, batch, tfmot_kw=None, our_kw=None,
             layers=None):
    base = build(tf_keras)
    weights = random_weights(base, 7)
    base.set_weights(weights)
    if layers is None:
        ref = S.prune_low_magnitude(base, pruning_schedule=tfmot_schedule, **(tfmot_kw or {}))
    else:
        ref = tf_keras.models.clone_model(base, clone_function=lambda l: S.prune_low_magnitude(
            l, pruning_schedule=tfmot_schedule, **(tfmot_kw or {})) if l.name in layers else l.__class__.from_config(l.get_config()))
        for l, src in zip(ref.layers, base.layers):
            (l.layer if isinstance(l, PruneLowMagnitude) else l).set_weights(src.get_weights())
    wrappers = tfmot_wrappers(ref)
    ref_rec = Recorder(lambda: [m.numpy() for l in wrappers for _, m, _ in l.pruning_vars],
                       lambda: [w.numpy() for l in wrappers for w, _, _ in l.pruning_vars])
    ref.compile(tf_keras.optimizers.SGD(0.05, momentum=0.9), "binary_crossentropy")
    ref.fit(x, y, batch_size=batch, epochs=epochs, shuffle=False, verbose=0,
            callbacks=[S.UpdatePruningStep(), ref_rec])

    base2 = build(tf_keras)
    base2.set_weights(weights)
    ours = pr.prune_low_magnitude(base2, our_schedule, layers=layers, **(our_kw or {}))
    our_rec = Recorder(lambda: list(pr.get_masks(ours).values()))
    ours.compile(tf_keras.optimizers.SGD(0.05, momentum=0.9), "binary_crossentropy")
    ours.fit(x, y, batch_size=batch, epochs=epochs, shuffle=False, verbose=0,
             callbacks=[pr.UpdatePruningStep(), our_rec])

    steps = epochs * (-(-len(x) // batch))
    assert len(ref_rec.masks) == len(our_rec.masks) == steps
    for step, (a, b) in enumerate(zip(ref_rec.masks, our_rec.masks), start=1):
        assert len(a) == len(b)
        for i, (ma, mb) in enumerate(zip(a, b)):
            assert np.array_equal(ma, mb), (
                f"step {step} weight {i}: tfmot keeps {int(ma.sum())}, ours {int(mb.sum())}, "
                f"{int((ma != mb).sum())} differ")
    stripped_ref = S.strip_pruning(ref)
    stripped = pr.strip_pruning(ours)
    assert [l.name for l in stripped.layers] == [l.name for l in base2.layers]
    assert [l.name for l in stripped_ref.layers] == [l.name for l in base.layers]
    for a, b in zip(stripped_ref.get_weights(), stripped.get_weights()):
        assert a.shape == b.shape and np.array_equal(a, b)
    return ref_rec, our_rec, weights


def mask_change_steps(rec):
    return [i + 1 for i in range(1, len(rec.masks))
            if any(not np.array_equal(a, b) for a, b in zip(rec.masks[i - 1], rec.masks[i]))]


def test_schedules_match_tfmot_bit_for_bit():
    configs = [(0.0, 0.8, 0, 800, 3, 10), (0.1, 0.9, 5, 1000, 3, 1), (0.0, 0.5, 100, 100, 3, 1),
               (0.2, 0.97, 3, 777, 2, 7), (0.0, 0.9, 0, 1000, 1.5, 1)]
    steps = np.arange(-2, 1010)
    for n, cfg in enumerate(configs):
        a, b = S.PolynomialDecay(*cfg), pr.PolynomialDecay(*cfg)
        fn = tf.function(lambda s: a(s))
        for step in steps[::1 if n == 0 else 5]:
            should, sparsity = fn(tf.constant(step, tf.int64))
            assert bool(should) == b.should_prune(step), (cfg, step)
            assert np.float32(sparsity).tobytes() == b.sparsity(step).tobytes(), (cfg, step)
        for step in steps[::7]:  # the numpy form: eager TensorFlow's bits
            assert np.float32(a(tf.constant(step, tf.int64))[1]).tobytes() == b.sparsity_numpy(step).tobytes()
    for cfg in [(0.6, 0, -1, 100), (0.75, 10, 500, 7), (0.3, 4, 4, 1)]:
        a, b = S.ConstantSparsity(*cfg), pr.ConstantSparsity(*cfg)
        for step in range(-2, 700):
            should, sparsity = a(tf.constant(step, tf.int64))
            assert bool(should) == b.should_prune(step) and float(sparsity) == float(b.sparsity(step))
    for bad in [lambda: pr.PolynomialDecay(0.0, 1.0, 0, 10), lambda: pr.PolynomialDecay(0.0, 0.5, 0, -1),
                lambda: pr.ConstantSparsity(0.5, 10, 5), lambda: pr.ConstantSparsity(0.5, 0, frequency=0)]:
        with pytest.raises(ValueError):
            bad()


def test_numpy_form_pow_is_eager_tensorflow_pow():
    """The fallback's power is the C library's powf, as eager TensorFlow's scalar Pow: np.power
    is not (it differs at some inputs with exponent 2, and more on AVX-512 CPUs), and one bit
    of (1 - p) ** power becomes ~16 bits of a sparsity near 0.05."""
    rng = np.random.default_rng(7)
    for exponent in (3.0, 2.0, 1.5):
        e = np.float32(exponent)
        for v in rng.random(3000).astype(np.float32):
            want = np.float32(tf.math.pow(tf.constant(v), tf.constant(e)).numpy())
            assert pr._powf(v, e).tobytes() == want.tobytes(), (float(v), exponent)


def test_polynomial_decay_masks_equal_tfmot_every_step_1000_steps():
    x, y = data((10,), 4000, 1)
    ref_rec, our_rec, _ = run_pair(
        mlp, x, y, S.PolynomialDecay(0.0, 0.9, begin_step=0, end_step=800, frequency=10),
        pr.PolynomialDecay(0.0, 0.9, begin_step=0, end_step=800, frequency=10), epochs=4, batch=16)
    # The masks moved (pruning happened, at frequency steps only) and reached 90 %.
    changes = mask_change_steps(our_rec)
    assert changes and all(s % 10 == 0 and s <= 800 for s in changes)
    final = our_rec.masks[-1]
    assert abs(1 - final[1].mean() - 0.9) < 0.01  # the 32 x 64 kernel
    TestKeras3.tfmot_run = (ref_rec, _)  # reused below: weights and masks of a tfmot run


def test_constant_sparsity_conv1d_lstm_equal_tfmot():
    x, y = data((6, 4), 1200, 2)
    _, our_rec, _ = run_pair(conv_lstm, x, y, S.ConstantSparsity(0.6, begin_step=50, end_step=250, frequency=25),
                             pr.ConstantSparsity(0.6, begin_step=50, end_step=250, frequency=25),
                             epochs=4, batch=16)
    # Conv1D kernel, LSTM kernel and recurrent kernel, Dense kernel: 60 % pruned.
    assert len(our_rec.masks[-1]) == 4
    for m in our_rec.masks[-1]:
        assert int(m.sum()) == pr.kept_count(m.size, 0.6)


def test_block_1x16_equals_tfmot_block_size():
    x, y = data((10,), 3200, 3)
    _, our_rec, _ = run_pair(mlp_named, x, y, S.PolynomialDecay(0.0, 0.75, begin_step=0, end_step=300, frequency=20),
                             pr.PolynomialDecay(0.0, 0.75, begin_step=0, end_step=300, frequency=20),
                             epochs=2, batch=16, tfmot_kw={"block_size": (1, 16), "block_pooling_type": "AVG"},
                             our_kw={"block": (1, 16)}, layers=["b16_a", "b16_b"])
    k = our_rec.masks[-1][1]  # [32, 64]: every aligned 1 x 16 block all kept or all zero
    blocks = k.reshape(32, 4, 16)
    assert np.all((blocks.min(-1) == blocks.max(-1)))
    assert abs(1 - k.mean() - 0.75) < 0.01


def test_mask_rules():
    # Ties at the threshold keep every tied weight; k rounds half to even in float32.
    w = np.array([[0.5, -0.5, 0.5, 0.1], [0.2, -0.3, 0.5, 0.05]], np.float32)
    mask, thr = pr.magnitude_mask(w, 0.75)  # k = 2, threshold 0.5: four weights tie
    assert thr == np.float32(0.5) and int(mask.sum()) == 4
    assert pr.kept_count(10, 0.25) == 8 and pr.kept_count(10, 0.95) == 1  # 7.5 -> 8, 0.5 -> 0 -> 1
    assert pr.kept_count(6, 0.75) == 2  # 1.5 -> 2
    # m of n along the input dimension; a partial last group keeps at most m.
    w = np.arange(1, 31, dtype=np.float32).reshape(10, 3) * np.where(np.arange(30) % 3, 1, -1).reshape(10, 3)
    m = pr.m_of_n_mask(w, 2, 4)
    assert m.shape == w.shape
    for g in range(0, 8, 4):
        assert np.all(m[g:g + 4].sum(0) == 2) and np.all(m[g + 2:g + 4] == 1)
    assert np.all(m[8:10] == 1)
    # Block: aligned 1 x 16 panels, a partial edge panel averaged over its valid weights.
    rng = np.random.RandomState(0)
    w = rng.standard_normal((3, 40)).astype(np.float32)
    mask, _ = pr.magnitude_mask(w, 0.5, block=(1, 16))
    for lo, hi in ((0, 16), (16, 32), (32, 40)):
        assert np.all(mask[:, lo:hi].min(1) == mask[:, lo:hi].max(1))
    with pytest.raises(ValueError):
        pr.magnitude_mask(np.ones((3, 4, 5), np.float32), 0.5, block=(1, 16))


class TestKeras3:
    tfmot_run = None

    def test_keras3_masks_equal_tf_keras_on_the_same_weights(self):
        if TestKeras3.tfmot_run is None:
            pytest.skip("needs the tfmot run of test_polynomial_decay_masks_equal_tfmot_every_step_1000_steps")
        ref_rec, _ = TestKeras3.tfmot_run
        sched = pr.PolynomialDecay(0.0, 0.9, begin_step=0, end_step=800, frequency=10)
        m3 = pr.prune_low_magnitude(mlp(keras), sched)
        assert type(m3).__module__.startswith("keras")
        state = m3._tickinfer_pruning
        checked = 0
        for step in range(1, len(ref_rec.masks) + 1):
            if not sched.should_prune(step):
                continue
            for t, w in zip(state.targets, ref_rec.weights[step - 1]):
                t.var.assign(w)
            state.step = step
            state.update_masks()
            for t, want in zip(state.targets, ref_rec.masks[step - 1]):
                assert np.array_equal(t.mask, want), (step, t.key)
            checked += 1
        assert checked == 80

    def test_keras3_fit_block_and_m_of_n_then_strip_and_save(self, tmp_path):
        x, y = data((10,), 1024, 4)
        for kw, name in (({"block": (1, 16)}, "block"), ({"m_of_n": (2, 4)}, "m_of_n"), ({}, "unstructured")):
            keras.utils.set_random_seed(3)
            model = mlp(keras, widths=(64, 32))
            pm = pr.prune_low_magnitude(model, pr.PolynomialDecay(0.0, 0.8, 0, 100, frequency=10),
                                        layers=lambda l: l.name != model.layers[-1].name, **kw)
            pm.compile(keras.optimizers.SGD(0.05, momentum=0.9), "binary_crossentropy")
            pm.fit(x, y, batch_size=16, epochs=2, verbose=0, callbacks=[pr.UpdatePruningStep()])
            plain = pr.strip_pruning(pm)
            assert not hasattr(plain, "_tickinfer_pruning")
            assert [l.name for l in plain.layers] == [l.name for l in model.layers]
            assert [w.shape for w in plain.get_weights()] == [w.shape for w in model.get_weights()]
            path = tmp_path / f"{name}.keras"
            plain.save(path)
            back = keras.models.load_model(path, compile=False)
            rep = {r["layer"]: r for r in pr.sparsity_report(back)}
            k1 = back.layers[1].kernel.numpy()  # [64, 32]
            if name == "m_of_n":
                assert np.all((k1.reshape(16, 4, 32) != 0).sum(1) <= 2)
            else:
                assert abs(rep[back.layers[1].name]["sparsity"] - 0.8) < 0.01
            if name == "block":
                b = (k1 != 0).reshape(64, 2, 16)
                assert np.all(b.min(-1) == b.max(-1))
            assert rep[back.layers[-1].name]["zeros"] == 0  # the output layer was left dense
            np.testing.assert_allclose(back.predict(x[:64], verbose=0), plain.predict(x[:64], verbose=0))


def test_errors():
    model = conv_lstm(tf_keras)
    with pytest.raises(ValueError, match="2-dimensional"):
        pr.prune_low_magnitude(model, pr.ConstantSparsity(0.5, 0), block=(1, 16))
    with pytest.raises(ValueError, match="exclusive"):
        pr.prune_low_magnitude(model, pr.ConstantSparsity(0.5, 0), block=(1, 16), m_of_n=(2, 4))
    with pytest.raises(ValueError, match="no layer named"):
        pr.prune_low_magnitude(model, pr.ConstantSparsity(0.5, 0), layers=["nope"])
    plain = mlp(tf_keras)
    plain.compile("sgd", "mse")
    with pytest.raises(ValueError, match="prune_low_magnitude"):
        plain.fit(np.zeros((4, 10)), np.zeros(4), verbose=0, callbacks=[pr.UpdatePruningStep()])
