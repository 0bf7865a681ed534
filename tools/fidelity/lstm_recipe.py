"""Random UNIDIRECTIONAL_SEQUENCE_LSTM models in TFLite's integer (8x8_16) form, laid out as the
TFLiteConverter writes a full-int8 Keras LSTM: int8 input and weights (per tensor), int32 gate
biases, an int8 output-state and an int16 cell-state variable (power-of-two scale), four float
intermediates without quantization (no layer norm: TFLite's default gate scales) and the int8
effective-hidden-scale intermediate; plus the variants the 8x8_16 kernel takes: CIFG (no input
gate), peepholes (int16 cell-to-gate weights), a projection (int8 weights, int32 bias), cell and
projection clipping. One model = one sequence of T steps, the state zeroed before each row.
"""
import numpy as np
from ai_edge_litert import schema_py_generated as S

from fidelity import quant_choices as qc
from fidelity.tflite_writer import F32, I16, I32, I8, ModelWriter

OP = S.BuiltinOperator


def integer_lstm(rng, variant=None, projection_bias=None, projection_clip=None):
    w = ModelWriter()
    steps, n_in, units = int(rng.integers(1, 9)), int(rng.integers(1, 17)), int(rng.integers(1, 25))
    drawn = rng.choice(["plain", "plain", "cifg", "peephole", "projection"])
    variant = variant or drawn
    n_out = int(rng.integers(1, 17)) if variant == "projection" else units
    si, zi = qc.log_scale(rng, 5e-3, 0.1), qc.zero_point(rng)
    so, zo = qc.log_scale(rng, 2e-3, 0.02), qc.zero_point(rng)
    cell_scale = np.float32(2.0 ** -int(rng.integers(11, 16)))
    x = w.tensor("x", [1, steps, n_in], I8, si, zi)

    def weights(name, rows, cols, in_scale):
        s = qc.log_scale(rng, 5e-4, 2e-2)
        t = w.tensor(name, [rows, cols], I8, s, 0, data=qc.int8_values(rng, (rows, cols), minus_128=False))
        return t, s

    gates = ["input", "forget", "cell", "output"]
    cifg = variant == "cifg"
    inputs = [x]
    in_w, rec_w, in_scales = {}, {}, {}
    for g in gates:
        if cifg and g == "input":
            in_w[g] = rec_w[g] = -1
            continue
        in_w[g], in_scales[g] = weights(f"input_to_{g}", units, n_in, si)
    for g in gates:
        if not (cifg and g == "input"):
            rec_w[g], _ = weights(f"recurrent_to_{g}", units, n_out, so)
    inputs += [in_w[g] for g in gates] + [rec_w[g] for g in gates]
    peep = {}
    for g in ["input", "forget", "output"]:
        if variant == "peephole" and not (cifg and g == "input"):
            s = qc.log_scale(rng, 1e-4, 1e-3)
            vals = rng.integers(-2000, 2001, size=units).astype(np.int16)
            peep[g] = w.tensor(f"cell_to_{g}", [units], I16, s, 0, data=vals)
        else:
            peep[g] = -1
    inputs += [peep["input"], peep["forget"], peep["output"]]
    for g in gates:
        if cifg and g == "input":
            inputs.append(-1)
            continue
        b_scale = np.float32(si * in_scales[g])
        inputs.append(w.tensor(f"{g}_bias", [units], I32, b_scale, 0,
                               data=rng.integers(-20000, 20001, size=units).astype(np.int32)))
    if variant == "projection":
        ps = qc.log_scale(rng, 5e-4, 2e-2)
        proj = w.tensor("projection", [n_out, units], I8, ps, 0,
                        data=qc.int8_values(rng, (n_out, units), minus_128=False))
        proj_b = w.tensor("projection_bias", [n_out], I32, np.float32(ps), 0,
                          data=rng.integers(-2000, 2001, size=n_out).astype(np.int32)) \
            if (rng.random() < 0.5 if projection_bias is None else projection_bias) else -1
    else:
        proj = proj_b = -1
    inputs += [proj, proj_b]
    out_state = w.tensor("output_state", [1, n_out], I8, so, zo, variable=True)
    cell_state = w.tensor("cell_state", [1, units], I16, cell_scale, 0, variable=True)
    inputs += [out_state, cell_state, -1, -1, -1, -1]  # no layer norm
    inter = [w.tensor(f"{g}_intermediate", [], F32) for g in gates]
    # The hidden state's own zero point (the converter makes it the output's; any value is valid).
    # With a projection the hidden state has its own scale too.
    hz = zo if rng.random() < 0.6 else qc.zero_point(rng)
    hs = qc.log_scale(rng, 2e-3, 0.02) if variant == "projection" and rng.random() < 0.5 else so
    inter.append(w.tensor("effective_hidden_scale_intermediate", [], I8, hs, hz))
    y = w.tensor("y", [1, steps, n_out], I8, so, zo)
    o = S.UnidirectionalSequenceLSTMOptionsT()
    o.fusedActivationFunction = S.ActivationFunctionType.TANH
    o.cellClip = float(rng.choice([0.0, 0.0, 10.0, float(rng.uniform(0.5, 8.0))]))
    o.projClip = float(rng.choice([0.0, float(rng.uniform(0.5, 4.0))])) if variant == "projection" else 0.0
    if projection_clip is not None:
        o.projClip = projection_clip
    o.timeMajor = False
    w.op(OP.UNIDIRECTIONAL_SEQUENCE_LSTM, inputs, [y], S.BuiltinOptions.UnidirectionalSequenceLSTMOptions, o,
         intermediates=inter)
    w.inputs, w.outputs = [x], [y]
    return w, ["UNIDIRECTIONAL_SEQUENCE_LSTM", str(variant)], [qc.input_rows(rng, int(rng.integers(2, 5)),
                                                                             [1, steps, n_in])]


