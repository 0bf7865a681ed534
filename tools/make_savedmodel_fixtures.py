#!/usr/bin/env python3
"""Build the SavedModel reference fixtures: the Keras test models of make_fixtures.py with random
weights, each exported as a TensorFlow SavedModel directory the ways today's toolchains write one,
with the outputs Keras computes for them.

Usage:
  make_savedmodel_fixtures.py --out DIR [--only NAME...] [--forms FORM...]
  make_savedmodel_fixtures.py --out tests/fixtures/savedmodel --committed   (the committed subset)

Forms (one manifest case per model and form):
  k3_export   Keras 3 `model.export(dir)`
  tf_save     `tf.saved_model.save(keras3_model, dir)`
  tfk_save    tf_keras `model.save(dir)` (the Keras 2 twin of the model, its own weights)

Expected outputs: `model(x[i:i+1], training=False)` per row (tools/make_fixtures.py's
conventions: inputs, rtol 1e-5 and the atol floor from Keras' own float32 rounding, stream fixtures
for recurrent models). Every export is reloaded with `tf.saved_model.load` and its serving
signature must reproduce the Keras outputs, so the directory means what the model meant.
Inputs and outputs are written in the order of the signature function's arguments and results
(the order the importer gives the engine's inputs and outputs).
Layout: DIR/manifest.json, DIR/<case>/{in*.npy, out*.npy, stream_*.npy, <form>/saved_model.pb ...},
DIR/unsupported/<case>/<form>/ (models the importer must refuse with a named error).
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_fixtures as mf  # noqa: E402  (sets the TF environment before importing it)

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.protobuf import saved_model_pb2  # noqa: E402

FORMS = {"keras3": ["k3_export", "tf_save"], "keras2": ["tfk_save"]}


def cases() -> list[mf.Case]:
    act_large = (20.0, 25.0)
    spec = [
        ("dense_act", mf.b_dense_act, {}),
        ("activation_layers", mf.b_activation_layers, {"large": act_large}),
        ("relu_layers", mf.b_relu_layers, {}),
        ("batchnorm", mf.b_batchnorm, {}),
        ("layernorm", mf.b_layernorm, {}),
        ("dense_seq", mf.b_dense_seq, {"T": 5}),
        ("inference_noops", mf.b_inference_noops, {}),
        ("lstm_last", mf.b_lstm_last, {"T": 6, "stream": True}),
        ("lstm_variable_length", mf.b_lstm_last, {"T": None, "window": 7, "stream": True, "stream_T": 7}),
        ("lstm_seq", mf.b_lstm_seq, {"T": 6}),
        ("lstm_stacked", mf.b_lstm_stacked, {"T": 6, "stream": True}),
        ("gru_reset_after", mf.b_gru_reset_after, {"T": 6, "stream": True}),
        ("gru_reset_before", mf.b_gru_reset_before, {"T": 6, "stream": True}),
        ("gru_stacked", mf.b_gru_stacked, {"T": 6, "stream": True}),
        ("gru_seq", mf.b_gru_seq, {"T": 5}),
        ("conv1d", mf.b_conv1d, {"T": 16}),
        ("conv1d_same_dilated", mf.b_conv1d_same_dilated, {"T": 9}),
        ("conv1d_bn", mf.b_conv1d_bn, {"T": 12}),
        ("pooling", mf.b_pooling, {"T": 17}),
        ("global_pool_keepdims", mf.b_global_pool_keepdims, {"T": 7}),
        ("reshape", mf.b_reshape, {}),
        ("merge_two_in_two_out", mf.b_merge_two_in_two_out, {}),
        ("concat_seq", mf.b_concat_seq, {"T": 6}),
        ("conv_lstm", mf.b_conv_lstm, {"T": 8}),
        ("go_backwards", b_go_backwards, {"T": 5}),
        ("bidirectional", b_bidirectional, {"T": 6}),
        ("go_backwards_variable_length", b_go_backwards, {"T": None, "window": 7}),  # stream mode refuses a Conv1D before the LSTM
        # Conv2D stacks (NHWC Conv2D / DepthwiseConv2dNative / MaxPool / AvgPool) and DeepLOB's
        # layers without its Monte Carlo dropout (a SavedModel would keep the random op).
        ("conv2d", mf.b_conv2d, {"T": 10}),
        ("pool2d", mf.b_pool2d, {"T": 7}),
        ("depthwise", mf.b_depthwise, {"T": 8}),
        ("deeplob_tiny", mf.deeplob(conv=8, inception=6, lstm=6, levels=4, mc_dropout=False), {"T": 12}),
        # The multi-horizon DeepLOBs: an encoder LSTM's While hands its final h and c to a
        # decoder LSTM's While per horizon (Keras 3 and tf_keras alike).
        ("deeplob_seq2seq_tiny", mf.deeplob_multi_horizon(conv=6, inception=5, lstm=7, levels=4), {"T": 10}),
        ("deeplob_attention_tiny", mf.deeplob_multi_horizon(conv=6, inception=5, lstm=7, levels=4, attention=True),
         {"T": 10}),
        # MultiHeadAttention in a pre-LN encoder block (tools/make_fixtures.py's transformer
        # encoder, one block). Dropout 0: Keras 3 takes ops.dot_product_attention (Einsum
        # 'BTNH,BSNH->BNTS', 'BNTS,BSNH->BTNH'); dropout 0.1: its other path (Transposes around
        # BatchMatMulV2, the key first); tf_keras writes Einsums in both ('aecd,abcd->acbe', ...).
        ("mha_encoder", mf.transformer_encoder(heads=2, key_dim=4, ff=8, blocks=1, dropout=0.0, features=6, dense=8), {"T": 8}),
        ("mha_encoder_dropout", mf.transformer_encoder(heads=2, key_dim=3, ff=8, blocks=1, dropout=0.1, features=7, dense=8),
         {"T": 9}),
    ]
    # TransLOB at toy sizes: causal dilated Conv1Ds, LayerNormalization, keras.ops.pad of the
    # channels plus a position table, one causal MultiHeadAttention(use_bias=False) block applied
    # twice, Flatten head. Keras 3 only: the position channel is made of Keras 3 operations
    # (keras.ops.pad and a NumPy table), which tf_keras has no counterpart of.
    # Sliding-window attention (Keras 3's sliding_window; the band mask is built from Cumsum /
    # arange and folded): both sides, and causal feeding an LSTM, which also streams.
    keras3_only = [mf.Case("translob_tiny_k3", "keras3", mf.translob(levels=2, filters=6, heads=3, key_dim=2, ff=12, dense=8),
                           T=10),
                   mf.Case("attention_window_k3", "keras3", mf.b_attention_window, T=21),
                   mf.Case("attention_stream_k3", "keras3", mf.b_attention_stream, T=9, stream=True)]
    return [c for name, build, kw in spec for c in mf.both(name, build, **kw)] + keras3_only


# Recurrent layers that read backwards: ReverseV2 of the time-major input before the loop
# unstacks it (go_backwards, Bidirectional's backward layer) and of the backward sequence after
# it (Bidirectional).
def b_go_backwards(k, T):
    return k.seq((T, 3), [k.L.LSTM(4, go_backwards=True, return_sequences=True, name="lstm_backwards"),
                          k.L.GRU(3, go_backwards=True), k.L.Dense(1)])


def b_bidirectional(k, T):
    return k.seq((T, 3), [k.L.Bidirectional(k.L.LSTM(4, return_sequences=True), name="bidi_lstm"),
                          k.L.Bidirectional(k.L.GRU(3), merge_mode="sum"), k.L.Dense(1)])


def unsupported_cases() -> list[mf.Case]:
    """Models the importer must refuse with an error naming the op / layer and the reason."""
    return [
        mf.Case("conv1d_channels_first_k3", "keras3", mf.u_conv_channels_first, T=8, expect_error=["conv_cf", "Conv2D"]),
        mf.Case("dense_float64_k3", "keras3", mf.u_dense_float64, expect_error=["dense_f64", "float64"]),
        mf.Case("dense_mixed_float16_k2", "keras2", mf.u_dense_mixed_float16, expect_error=["dense_mixed", "float16"]),
    ]


def make_unsupported(case: mf.Case, root: Path) -> dict:
    kit = mf.KITS[case.fmt]
    kit.K.utils.set_random_seed(mf.case_seed(case.name))
    model = mf.build_with_floatx(case, "float32", case.T)
    form = FORMS[case.fmt][0]
    export(model, case.fmt, form, root / "unsupported" / case.name / form)
    return {"name": case.name, "format": "savedmodel", "export": form,
            "file": f"unsupported/{case.name}/{form}", "expect_error_contains": case.expect_error}


def export(model, fmt: str, form: str, path: Path) -> None:
    if path.exists():
        shutil.rmtree(path)
    if form == "k3_export":
        model.export(str(path), verbose=False)
    elif form == "tf_save":
        tf.saved_model.save(model, str(path))
    else:
        model.save(str(path))  # tf_keras: a directory path writes the SavedModel format


def signature_order(path: Path):
    """(input keys, output keys) of serving_default in the order of the called function's
    arguments and results."""
    sm = saved_model_pb2.SavedModel()
    sm.ParseFromString((path / "saved_model.pb").read_bytes())
    mg = next(m for m in sm.meta_graphs if "serve" in m.meta_info_def.tags)
    sig = mg.signature_def["serving_default"]
    by_tensor_in = {v.name.split(":")[0]: k for k, v in sig.inputs.items()}
    out_idx = {k: int(v.name.split(":")[1]) for k, v in sig.outputs.items()}
    call = next(n for n in mg.graph_def.node if n.name == next(iter(sig.outputs.values())).name.split(":")[0])
    in_keys = [by_tensor_in[i] for i in call.input if i in by_tensor_in]
    return in_keys, sorted(out_idx, key=out_idx.get)


def signature_rows(path: Path, in_keys, inputs):
    fn = tf.saved_model.load(str(path)).signatures["serving_default"]
    rows = []
    for r in range(inputs[0].shape[0]):
        res = fn(**{k: tf.constant(x[r:r + 1]) for k, x in zip(in_keys, inputs)})
        rows.append({k: np.asarray(v)[0] for k, v in res.items()})
    return {k: np.stack([row[k] for row in rows]) for k in rows[0]}


def match_outputs(sig_outs: dict, keras_outs, out_keys, name, form, atol):
    """Keras outputs reordered to out_keys; each must equal the signature's output."""
    ordered, used = [], set()
    for k in out_keys:
        got = sig_outs[k]
        hit = [i for i, o in enumerate(keras_outs) if i not in used and o.shape == got.shape
               and np.allclose(got, o, rtol=mf.RTOL, atol=max(atol, 1e-6 * float(np.abs(o).max())))]
        if not hit:
            raise SystemExit(f"{name}/{form}: signature output '{k}' matches no Keras output")
        used.add(hit[0])
        ordered.append(keras_outs[hit[0]])
    return ordered


