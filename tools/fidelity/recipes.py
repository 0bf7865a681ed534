"""One random model per call, by op family and precision (int8, hybrid, float).

Each recipe returns (writer, ops, inputs): a finished ModelWriter, the op names, and the input
rows (one numpy array per model input, rows first). Shapes, options, weights, biases, scales and
zero points are drawn from `rng`; tools/make_fidelity_models.py runs the result through TFLite.
"""
import numpy as np
from ai_edge_litert import schema_py_generated as S

from fidelity import quant_choices as qc
from fidelity.lstm_recipe import hybrid_lstm, integer_lstm
from fidelity.tflite_writer import F32, I32, I8, ModelWriter, block_sparsity, random_sparsity

OP = S.BuiltinOperator
OPT = S.BuiltinOptions
ACTS = [S.ActivationFunctionType.NONE, S.ActivationFunctionType.RELU, S.ActivationFunctionType.RELU6,
        S.ActivationFunctionType.RELU_N1_TO_1]


def _act(rng):
    return int(rng.choice(ACTS)) if rng.random() < 0.6 else S.ActivationFunctionType.NONE


def _weights(rng, kind, shape):
    """int8 weights; -128 only for full-int8 models. A hybrid filter keeps to the quantization
    spec's symmetric [-127, 127] (what the converter writes): TFLite's x86 hybrid kernel multiplies
    with the SSE sign trick (maddubs(|x|, sign(w, x))), which turns -128 against a negative input
    into -128 x |x|, so a hybrid -128 gives TFLite's SSE answer, not the product."""
    return qc.int8_values(rng, shape, minus_128=None if kind == "int8" else False)


def _rows(rng):
    return int(rng.integers(2, 5))


def _conv_out(n, k, stride, dil, same):
    eff = (k - 1) * dil + 1
    return (n + stride - 1) // stride if same else (n - eff + stride) // stride


# ---- FULLY_CONNECTED ---------------------------------------------------------------------------

