"""Magnitude pruning for Keras 3 and tf_keras: tfmot's schedules and masks, without tfmot.

tensorflow-model-optimization (tfmot) prunes tf_keras (Keras 2) models only, and its maintainers
plan no Keras 3 support. This module reproduces its magnitude pruning exactly (the same steps,
the same float32 sparsity, the same number of weights kept, the same masks) for models of either
Keras, and adds the two weight patterns the engine's sparse kernels run: 1 x 16 blocks and
m-of-n groups. Pure Python over Keras and numpy; training stays the user's own `model.fit`.

    from tickinfer import pruning
    sched = pruning.PolynomialDecay(0.0, 0.8, begin_step=0, end_step=2000, frequency=50)
    pm = pruning.prune_low_magnitude(model, sched, block=(1, 16))      # a clone; model untouched
    pm.compile(...)
    pm.fit(x, y, epochs=..., callbacks=[pruning.UpdatePruningStep()])  # the callback is required
    final = pruning.strip_pruning(pm)   # plain model: same layers, names and weight layout

Mechanism (identical in Keras 3 and tf_keras): the pruning state (masks, thresholds, the step)
lives beside the model, not in wrapper layers. `UpdatePruningStep` does, at the start of every
training batch, what tfmot's `PruneLowMagnitude` wrapper does at the start of its training call:
step += 1; if the schedule says so, recompute each mask from the current weights; then
weights *= mask. It masks again at the end of every epoch (as tfmot's callback does), at the
end of training and before evaluation/prediction. Pruned weights still get gradient updates
between batches (as in tfmot), so a weight can come back at the next pruning step.

Exactly as tfmot (checked by python/tests/test_pruning.py against tfmot 0.8.1, step by step):
- Step rule: the step is the count of training batches (1 at the first batch of the first fit;
  it continues across fit calls). Pruning happens when begin_step <= step, and step <= end_step
  or end_step < 0 (ConstantSparsity's -1: forever), and (step - begin_step) % frequency == 0.
  end_step itself is a pruning step when it is on the frequency grid; after end_step the masks
  stay fixed (still applied). With begin_step = 0 the first pruning step is `frequency`.
- PolynomialDecay sparsity, in float32 as TensorFlow computes it in a training step:
  p = min(1, max(0, f32(step - begin) / f32(end - begin))),
  s = f32(initial - final) * (1 - p) ** f32(power) + f32(final), evaluated by TensorFlow's own
  graph (a tf.function of the same ops) when TensorFlow is installed, since graph mode rounds
  differently from numpy in the last bit at some steps; numpy (eager TF's bits) otherwise.
- Kept weights: k = max(round_half_even(f32(size) * (1 - s)), 1); threshold = the k-th largest
  |w|; mask = |w| >= threshold, so ties at the threshold keep every tied weight (k or more).
- block=(h, w) (tfmot's block_size, 'AVG' pooling): |w| averaged per block (rows first, then
  columns, float32 sums in order), the rule above over the block means (size = number of
  blocks), whole blocks kept or zeroed. Blocks are aligned at multiples of (h, w); a partial edge
  block averages its valid weights. tfmot pools with SAME padding, which centres the windows
  when a dimension is not a multiple of the block but expands the mask from the origin; the two
  agree when the kernel's dimensions are multiples of the block (all 16-wide panels of the
  engine are), and this module's aligned form is the one the engine's panels need otherwise.
- Prunable weights: Dense, Conv1D and Conv2D `kernel`; LSTM, GRU and SimpleRNN `kernel` and
  `recurrent_kernel`. Biases, normalization and everything else are never pruned. Blocks and
  m-of-n need 2-D weights (a Conv kernel with a block is a ValueError, as in tfmot).

Beyond tfmot:
- block=(1, 16): one input row x 16 consecutive output columns of a Keras kernel [in, out],
  aligned at multiples of 16 (the engine's 16-wide weight panels), pooled by mean |w|.
- m_of_n=(2, 4): keep the 2 largest |w| of every 4 consecutive weights along the input
  dimension (rows of [in, out]; ties keep the lower index; a last partial group keeps at most m).
  tfmot's sparsity_m_by_n=(2, 4) is the same pattern (it counts zeros, this counts kept weights),
  which tfmot sets once, at step 1; here it is set at every pruning step of the schedule and the
  schedule's sparsity is not used (ConstantSparsity(0.5, begin_step=1, end_step=1, frequency=1)
  reproduces tfmot).

Not kept: the pruning state is not saved with the model (tfmot's wrappers save their masks);
strip before saving. With Keras 3, use the TensorFlow or PyTorch backend (under JAX, fit keeps
the weights outside the variables between batches), and steps_per_execution = 1.
"""
from __future__ import annotations