def hybrid_lstm(rng):
    """The dynamic-range LSTM as the converter writes it: float input, output and states, int8
    weights with one scale each (symmetric), float biases; CIFG, peephole (float) and projection
    variants; inputs quantized per row symmetrically or, with asymmetric_quantize_inputs, not."""
    w = ModelWriter()
    steps, n_in, units = int(rng.integers(1, 9)), int(rng.integers(1, 17)), int(rng.integers(1, 25))
    variant = str(rng.choice(["plain", "plain", "cifg", "peephole", "projection"]))
    n_out = int(rng.integers(1, 17)) if variant == "projection" else units
    cifg = variant == "cifg"
    x = w.tensor("x", [1, steps, n_in], F32)

    def weights(name, rows, cols):
        return w.tensor(name, [rows, cols], I8, qc.log_scale(rng, 5e-3, 5e-2), 0,
                        data=qc.int8_values(rng, (rows, cols), minus_128=False))

    def floats(name, n, spread):
        return w.tensor(name, [n], F32, data=(rng.standard_normal(n) * spread).astype(np.float32))

    gates = ["input", "forget", "cell", "output"]
    ins = [x]
    ins += [-1 if cifg and g == "input" else weights(f"input_to_{g}", units, n_in) for g in gates]
    ins += [-1 if cifg and g == "input" else weights(f"recurrent_to_{g}", units, n_out) for g in gates]
    for g in ["input", "forget", "output"]:  # hybrid peepholes are int8 like the other weights
        ins.append(w.tensor(f"cell_to_{g}", [units], I8, qc.log_scale(rng, 1e-3, 1e-2), 0,
                            data=qc.int8_values(rng, (units,), minus_128=False))
                   if variant == "peephole" and not (cifg and g == "input") else -1)
    ins += [-1 if cifg and g == "input" else floats(f"{g}_bias", units, 0.5) for g in gates]
    if variant == "projection":
        ins += [weights("projection", n_out, units), floats("projection_bias", n_out, 0.2) if rng.random() < 0.5 else -1]
    else:
        ins += [-1, -1]
    ins += [w.tensor("output_state", [1, n_out], F32, variable=True), w.tensor("cell_state", [1, units], F32, variable=True)]
    ins += [-1, -1, -1, -1]
    y = w.tensor("y", [1, steps, n_out], F32)
    o = S.UnidirectionalSequenceLSTMOptionsT()
    o.fusedActivationFunction = S.ActivationFunctionType.TANH
    o.cellClip = float(rng.choice([0.0, 0.0, 10.0, float(rng.uniform(0.5, 8.0))]))
    o.projClip = float(rng.choice([0.0, float(rng.uniform(0.5, 4.0))])) if variant == "projection" else 0.0
    o.asymmetricQuantizeInputs = bool(rng.random() < 0.5)
    w.op(OP.UNIDIRECTIONAL_SEQUENCE_LSTM, ins, [y], S.BuiltinOptions.UnidirectionalSequenceLSTMOptions, o)
    w.inputs, w.outputs = [x], [y]
    return w, ["UNIDIRECTIONAL_SEQUENCE_LSTM", variant], [qc.float_rows(rng, int(rng.integers(2, 5)), [1, steps, n_in])]
