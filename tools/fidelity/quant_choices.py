"""Seeded random choices of quantization parameters and int8 data for the fidelity models.

What makes integer kernels disagree is rare on trained models and common here: scales that are
powers of two put the requantization's product exactly on a rounding tie (where single and
double rounding differ), filters hold -128 (where the AVX2 sign trick is not exact), zero points
span the whole int8 range, and accumulators reach both ends of the activation range.
"""
import numpy as np


def pow2_scale(rng, lo, hi):
    return np.float32(2.0 ** -int(rng.integers(lo, hi + 1)))


def log_scale(rng, lo, hi):
    return np.float32(np.exp(rng.uniform(np.log(lo), np.log(hi))))


def zero_point(rng):
    r = rng.random()
    if r < 0.15:
        return 0
    if r < 0.25:
        return int(rng.choice([-128, 127]))
    return int(rng.integers(-128, 128))


def int8_values(rng, shape, minus_128=None):
    """Uniform int8 with the extremes made likelier; -128 only where minus_128 allows it."""
    v = rng.integers(-127, 128, size=shape).astype(np.int8)
    edges = rng.random(shape) < 0.05
    v[edges] = rng.choice([-127, 127], size=int(edges.sum()))
    if minus_128 is None:
        minus_128 = rng.random() < 0.35
    if minus_128 and v.size:
        hits = rng.random(shape) < 0.04
        hits.flat[int(rng.integers(0, v.size))] = True
        v[hits] = -128
    return v


def input_rows(rng, rows, shape):
    """int8 model inputs: rows x shape, the whole range."""
    return rng.integers(-128, 128, size=(rows,) + tuple(shape)).astype(np.int8)


def float_rows(rng, rows, shape, allow_zero_row=True):
    """Float model inputs with a random spread; sometimes an all-zero row (hybrid kernels skip
    the product for it) and sometimes exact small integers."""
    spread = float(np.exp(rng.uniform(np.log(0.05), np.log(20.0))))
    x = (rng.standard_normal((rows,) + tuple(shape)) * spread).astype(np.float32)
    if rng.random() < 0.3:  # a skewed range: an asymmetric zero point far from 0, clipped codes
        x += np.float32(spread * rng.uniform(-2.0, 2.0))
    if rng.random() < 0.2:
        x = np.round(x).astype(np.float32)
    if allow_zero_row and rows > 1 and rng.random() < 0.15:
        x[int(rng.integers(0, rows))] = 0.0
    return x


def product_scales(rng, n_channels, depth, tie):
    """Input, per-channel filter and output scales for a requantizing product over `depth` terms,
    with the output scale sized to the typical accumulator (so outputs are spread over int8,
    some saturating). tie: every scale a power of two, so input * filter / output is exactly
    2^-k and many products land on .5."""
    typical = np.sqrt(max(depth, 1)) * 64.0 * 64.0
    if tie:
        si = pow2_scale(rng, 3, 9)
        sw = np.array([pow2_scale(rng, 5, 9) for _ in range(n_channels)], np.float32)
        k = int(np.round(np.log2(typical / 64.0))) + int(rng.integers(-2, 3))
        so = np.float32(si * float(sw.max()) * 2.0 ** max(k, 0))
        if rng.random() < 0.5:
            sw[:] = sw[0]
    else:
        si = log_scale(rng, 1e-3, 0.2)
        sw = np.array([log_scale(rng, 1e-4, 0.05) for _ in range(n_channels)], np.float32)
        so = np.float32(si * float(np.median(sw)) * typical / 64.0 * rng.uniform(0.3, 3.0))
    return si, sw, so


def int32_bias(rng, n, acc_scale):
    r = rng.random()
    if r < 0.1:
        return np.zeros(n, np.int32)
    span = int(acc_scale)
    return rng.integers(-span, span + 1, size=n).astype(np.int32)