import importlib
import math
import warnings

import numpy as np

__all__ = ["PruningSchedule", "ConstantSparsity", "PolynomialDecay", "prune_low_magnitude",
           "UpdatePruningStep", "strip_pruning", "magnitude_mask", "m_of_n_mask", "get_masks",
           "sparsity_report", "PRUNABLE_WEIGHTS"]

_F32 = np.float32

# Layer class name -> (object holding the weights: "" the layer, "cell" its cell, attributes).
PRUNABLE_WEIGHTS = {
    "Dense": ("", ("kernel",)),
    "Conv1D": ("", ("kernel",)),
    "Conv2D": ("", ("kernel",)),
    "LSTM": ("cell", ("kernel", "recurrent_kernel")),
    "GRU": ("cell", ("kernel", "recurrent_kernel")),
    "SimpleRNN": ("cell", ("kernel", "recurrent_kernel")),
}

_STATE_ATTR = "_tickinfer_pruning"


# ------------------------------------------------------------------------------------------------
# Schedules
# ------------------------------------------------------------------------------------------------
class PruningSchedule:
    """When to prune (`should_prune(step)`) and at which sparsity (`sparsity(step)`, float32).
    `schedule(step)` returns both, like tfmot's schedules (there as tensors, here as Python)."""

    begin_step: int
    end_step: int
    frequency: int

    @staticmethod
    def _check_steps(begin_step, end_step, frequency, allow_forever):
        if begin_step < 0:
            raise ValueError("begin_step should be >= 0")
        if end_step == -1 and not allow_forever:
            raise ValueError("end_step cannot be -1.")
        if end_step != -1:
            if end_step < 0:
                raise ValueError("end_step can be -1 or >= 0")
            if end_step < begin_step:
                raise ValueError("begin_step should be <= end_step if end_step != -1")
        if frequency <= 0:
            raise ValueError("frequency should be > 0")

    @staticmethod
    def _check_sparsity(value, what):
        if not 0.0 <= value < 1.0:
            raise ValueError(f"{what} must be in range [0,1)")

    def should_prune(self, step: int) -> bool:
        step = int(step)
        in_range = step >= self.begin_step and (step <= self.end_step or self.end_step < 0)
        return in_range and (step - self.begin_step) % self.frequency == 0

    def sparsity(self, step: int) -> np.float32:
        raise NotImplementedError

    def __call__(self, step: int):
        return self.should_prune(step), self.sparsity(step)

    def get_config(self) -> dict:
        raise NotImplementedError

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config()["config"].items())
        return f"{type(self).__name__}({args})"


_TF_FUNCTIONS = {}


def _tf_polynomial_decay(schedule):
    """tfmot's float32 sparsity graph as a tf.function (the same ops, in the same order, so the
    same bits as tfmot computes inside a training step), or None without TensorFlow."""
    key = (schedule.initial_sparsity, schedule.final_sparsity, schedule.power,
           schedule.begin_step, schedule.end_step)
    if key in _TF_FUNCTIONS:
        return _TF_FUNCTIONS[key]
    try:
        import tensorflow as tf
    except ImportError:
        _TF_FUNCTIONS[key] = None
        return None
    initial, final, power, begin, end = key

    @tf.function(input_signature=[tf.TensorSpec([], tf.int64)])
    def fn(step):
        p = tf.math.minimum(1.0, tf.math.maximum(
            0.0, tf.math.divide(tf.dtypes.cast(step - begin, tf.float32), end - begin)))
        return tf.math.add(tf.math.multiply(initial - final, tf.math.pow(1 - p, power)), final)

    def run(step):
        return fn(tf.constant(step, tf.int64)).numpy()

    _TF_FUNCTIONS[key] = run
    return run