def fully_connected(rng, kind, sparse=None):
    """sparse: None (dense), "block" (1x16 blocks stored sparse on the filter) or "densify"
    (element-wise CSR behind a DENSIFY op)."""
    w = ModelWriter()
    depth = int(rng.choice([16, 32, 48, 64])) if sparse == "block" else int(rng.integers(1, 70))
    units = int(rng.integers(1, 40))
    batch = int(rng.choice([1, 1, 1, 2, 3, 5, 8, 32]))
    # A Keras Dense over a sequence converts to FULLY_CONNECTED on [1, T, depth] with keep_num_dims
    # and, where use_bias=False (attention projections), no bias operand.
    three_d = rng.random() < 0.3
    has_bias = rng.random() > 0.25
    xshape = [1, batch, depth] if three_d else [batch, depth]
    yshape = [1, batch, units] if three_d else [batch, units]
    per_channel = rng.random() < 0.5
    weights = _weights(rng, kind, (units, depth))
    if sparse == "block":
        keep = rng.random((units, depth // 16)) < rng.uniform(0.1, 0.6)
        weights *= np.repeat(keep, 16, axis=1).astype(np.int8)
    elif sparse == "densify":
        weights *= (rng.random((units, depth)) < rng.uniform(0.05, 0.4)).astype(np.int8)
    rows = _rows(rng)
    act = _act(rng)
    ops = []
    if kind == "int8":
        si, sw, so = qc.product_scales(rng, units if per_channel else 1, depth, rng.random() < 0.4)
        zi, zo = qc.zero_point(rng), qc.zero_point(rng)
        x = w.tensor("x", xshape, I8, si, zi)
        bias_scale = (si * sw).astype(np.float32)
        b = w.tensor("bias", [units], I32, bias_scale, np.zeros(len(sw), np.int64),
                     data=qc.int32_bias(rng, units, 64 * 64 * np.sqrt(depth))) if has_bias else -1
        y = w.tensor("y", yshape, I8, so, zo)
        inputs = [qc.input_rows(rng, rows, xshape)]
    else:
        sw = np.array([qc.log_scale(rng, 1e-4, 0.05) for _ in range(units if per_channel else 1)], np.float32)
        x = w.tensor("x", xshape, F32)
        b = w.tensor("bias", [units], F32,
                     data=(rng.standard_normal(units) * rng.uniform(0, 2)).astype(np.float32)) if has_bias else -1
        y = w.tensor("y", yshape, F32)
        inputs = [qc.float_rows(rng, rows, xshape)]
    if kind == "float":
        wvals = (weights.astype(np.float32) * sw[:, None] if per_channel else weights * sw[0]).astype(np.float32)
        f = w.tensor("w", [units, depth], F32, data=wvals)
    elif sparse == "block":
        sp, vals = block_sparsity(weights, 16)
        f = w.tensor("w", [units, depth], I8, sw, np.zeros(len(sw), np.int64), raw=vals.tobytes(), sparsity=sp)
        ops.append("sparse-1x16")
    elif sparse == "densify":
        sp, vals = random_sparsity(weights)
        packed = w.tensor("w_sparse", [units, depth], I8, sw, np.zeros(len(sw), np.int64), raw=vals.tobytes(),
                          sparsity=sp)
        f = w.tensor("w", [units, depth], I8, sw, np.zeros(len(sw), np.int64))
        w.op(OP.DENSIFY, [packed], [f])
        ops.append("DENSIFY")
    else:
        f = w.tensor("w", [units, depth], I8, sw, np.zeros(len(sw), np.int64), data=weights)
    opts = S.FullyConnectedOptionsT()
    opts.fusedActivationFunction = act
    opts.asymmetricQuantizeInputs = bool(kind == "hybrid" and rng.random() < 0.5)
    opts.keepNumDims = three_d
    w.op(OP.FULLY_CONNECTED, [x, f, b], [y], OPT.FullyConnectedOptions, opts)
    ops.append("FULLY_CONNECTED")
    w.inputs, w.outputs = [x], [y]
    return w, ops, inputs


def float_then_hybrid_fc(rng):
    """A float FULLY_CONNECTED feeding a dynamic-range one, as a Keras Dense before an attention
    projection converts: the hybrid op's per-row input quantization turns any difference in the
    float op's sums into a whole quantization step, so the float op must sum as TFLite does."""
    w = ModelWriter()
    batch, depth, mid, units = int(rng.choice([1, 2, 5, 8, 32])), int(rng.integers(2, 40)), int(rng.integers(5, 70)), \
        int(rng.integers(1, 40))
    x = w.tensor("x", [1, batch, depth], F32)
    w1 = w.tensor("w1", [mid, depth], F32, data=(rng.standard_normal((mid, depth)) * 0.3).astype(np.float32))
    b1 = w.tensor("b1", [mid], F32, data=(rng.standard_normal(mid) * 0.1).astype(np.float32))
    h = w.tensor("h", [1, batch, mid], F32)
    per_channel = rng.random() < 0.7
    sw = np.array([qc.log_scale(rng, 1e-4, 0.05) for _ in range(units if per_channel else 1)], np.float32)
    w2 = w.tensor("w2", [units, mid], I8, sw, np.zeros(len(sw), np.int64), data=_weights(rng, "hybrid", (units, mid)))
    y = w.tensor("y", [1, batch, units], F32)
    o1 = S.FullyConnectedOptionsT()
    o1.keepNumDims = True
    w.op(OP.FULLY_CONNECTED, [x, w1, b1], [h], OPT.FullyConnectedOptions, o1)
    o2 = S.FullyConnectedOptionsT()
    o2.keepNumDims = True
    o2.asymmetricQuantizeInputs = bool(rng.random() < 0.7)
    w.op(OP.FULLY_CONNECTED, [h, w2, -1], [y], OPT.FullyConnectedOptions, o2)
    w.inputs, w.outputs = [x], [y]
    return w, ["FULLY_CONNECTED", "FULLY_CONNECTED"], [qc.float_rows(rng, _rows(rng), [1, batch, depth])]


# ---- CONV_2D / DEPTHWISE_CONV_2D ---------------------------------------------------------------

def conv(rng, kind, depthwise=False):
    w = ModelWriter()
    while True:
        h, wd = int(rng.integers(1, 9)), int(rng.integers(1, 9))
        kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        sh, sw_ = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        dh, dw = (1, 1) if rng.random() < 0.7 else (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
        if dh > 1 or dw > 1:
            sh = sw_ = 1  # TFLite needs stride 1 with dilation
        same = rng.random() < 0.5
        oh, ow = _conv_out(h, kh, sh, dh, same), _conv_out(wd, kw, sw_, dw, same)
        if oh >= 1 and ow >= 1:
            break
    cin = int(rng.integers(1, 9))
    mult = int(rng.integers(1, 3)) if depthwise else 1
    # A third of the plain convolutions get 9 to 40 output channels: the VNNI implicit GEMM
    # tiles 16 channels per vector and two vectors per tile, so a lone last group and pairs of
    # groups both come up.
    if depthwise:
        cout = cin * mult
    else:
        cout = int(rng.integers(1, 9)) if rng.random() < 0.67 else int(rng.integers(9, 41))
    fshape = [1, kh, kw, cout] if depthwise else [cout, kh, kw, cin]
    axis = 3 if depthwise else 0
    depth = kh * kw * (1 if depthwise else cin)
    weights = _weights(rng, kind, tuple(fshape))
    rows = _rows(rng)
    if kind == "int8":
        si, sw, so = qc.product_scales(rng, cout, depth, rng.random() < 0.4)
        if rng.random() < 0.3:
            sw[:] = sw[0]
        zi, zo = qc.zero_point(rng), qc.zero_point(rng)
        x = w.tensor("x", [1, h, wd, cin], I8, si, zi)
        b = w.tensor("bias", [cout], I32, (si * sw).astype(np.float32), np.zeros(cout, np.int64),
                     data=qc.int32_bias(rng, cout, 64 * 64 * np.sqrt(depth)))
        y = w.tensor("y", [1, oh, ow, cout], I8, so, zo)
        inputs = [qc.input_rows(rng, rows, [1, h, wd, cin])]
    else:
        sw = np.array([qc.log_scale(rng, 1e-4, 0.05) for _ in range(cout)], np.float32)
        x = w.tensor("x", [1, h, wd, cin], F32)
        b = w.tensor("bias", [cout], F32, data=(rng.standard_normal(cout) * rng.uniform(0, 2)).astype(np.float32))
        y = w.tensor("y", [1, oh, ow, cout], F32)
        inputs = [qc.float_rows(rng, rows, [1, h, wd, cin])]
    if kind == "float":
        shape = [1, 1, 1, cout] if depthwise else [cout, 1, 1, 1]
        f = w.tensor("w", fshape, F32, data=(weights.astype(np.float32) * sw.reshape(shape)).astype(np.float32))
    else:
        f = w.tensor("w", fshape, I8, sw, np.zeros(cout, np.int64), axis=axis, data=weights)
    pad = S.Padding.SAME if same else S.Padding.VALID
    if depthwise:
        o = S.DepthwiseConv2DOptionsT()
        o.depthMultiplier = mult
        code, otype, name = OP.DEPTHWISE_CONV_2D, OPT.DepthwiseConv2DOptions, "DEPTHWISE_CONV_2D"
    else:
        o = S.Conv2DOptionsT()
        code, otype, name = OP.CONV_2D, OPT.Conv2DOptions, "CONV_2D"
    o.padding, o.strideH, o.strideW = pad, sh, sw_
    o.dilationHFactor, o.dilationWFactor = dh, dw
    o.fusedActivationFunction = _act(rng)
    w.op(code, [x, f, b], [y], otype, o)
    w.inputs, w.outputs = [x], [y]
    return w, [name], inputs


# ---- ADD / SUB / MUL / SQUARED_DIFFERENCE ------------------------------------------------------

def binary(rng, kind, code):
    w = ModelWriter()
    shape = [1, int(rng.integers(1, 5)), int(rng.integers(1, 5)), int(rng.integers(1, 9))]
    r = rng.random()
    # The other operand: the same shape, a channel vector, a row vector, or one value (an
    # attention's scale, a layer norm's epsilon: tickinfer tables a constant one).
    other = shape if r < 0.45 else ([1, 1, 1, shape[3]] if r < 0.7 else ([1, shape[1], 1, 1] if r < 0.85 else [1]))
    const_other = rng.random() < 0.4
    rows = _rows(rng)
    act = _act(rng) if code != OP.SQUARED_DIFFERENCE else None  # its options have no activation
    if kind == "int8":
        s1, s2 = qc.log_scale(rng, 1e-3, 0.5), qc.log_scale(rng, 1e-3, 0.5)
        if rng.random() < 0.3:
            s1, s2 = qc.pow2_scale(rng, 1, 9), qc.pow2_scale(rng, 1, 9)
        if code in (OP.ADD, OP.SUB):
            so = np.float32(max(s1, s2) * 128 * rng.uniform(0.01, 0.03) * 2)
        elif code == OP.SQUARED_DIFFERENCE:
            so = np.float32((max(s1, s2) * 128) ** 2 * rng.uniform(0.005, 0.05))
        else:
            so = np.float32(s1 * s2 * 128 * 128 / 128 * rng.uniform(0.3, 2.0))
        if rng.random() < 0.2:
            so = qc.pow2_scale(rng, 0, 12)
        a = w.tensor("a", shape, I8, s1, qc.zero_point(rng))
        bdata = qc.int8_values(rng, tuple(other), minus_128=True) if const_other else None
        b = w.tensor("b", other, I8, s2, qc.zero_point(rng), data=bdata)
        y = w.tensor("y", shape, I8, so, qc.zero_point(rng))
        inputs = [qc.input_rows(rng, rows, shape)]
        if not const_other:
            inputs.append(qc.input_rows(rng, rows, other))
    else:
        a = w.tensor("a", shape, F32)
        bdata = qc.float_rows(rng, 1, other)[0] if const_other else None
        b = w.tensor("b", other, F32, data=bdata)
        y = w.tensor("y", shape, F32)
        inputs = [qc.float_rows(rng, rows, shape)]
        if not const_other:
            inputs.append(qc.float_rows(rng, rows, other))
    if code == OP.ADD:
        o, otype, name = S.AddOptionsT(), OPT.AddOptions, "ADD"
    elif code == OP.SUB:
        o, otype, name = S.SubOptionsT(), OPT.SubOptions, "SUB"
    elif code == OP.SQUARED_DIFFERENCE:
        o, otype, name = S.SquaredDifferenceOptionsT(), OPT.SquaredDifferenceOptions, "SQUARED_DIFFERENCE"
    else:
        o, otype, name = S.MulOptionsT(), OPT.MulOptions, "MUL"
    if act is not None:
        o.fusedActivationFunction = act
    w.op(code, [a, b], [y], otype, o)
    w.inputs = [a] if const_other else [a, b]
    w.outputs = [y]
    return w, [name], inputs


# ---- LOGISTIC / TANH / SOFTMAX -----------------------------------------------------------------

def unary(rng, kind, code):
    w = ModelWriter()
    shape = [1, int(rng.integers(1, 4)), int(rng.integers(1, 33))]
    rows = _rows(rng)
    name = {OP.LOGISTIC: "LOGISTIC", OP.TANH: "TANH", OP.SOFTMAX: "SOFTMAX"}[code]
    if kind == "int8":
        si = qc.log_scale(rng, 1e-3, 0.2) if rng.random() < 0.7 else qc.pow2_scale(rng, 2, 9)
        x = w.tensor("x", shape, I8, si, qc.zero_point(rng))
        out_q = (1.0 / 128.0, 0) if code == OP.TANH else (1.0 / 256.0, -128)
        y = w.tensor("y", shape, I8, np.float32(out_q[0]), out_q[1])
        inputs = [qc.input_rows(rng, rows, shape)]
    else:
        x = w.tensor("x", shape, F32)
        y = w.tensor("y", shape, F32)
        inputs = [qc.float_rows(rng, rows, shape)]
    if code == OP.SOFTMAX:
        o = S.SoftmaxOptionsT()
        o.beta = float(rng.choice([1.0, 1.0, 0.5, 2.0, float(rng.uniform(0.1, 3.0))]))
        w.op(code, [x], [y], OPT.SoftmaxOptions, o)
    else:
        w.op(code, [x], [y])
    w.inputs, w.outputs = [x], [y]
    return w, [name], inputs


# ---- BATCH_MATMUL ------------------------------------------------------------------------------

def batch_matmul(rng, kind):
    w = ModelWriter()
    m, k, n = int(rng.integers(1, 9)), int(rng.integers(1, 33)), int(rng.integers(1, 17))
    if rng.random() < 0.3:  # a long k (an attention's keys): tickinfer's dot-product form
        k = int(rng.integers(32, 97))
    nb = int(rng.choice([1, 1, 2]))
    adj_x, adj_y = bool(rng.random() < 0.3), bool(rng.random() < 0.3)
    const_rhs = kind == "hybrid" or rng.random() < 0.4
    lhs_shape = [nb, k, m] if adj_x else [nb, m, k]
    rhs_shape = ([n, k] if adj_y else [k, n]) if const_rhs else ([nb, n, k] if adj_y else [nb, k, n])
    rows = _rows(rng)
    if kind == "int8":
        si, sw, so = qc.product_scales(rng, 1, k, rng.random() < 0.4)
        a = w.tensor("a", lhs_shape, I8, si, qc.zero_point(rng))
        zr = 0 if rng.random() < 0.5 else qc.zero_point(rng)
        rdata = qc.int8_values(rng, tuple(rhs_shape)) if const_rhs else None
        b = w.tensor("b", rhs_shape, I8, sw[0], zr, data=rdata)
        y = w.tensor("y", [nb, m, n], I8, so, qc.zero_point(rng))
        inputs = [qc.input_rows(rng, rows, lhs_shape)]
        if not const_rhs:
            inputs.append(qc.input_rows(rng, rows, rhs_shape))
    elif kind == "hybrid":
        sw = qc.log_scale(rng, 1e-4, 0.05)
        a = w.tensor("a", lhs_shape, F32)
        b = w.tensor("b", rhs_shape, I8, sw, 0, data=_weights(rng, kind, tuple(rhs_shape)))
        y = w.tensor("y", [nb, m, n], F32)
        inputs = [qc.float_rows(rng, rows, lhs_shape)]
    else:
        a = w.tensor("a", lhs_shape, F32)
        rdata = qc.float_rows(rng, 1, rhs_shape)[0] if const_rhs else None
        b = w.tensor("b", rhs_shape, F32, data=rdata)
        y = w.tensor("y", [nb, m, n], F32)
        inputs = [qc.float_rows(rng, rows, lhs_shape)]
        if not const_rhs:
            inputs.append(qc.float_rows(rng, rows, rhs_shape))
    o = S.BatchMatMulOptionsT()
    o.adjX, o.adjY = adj_x, adj_y
    o.asymmetricQuantizeInputs = bool(kind == "hybrid" and rng.random() < 0.5)
    w.op(OP.BATCH_MATMUL, [a, b], [y], OPT.BatchMatMulOptions, o)
    w.inputs = [a] if const_rhs else [a, b]
    w.outputs = [y]
    return w, ["BATCH_MATMUL"], inputs


# ---- which recipes each precision draws from --------------------------------------------------

def families(kind):
    """(name, weight, recipe) for a precision; the weights favour the ops with the most arithmetic."""
    if kind == "int8":
        return [
            ("fc", 4, lambda r: fully_connected(r, kind)),
            ("fc_block16", 3, lambda r: fully_connected(r, kind, "block")),
            ("fc_densify", 1, lambda r: fully_connected(r, kind, "densify")),
            ("conv2d", 3, lambda r: conv(r, kind)),
            ("depthwise", 2, lambda r: conv(r, kind, depthwise=True)),
            ("add", 1, lambda r: binary(r, kind, OP.ADD)),
            ("sub", 1, lambda r: binary(r, kind, OP.SUB)),
            ("mul", 1, lambda r: binary(r, kind, OP.MUL)),
            ("squared_difference", 1, lambda r: binary(r, kind, OP.SQUARED_DIFFERENCE)),
            ("logistic", 1, lambda r: unary(r, kind, OP.LOGISTIC)),
            ("tanh", 1, lambda r: unary(r, kind, OP.TANH)),
            ("softmax", 1, lambda r: unary(r, kind, OP.SOFTMAX)),
            ("batch_matmul", 2, lambda r: batch_matmul(r, kind)),
            ("lstm", 2, integer_lstm),
        ]
    if kind == "hybrid":
        return [
            ("fc", 4, lambda r: fully_connected(r, kind)),
            ("fc_block16", 2, lambda r: fully_connected(r, kind, "block")),
            ("conv2d", 2, lambda r: conv(r, kind)),
            ("depthwise", 1, lambda r: conv(r, kind, depthwise=True)),
            ("float_then_hybrid_fc", 2, float_then_hybrid_fc),
            ("lstm", 2, hybrid_lstm),
            # No BATCH_MATMUL: tickinfer refuses a dynamic-range BATCH_MATMUL (int8 constant
            # operand) by name rather than computing it differently from TFLite.
        ]
    return [
        ("fc", 3, lambda r: fully_connected(r, kind)),
        ("conv2d", 2, lambda r: conv(r, kind)),
        ("depthwise", 1, lambda r: conv(r, kind, depthwise=True)),
        ("add", 1, lambda r: binary(r, kind, OP.ADD)),
        ("mul", 1, lambda r: binary(r, kind, OP.MUL)),
        ("logistic", 1, lambda r: unary(r, kind, OP.LOGISTIC)),
        ("tanh", 1, lambda r: unary(r, kind, OP.TANH)),
        ("softmax", 1, lambda r: unary(r, kind, OP.SOFTMAX)),
        ("batch_matmul", 1, lambda r: batch_matmul(r, kind)),
    ]