def keras_inputs_for(model, in_keys, inputs):
    """Inputs reordered to the signature's argument order: by name where the keys are the Keras
    input names, else positional (`tf.saved_model.save` names them inputs, inputs_1, ...; the
    output check below catches a wrong guess)."""
    names = [t.name.split(":")[0] for t in model.inputs]
    if sorted(names) == sorted(in_keys):
        return [inputs[names.index(k)] for k in in_keys]
    return inputs


def make_case(case: mf.Case, root: Path, forms) -> list[dict]:
    seed = mf.case_seed(case.name)
    kit = mf.KITS[case.fmt]
    kit.K.utils.set_random_seed(seed)
    model = mf.build_with_floatx(case, "float32", case.T)
    mf.randomize_weights(model, np.random.RandomState(seed))
    case_dir = root / case.name
    case_dir.mkdir(parents=True, exist_ok=True)
    in_rng = np.random.RandomState(seed ^ 0x5EED)
    inputs = [mf.make_input(in_rng, tuple(case.window if d is None else d for d in tuple(t.shape)[1:]), case.large)
              for t in model.inputs]
    outs = mf.run_rows(model, inputs)
    weights = model.get_weights()
    max_abs = max(float(np.abs(o).max()) for o in outs)
    atol = max(1e-6 * max_abs, mf.keras_rounding_atol(case, weights, inputs, outs), 1e-30)
    stream = mf.make_stream(case, model, weights, in_rng, case_dir, case.name, atol) if case.stream else None
    entries = []
    for form in [f for f in FORMS[case.fmt] if not forms or f in forms]:
        path = case_dir / form
        export(model, case.fmt, form, path)
        in_keys, out_keys = signature_order(path)
        ins = keras_inputs_for(model, in_keys, inputs)
        sig_outs = signature_rows(path, in_keys, ins)
        ordered = match_outputs(sig_outs, outs, out_keys, case.name, form, atol)
        tag = f"{form}_" if len(FORMS[case.fmt]) > 1 else ""
        entry = {"name": f"{case.name}_{form}", "format": "savedmodel", "export": form,
                 "keras_format": case.fmt, "file": f"{case.name}/{form}", "seed": seed,
                 "inputs": [], "outputs": [], "input_keys": in_keys, "output_keys": out_keys,
                 "rtol": mf.RTOL, "atol": float(f"{atol:.3g}"), "layers": mf.layer_list(model),
                 "stream": stream}
        if case.window:
            entry["window_length"] = case.window  # the model's time axis is None
        for i, x in enumerate(ins):
            mf.save_npy(case_dir / f"{tag}in{i}.npy", x)
            entry["inputs"].append(f"{case.name}/{tag}in{i}.npy")
        for i, y in enumerate(ordered):
            mf.save_npy(case_dir / f"{tag}out{i}.npy", y)
            entry["outputs"].append(f"{case.name}/{tag}out{i}.npy")
        entries.append(entry)
    return entries