def _load_libm_powf():
    """The C library's powf, or None where ctypes cannot load it."""
    try:
        import ctypes
        import ctypes.util
        fn = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6").powf
    except (OSError, AttributeError):
        return None
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float, ctypes.c_float]
    return fn


_LIBM_POWF = _load_libm_powf()


def _powf(base, exponent):
    """float32 base ** exponent with the C library's powf, the call eager TensorFlow's Pow makes
    for a scalar. Not np.power: numpy's float32 power differs from powf in the last bit for some
    inputs (exponent 2 on AVX2 machines; more on AVX-512 ones, where it runs SVML), and
    (initial - final) * decay + final magnifies one bit of decay into many of the sparsity."""
    if _LIBM_POWF is None:
        return np.power(_F32(base), _F32(exponent))
    return _F32(_LIBM_POWF(float(base), float(exponent)))


class ConstantSparsity(PruningSchedule):
    """The same sparsity at every pruning step of [begin_step, end_step] (-1: no end)."""

    def __init__(self, target_sparsity, begin_step, end_step=-1, frequency=100):
        self._check_steps(begin_step, end_step, frequency, allow_forever=True)
        self._check_sparsity(target_sparsity, "target_sparsity")
        self.target_sparsity = target_sparsity
        self.begin_step, self.end_step, self.frequency = begin_step, end_step, frequency

    def sparsity(self, step):
        return _F32(self.target_sparsity)

    def get_config(self):
        return {"class_name": "ConstantSparsity",
                "config": {"target_sparsity": self.target_sparsity, "begin_step": self.begin_step,
                           "end_step": self.end_step, "frequency": self.frequency}}


class PolynomialDecay(PruningSchedule):
    """Sparsity from initial to final over [begin_step, end_step]: fast at first, then levelling
    off, s = final + (initial - final) * (1 - p)^power with p the clamped progress."""

    def __init__(self, initial_sparsity, final_sparsity, begin_step, end_step, power=3,
                 frequency=100):
        self._check_steps(begin_step, end_step, frequency, allow_forever=False)
        self._check_sparsity(initial_sparsity, "initial_sparsity")
        self._check_sparsity(final_sparsity, "final_sparsity")
        self.initial_sparsity, self.final_sparsity, self.power = initial_sparsity, final_sparsity, power
        self.begin_step, self.end_step, self.frequency = begin_step, end_step, frequency

    def sparsity(self, step):
        fn = _tf_polynomial_decay(self)
        if fn is not None:
            return _F32(fn(int(step)))
        return self.sparsity_numpy(step)

    def sparsity_numpy(self, step):
        """The formula in float32, as eager TensorFlow evaluates it (true division, libm powf: see
        _powf). Used when TensorFlow is not installed; a tf.function differs in the last bit at
        some steps (Grappler folds the division into a reciprocal multiply, and Pow runs
        otherwise), which can move k by one when size * (1 - s) sits on a rounding boundary."""
        with np.errstate(divide="ignore", invalid="ignore"):
            q = _F32(int(step) - self.begin_step) / _F32(self.end_step - self.begin_step)
        # NaN (0/0 when end_step == begin_step, at begin_step) propagates, as in TensorFlow.
        p = np.minimum(_F32(1.0), np.maximum(_F32(0.0), q))
        decay = _powf(_F32(1.0) - p, _F32(self.power))
        return _F32(_F32(self.initial_sparsity - self.final_sparsity) * decay) + _F32(self.final_sparsity)

    def get_config(self):
        return {"class_name": "PolynomialDecay",
                "config": {"initial_sparsity": self.initial_sparsity,
                           "final_sparsity": self.final_sparsity, "power": self.power,
                           "begin_step": self.begin_step, "end_step": self.end_step,
                           "frequency": self.frequency}}


# ------------------------------------------------------------------------------------------------
# Masks (numpy; the same numbers for either Keras)
# ------------------------------------------------------------------------------------------------
def kept_count(size: int, sparsity) -> int:
    """tfmot's k: max(round_half_even(f32(size) * (1 - sparsity)), 1), in float32."""
    k = np.rint(_F32(size) * (_F32(1.0) - _F32(sparsity)))
    return int(max(k, _F32(1.0)))