# What tests/fixtures/savedmodel holds (`--committed`): one case per lowering family, each in one
# export form, so the committed suite stays small; `make savedmodel-reference` runs every case in
# every form.
COMMITTED = {"dense_act_k3": ["k3_export", "tf_save"], "dense_act_k2": ["tfk_save"], "lstm_last_k3": ["k3_export"],
             "gru_reset_before_k3": ["k3_export"], "conv1d_same_dilated_k3": ["k3_export"],
             "merge_two_in_two_out_k3": ["k3_export"], "deeplob_tiny_k3": ["k3_export"],
             "translob_tiny_k3": ["k3_export"], "mha_encoder_dropout_k3": ["k3_export"],
             "attention_stream_k3": ["k3_export"], "deeplob_seq2seq_tiny_k3": ["tf_save"],
             "deeplob_attention_tiny_k3": ["k3_export"], "bidirectional_k3": ["k3_export"]}
COMMITTED_UNSUPPORTED = ["dense_float64_k3"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--only", nargs="+", metavar="NAME", help="only these case names (e.g. lstm_last_k3)")
    p.add_argument("--forms", nargs="+", choices=sorted({f for v in FORMS.values() for f in v}),
                   help="only these export forms")
    p.add_argument("--committed", action="store_true", help="the subset committed in tests/fixtures/savedmodel")
    a = p.parse_args(argv)
    if a.committed:
        a.only = list(COMMITTED) + COMMITTED_UNSUPPORTED
    pick = [c for c in cases() if not a.only or c.name in a.only]
    known = {c.name for c in cases() + unsupported_cases()}
    if a.only and set(a.only) - known:
        p.error(f"--only: unknown case name(s) {sorted(set(a.only) - known)}; known: {sorted(known)}")
    if a.out.exists() and (not a.only or a.committed):
        shutil.rmtree(a.out)
    a.out.mkdir(parents=True, exist_ok=True)
    manifest = {"suite": "savedmodel", "generator": mf.generator_versions(),
                "reference": "model(x[i:i+1], training=False) per row (Keras); each export reloaded "
                             "with tf.saved_model.load reproduces it; pass if |got-ref| <= atol + rtol*|ref|",
                "cases": []}
    if a.committed:
        manifest["committed"] = "the --committed subset: make savedmodel-reference regenerates every case and form"
    for c in pick:
        print(f"[savedmodel] {c.name}", flush=True)
        manifest["cases"].extend(make_case(c, a.out, COMMITTED[c.name] if a.committed else a.forms))
    unsupported = [u for u in unsupported_cases() if not a.only or u.name in a.only]
    if unsupported:
        manifest["unsupported"] = []
    for u in unsupported:
        print(f"[savedmodel] unsupported/{u.name}", flush=True)
        manifest["unsupported"].append(make_unsupported(u, a.out))
    (a.out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