def _threshold_mask(values: np.ndarray, sparsity):
    """(threshold, mask) of tfmot's _update_mask: keep |v| >= the k-th largest |v|."""
    a = np.abs(values)
    k = kept_count(a.size, sparsity)
    flat = a.reshape(-1)
    threshold = np.partition(flat, a.size - k)[a.size - k]
    return threshold, (a >= threshold)


def _pool(a: np.ndarray, block, pooling: str) -> np.ndarray:
    """Pools |w| [H, W] over aligned (h, w) blocks: rows first, then columns, each a float32
    accumulation in order divided by the count of valid entries (or a max)."""
    for axis, size in ((0, block[0]), (1, block[1])):
        if size == 1:
            continue
        n = a.shape[axis]
        groups = -(-n // size)
        pad = groups * size - n
        padded = np.pad(a, [(0, pad), (0, 0)] if axis == 0 else [(0, 0), (0, pad)])
        shape = (groups, size, a.shape[1]) if axis == 0 else (a.shape[0], groups, size)
        parts = padded.reshape(shape)
        along = 1 if axis == 0 else 2
        if pooling == "MAX":
            a = parts.max(axis=along)  # |w| >= 0, so the zero padding never wins
            continue
        acc = np.zeros(tuple(s for i, s in enumerate(shape) if i != along), _F32)
        for j in range(size):
            acc += np.take(parts, j, axis=along)
        count = np.full(groups, size, _F32)
        count[-1] = size - pad
        a = acc / (count[:, None] if axis == 0 else count[None, :])
    return a


def magnitude_mask(weights, sparsity, block=None, pooling="AVG"):
    """(mask, threshold) for one weight at `sparsity`, as tfmot computes them. `block` (h, w)
    pools |w| per aligned block first (2-D weights only); None or (1, 1) is element-wise."""
    w = np.asarray(weights)
    a = np.abs(w).astype(_F32, copy=False)
    if block is None or tuple(block) == (1, 1):
        threshold, mask = _threshold_mask(a, sparsity)
        return mask.astype(w.dtype), w.dtype.type(threshold)
    if w.ndim != 2:
        raise ValueError("Block Sparsity can only be used for layers which have 2-dimensional "
                         f"weights (this one has shape {w.shape}).")
    if pooling not in ("AVG", "MAX"):
        raise ValueError(f"block pooling must be 'AVG' or 'MAX', not {pooling!r}")
    bh, bw = (int(block[0]), int(block[1]))
    pooled = _pool(a, (bh, bw), pooling)
    threshold, pmask = _threshold_mask(pooled, sparsity)
    mask = np.repeat(np.repeat(pmask, bh, axis=0), bw, axis=1)[:w.shape[0], :w.shape[1]]
    return mask.astype(w.dtype), w.dtype.type(threshold)


def m_of_n_mask(weights, m: int, n: int):
    """Keeps the m largest |w| of every n consecutive weights along the input dimension (axis 0
    of a Keras kernel [in, out]); ties keep the lower input index, a last partial group keeps at
    most m. The mask of tfmot's sparsity_m_by_n=(n - m, n)."""
    w = np.asarray(weights)
    if w.ndim != 2:
        raise ValueError(f"m_of_n needs 2-D weights (this one has shape {w.shape}).")
    if not 0 < m < n:
        raise ValueError(f"m_of_n=({m}, {n}): need 0 < m < n")
    rows, cols = w.shape
    groups = -(-rows // n)
    a = np.full((groups * n, cols), -1.0, np.float64)  # padding loses against any |w| >= 0
    a[:rows] = np.abs(w)
    a = a.reshape(groups, n, cols)
    order = np.argsort(-a, axis=1, kind="stable")  # descending |w|, lower index first on ties
    keep = np.zeros_like(a, dtype=bool)
    np.put_along_axis(keep, order[:, :m, :], True, axis=1)
    keep &= a >= 0
    return keep.reshape(groups * n, cols)[:rows].astype(w.dtype)


# ------------------------------------------------------------------------------------------------
# Models
# ------------------------------------------------------------------------------------------------
def _keras_of(model):
    """The keras module (keras or tf_keras) the model belongs to."""
    for cls in type(model).__mro__:
        root = cls.__module__.split(".")[0]
        if root in ("keras", "tf_keras"):
            return importlib.import_module(root)
    raise TypeError(f"not a Keras model: {type(model)}")


def _walk(model):
    for layer in model.layers:
        if hasattr(layer, "layers") and type(layer).__name__ not in PRUNABLE_WEIGHTS:
            yield from _walk(layer)
        else:
            yield layer


def _prunable_vars(layer):
    """[(attribute, variable)] of a layer's prunable weights; [] when it has none."""
    spec = PRUNABLE_WEIGHTS.get(type(layer).__name__)
    if spec is None:
        return []
    holder = getattr(layer, spec[0]) if spec[0] else layer
    return [(attr, getattr(holder, attr)) for attr in spec[1] if getattr(holder, attr, None) is not None]


def _read(var) -> np.ndarray:
    return np.array(var.numpy())


class _Target:
    def __init__(self, layer_name, attr, var):
        self.layer_name, self.attr, self.var = layer_name, attr, var
        value = _read(var)
        self.mask = np.ones(value.shape, value.dtype)
        self.threshold = value.dtype.type(0)

    @property
    def key(self):
        return f"{self.layer_name}/{self.attr}"


class PruningState:
    """Masks, thresholds and the step of one pruned model (what tfmot keeps in its wrappers)."""

    def __init__(self, schedule, block, pooling, m_of_n, targets):
        self.schedule, self.block, self.pooling, self.m_of_n = schedule, block, pooling, m_of_n
        self.targets = targets
        self.step = -1  # tfmot's pruning_step starts at -1; UpdatePruningStep makes it 0

    def update_masks(self):
        sparsity = self.schedule.sparsity(self.step)
        for t in self.targets:
            w = _read(t.var)
            if self.m_of_n is not None:
                t.mask, t.threshold = m_of_n_mask(w, *self.m_of_n), w.dtype.type(0)
            else:
                t.mask, t.threshold = magnitude_mask(w, sparsity, self.block, self.pooling)

    def apply_masks(self):
        for t in self.targets:
            w = _read(t.var)
            t.var.assign((w * t.mask).astype(w.dtype))

    def on_train_batch(self):
        self.step += 1
        if self.schedule.should_prune(self.step):
            self.update_masks()
        self.apply_masks()


def _select(model, layers):
    chosen = []
    all_layers = list(_walk(model))
    if layers is None:
        chosen = [l for l in all_layers if _prunable_vars(l)]
    elif callable(layers):
        chosen = [l for l in all_layers if layers(l)]
    else:
        wanted = list(layers)
        by_name = {l.name: l for l in all_layers}
        missing = [n for n in wanted if n not in by_name]
        if missing:
            raise ValueError(f"no layer named {missing} in the model")
        chosen = [by_name[n] for n in wanted]
    for l in chosen:
        if not _prunable_vars(l):
            raise ValueError(f"layer '{l.name}' ({type(l).__name__}) has no prunable weights; "
                             f"prunable: {sorted(PRUNABLE_WEIGHTS)}")
    return chosen


def prune_low_magnitude(model, schedule: PruningSchedule, block=None, m_of_n=None, layers=None,
                        block_pooling="AVG"):
    """A clone of `model` (same Keras, same layer names and weights) whose prunable weights are
    masked during training by `UpdatePruningStep`. `layers`: None (every prunable layer), layer
    names, or a predicate on layers. `block` (h, w) or `m_of_n` (m, n) select the pattern."""
    if not isinstance(schedule, PruningSchedule):
        raise TypeError("schedule must be a ConstantSparsity or PolynomialDecay")
    if block is not None and m_of_n is not None:
        raise ValueError("block and m_of_n are exclusive")
    if block is not None:
        block = (int(block[0]), int(block[1]))
        if min(block) < 1:
            raise ValueError(f"block {block}: sizes must be >= 1")
        if block == (1, 1):
            block = None
    if m_of_n is not None:
        m_of_n = (int(m_of_n[0]), int(m_of_n[1]))
        if not 0 < m_of_n[0] < m_of_n[1]:
            raise ValueError(f"m_of_n={m_of_n}: need 0 < m < n")
    _keras_of(model)
    clone = _clone(model)
    targets = []
    for layer in _select(clone, layers):
        for attr, var in _prunable_vars(layer):
            if (block is not None or m_of_n is not None) and len(var.shape) != 2:
                raise ValueError(f"layer '{layer.name}' {attr} has shape {tuple(var.shape)}: "
                                 "block and m_of_n pruning need 2-dimensional weights")
            targets.append(_Target(layer.name, attr, var))
    object.__setattr__(clone, _STATE_ATTR, PruningState(schedule, block, block_pooling, m_of_n, targets))
    return clone


def _clone(model):
    """A fresh, uncompiled model of the same Keras with the same config and weights."""
    try:
        clone = type(model).from_config(model.get_config())
    except Exception:  # custom layers or a config that does not round-trip: Keras' own cloner
        clone = _keras_of(model).models.clone_model(model)
    clone.set_weights(model.get_weights())
    return clone


def _state(model, required=True):
    state = getattr(model, _STATE_ATTR, None)
    if state is None and required:
        raise ValueError("this model was not made by tickinfer.pruning.prune_low_magnitude")
    return state


class UpdatePruningStep:
    """The callback that drives pruning in `fit` (required, as tfmot's callback of that name).
    Works as a Keras 3 and a tf_keras callback (it implements both callback interfaces)."""

    def __init__(self):
        self.model = None
        self.params = {}
        self._supports_tf_logs = False
        self._state = None

    # Callback plumbing shared by Keras 3 and tf_keras.
    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def _implements_train_batch_hooks(self):
        return True

    def _implements_test_batch_hooks(self):
        return False

    def _implements_predict_batch_hooks(self):
        return False

    def on_train_begin(self, logs=None):
        self._state = _state(self.model)
        spe = getattr(self.model, "steps_per_execution", None)
        if spe is None:
            spe = getattr(self.model, "_steps_per_execution", None)
        try:
            spe = int(spe.numpy() if hasattr(spe, "numpy") else spe) if spe is not None else 1
        except (TypeError, ValueError):
            spe = 1
        if spe != 1:
            raise ValueError(f"pruning needs steps_per_execution = 1 (the model has {spe})")
        if self._state.step == -1:
            self._state.step = 0

    def on_train_batch_begin(self, batch, logs=None):
        self._state.on_train_batch()

    def on_epoch_end(self, epoch, logs=None):
        self._state.apply_masks()

    def on_train_end(self, logs=None):
        self._state.apply_masks()

    def on_test_begin(self, logs=None):
        state = _state(self.model, required=False)
        if state is not None:
            state.apply_masks()

    on_predict_begin = on_test_begin

    def _noop(self, *args, **kwargs):
        pass

    on_epoch_begin = on_train_batch_end = on_test_end = on_predict_end = _noop
    on_batch_begin = on_batch_end = _noop
    on_test_batch_begin = on_test_batch_end = on_predict_batch_begin = on_predict_batch_end = _noop


def get_masks(model) -> dict:
    """{"layer/attribute": mask} of a pruned (not yet stripped) model."""
    return {t.key: t.mask.copy() for t in _state(model).targets}


def strip_pruning(model):
    """A plain model of the same Keras: the same layers, names and weight layout as the unpruned
    model, with the masks applied (zeros stored densely). Saves as an ordinary .keras/.h5."""
    state = _state(model, required=False)
    if state is not None:
        if state.step <= 0:
            warnings.warn("strip_pruning: no training step ran with UpdatePruningStep, so nothing "
                          "was pruned", stacklevel=2)
        state.apply_masks()
    return _clone(model)


def sparsity_report(model) -> list:
    """Zeros per prunable weight of any model: [{layer, weight, shape, size, zeros, sparsity}]."""
    rows = []
    for layer in _walk(model):
        for attr, var in _prunable_vars(layer):
            w = _read(var)
            zeros = int(np.count_nonzero(w == 0))
            rows.append({"layer": layer.name, "weight": attr, "shape": list(w.shape),
                         "size": int(w.size), "zeros": zeros,
                         "sparsity": zeros / w.size if w.size else math.nan})
    return rows
