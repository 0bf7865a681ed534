"""The bench-suite Keras models rebuilt as PyTorch modules with the same weights.

Supports the layers the suites use: Dense, LSTM and GRU (Keras 3 defaults: sigmoid recurrent
activation, GRU reset_after=True; an LSTM's return_state and initial_state, a model's several
inputs: the multi-horizon DeepLOBs, with Dot and BatchNormalization), causal dilated Conv1D,
GlobalAveragePooling1D, and for the
book models (functional graphs: DeepLOB, TransLOB, the tiny Transformer) Conv2D, MaxPooling2D,
LeakyReLU, Dropout, Concatenate, Reshape, Flatten, LayerNormalization, MultiHeadAttention (with or
without biases, use_causal_mask), a layer called more than once (one module, one step per call)
and the Keras 3 operations TransLOB uses (a zero pad of the channels, + an inline table). 4-D tensors run channels-first, as a PyTorch user writes a Conv2D
model (one permute of the input; Concatenate on the channel axis; a Reshape back to
channels-last only where the graph leaves the image layout). Weight layout:
  Dense  kernel [in, out]                  -> Linear.weight [out, in]
  LSTM   kernel [in, 4u], recurrent [u, 4u], bias [4u]; gates i, f, c, o (torch: i, f, g, o)
  GRU    kernel [in, 3u], recurrent [u, 3u], bias [2, 3u]; gates z, r, h (torch: r, z, n)
  Conv1D kernel [k, in, out]               -> Conv1d.weight [out, in, k], left pad (k-1)*dilation
  Conv2D kernel [kh, kw, in, out]          -> Conv2d.weight [out, in, kh, kw]; 'same' at stride 1
         pads (k-1)//2 before and the rest after, as TensorFlow does
run.py checks the port against Keras on the same inputs before timing it, like every peer.
"""
import keras
import numpy as np
import torch
from torch import nn

ACTIVATIONS = {"linear": nn.Identity, "relu": nn.ReLU, "sigmoid": nn.Sigmoid, "tanh": nn.Tanh,
               "softmax": lambda: nn.Softmax(dim=-1)}


def _t(a):
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32))


class _Recurrent(nn.Module):
    def __init__(self, rnn, return_sequences, return_state=False):
        super().__init__()
        self.rnn, self.return_sequences, self.return_state = rnn, return_sequences, return_state

    def forward(self, x, *state):  # [B, T, F]; an LSTM's initial h and c ([B, u] each) if given
        if state:
            y, (h, c) = self.rnn(x, (state[0].unsqueeze(0).contiguous(), state[1].unsqueeze(0).contiguous()))
        else:
            # The zero state made from x, not left to the RNN: a trace records the RNN's own
            # zeros with a fixed device (the CPU), and the traced file then fails on a GPU.
            z = x.new_zeros(1, x.shape[0], self.rnn.hidden_size)
            y, hc = self.rnn(x, (z, z) if isinstance(self.rnn, nn.LSTM) else z)
            h, c = hc if isinstance(hc, tuple) else (hc, None)
        out = y if self.return_sequences else y[:, -1]
        return (out, h[0], c[0]) if self.return_state else out


class _Dot(nn.Module):  # Keras' Dot on [B, m, k] tensors: contract axis a of the first with b of the second
    def __init__(self, axes):
        super().__init__()
        self.axes = axes

    def forward(self, x, y):
        a, b = self.axes
        return torch.bmm(x if a == 2 else x.transpose(1, 2), y if b == 1 else y.transpose(1, 2))


class _Affine(nn.Module):  # BatchNormalization at inference: x * scale + shift over the last axis
    def __init__(self, scale, shift):
        super().__init__()
        self.scale, self.shift = _t(scale), _t(shift)

    def forward(self, x):
        return x * self.scale + self.shift


class _CausalConv(nn.Module):
    def __init__(self, conv, pad, act):
        super().__init__()
        self.conv, self.pad, self.act = conv, pad, act

    def forward(self, x):  # [B, T, C] as Keras; Conv1d wants [B, C, T]
        y = self.conv(nn.functional.pad(x.transpose(1, 2), (self.pad, 0)))
        return self.act(y).transpose(1, 2)


class _MeanOverTime(nn.Module):
    def forward(self, x):
        return x.mean(dim=1)


class _Sum(nn.Module):
    def forward(self, *xs):
        out = xs[0]
        for x in xs[1:]:
            out = out + x
        return out


class _Attention(nn.Module):
    """Keras MultiHeadAttention (self-attention, with or without biases, use_causal_mask) through
    F.scaled_dot_product_attention, what nn.MultiheadAttention runs: q, k, v kernels [d, h, k]
    reshaped to [d, h*k], the output kernel [h, v, o] to [h*v, o]; no bias = zeros."""

    def __init__(self, layer, w):
        super().__init__()
        cfg = layer.get_config()
        if cfg.get("use_bias", True) != (len(w) == 8) or len(w) not in (4, 8):
            raise ValueError(f"{layer.name}: unexpected MultiHeadAttention weights")
        if len(w) == 4:  # kernels only: zero biases in Keras' layout
            w = [w[0], np.zeros(w[0].shape[1:]), w[1], np.zeros(w[1].shape[1:]), w[2], np.zeros(w[2].shape[1:]),
                 w[3], np.zeros(w[3].shape[-1:])]
        self.h, self.k = cfg["num_heads"], cfg["key_dim"]
        d = w[0].shape[0]
        self.wq, self.bq = _t(w[0].reshape(d, -1)), _t(w[1].reshape(-1))
        self.wk, self.bk = _t(w[2].reshape(d, -1)), _t(w[3].reshape(-1))
        self.wv, self.bv = _t(w[4].reshape(d, -1)), _t(w[5].reshape(-1))
        self.wo, self.bo = _t(w[6].reshape(-1, w[6].shape[-1])), _t(w[7])

    def forward(self, q, v, causal=False):
        B, T, _ = q.shape
        S = v.shape[1]
        split = lambda x, n: x.reshape(B, n, self.h, -1).transpose(1, 2)  # [B, h, n, k]
        ctx = nn.functional.scaled_dot_product_attention(split(q @ self.wq + self.bq, T), split(v @ self.wk + self.bk, S),
                                                         split(v @ self.wv + self.bv, S), is_causal=causal)
        return ctx.transpose(1, 2).reshape(B, T, -1) @ self.wo + self.bo


class _PadLast(nn.Module):  # keras.ops.pad of the last axis with zeros (TransLOB's position channel)
    def __init__(self, before, after):
        super().__init__()
        self.before, self.after = before, after

    def forward(self, x):
        return nn.functional.pad(x, (self.before, self.after))


class _AddConstant(nn.Module):  # x + a numpy array, a Keras 3 operation node's inline constant
    def __init__(self, c):
        super().__init__()
        self.c = _t(c)

    def forward(self, x):
        return x + self.c


def _reorder_gru(w):  # Keras chunks z, r, h -> torch chunks r, z, n along the gate axis
    z, r, h = np.split(w, 3, axis=-1)
    return np.concatenate([r, z, h], axis=-1)


def _port_layer(layer):
    cls = type(layer).__name__
    cfg = layer.get_config()
    w = [np.asarray(v) for v in layer.get_weights()]
    if cls == "InputLayer":
        return None
    if cls == "Dense":
        lin = nn.Linear(w[0].shape[0], w[0].shape[1], bias=len(w) > 1)
        lin.weight.data = _t(w[0].T)
        if len(w) > 1:
            lin.bias.data = _t(w[1])
        return nn.Sequential(lin, ACTIVATIONS[cfg.get("activation", "linear")]())
    if cls in ("LSTM", "GRU"):
        if cfg.get("activation", "tanh") != "tanh" or cfg.get("recurrent_activation", "sigmoid") != "sigmoid":
            raise ValueError(f"{layer.name}: only tanh/sigmoid {cls} ports to torch")
        if cls == "GRU" and not cfg.get("reset_after", True):
            raise ValueError(f"{layer.name}: reset_after=False has no torch equivalent")
        units = cfg["units"]
        rnn = (nn.LSTM if cls == "LSTM" else nn.GRU)(w[0].shape[0], units, batch_first=True)
        if cls == "LSTM":
            rnn.weight_ih_l0.data, rnn.weight_hh_l0.data = _t(w[0].T), _t(w[1].T)
            rnn.bias_ih_l0.data, rnn.bias_hh_l0.data = _t(w[2]), torch.zeros(4 * units)
        else:
            rnn.weight_ih_l0.data = _t(_reorder_gru(w[0]).T)
            rnn.weight_hh_l0.data = _t(_reorder_gru(w[1]).T)
            rnn.bias_ih_l0.data, rnn.bias_hh_l0.data = _t(_reorder_gru(w[2][0])), _t(_reorder_gru(w[2][1]))
        if cfg.get("return_state", False) and cls != "LSTM":
            raise ValueError(f"{layer.name}: return_state is ported for LSTM only")
        return _Recurrent(rnn, cfg.get("return_sequences", False), cfg.get("return_state", False))
    if cls == "Conv1D":
        k, cin, cout = w[0].shape
        d = cfg.get("dilation_rate", (1,))[0]
        if cfg.get("strides", (1,))[0] != 1 or not (cfg.get("padding") == "causal" or (cfg.get("padding") == "valid" and k == 1)):
            raise ValueError(f"{layer.name}: only causal stride-1 Conv1D (and pointwise valid ones) is ported")
        conv = nn.Conv1d(cin, cout, k, dilation=d, bias=len(w) > 1)
        conv.weight.data = _t(np.transpose(w[0], (2, 1, 0)))
        if len(w) > 1:
            conv.bias.data = _t(w[1])
        return _CausalConv(conv, (k - 1) * d, ACTIVATIONS[cfg.get("activation", "linear")]())
    if cls == "GlobalAveragePooling1D":
        return _MeanOverTime()
    if cls == "LayerNormalization":
        if cfg.get("axis") not in (-1, [-1]) or not cfg.get("center", True) or not cfg.get("scale", True):
            raise ValueError(f"{layer.name}: only last-axis LayerNormalization with gamma and beta is ported")
        ln = nn.LayerNorm(w[0].shape[0], eps=cfg["epsilon"])
        ln.weight.data, ln.bias.data = _t(w[0]), _t(w[1])
        return ln
    if cls == "MultiHeadAttention":
        return _Attention(layer, w)
    if cls == "Dot":
        axes = cfg["axes"]
        axes = tuple(axes) if isinstance(axes, (list, tuple)) else (axes, axes)
        if cfg.get("normalize") or any(a not in (1, 2) for a in axes):
            raise ValueError(f"{layer.name}: Dot is ported for rank-3 inputs without normalize")
        return _Dot(axes)
    if cls == "BatchNormalization":
        gamma, beta, mean, var = w if len(w) == 4 else (None, None, None, None)
        if gamma is None or cfg.get("axis") not in (-1, [-1]):
            raise ValueError(f"{layer.name}: only last-axis BatchNormalization with gamma and beta is ported")
        scale = gamma / np.sqrt(var + cfg["epsilon"])
        return _Affine(scale, beta - mean * scale)
    if cls == "Activation" and cfg["activation"] in ACTIVATIONS:
        return ACTIVATIONS[cfg["activation"]]()
    if cls == "Add":
        return _Sum()
    raise ValueError(f"layer {layer.name} ({cls}) has no torch port here")


def _pair(v):
    return tuple(v) if isinstance(v, (list, tuple)) else (v, v)


class _Conv2d(nn.Module):  # NCHW in and out; TensorFlow's 'same' split of the padding
    def __init__(self, conv, pads, act):
        super().__init__()
        self.conv, self.pads, self.act = conv, pads, act

    def forward(self, x):
        if self.pads:
            x = nn.functional.pad(x, self.pads)
        return self.act(self.conv(x))


class _Concat(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, *xs):
        return torch.cat(xs, dim=self.dim)


class _Reshape(nn.Module):  # from channels-first 4-D back to Keras' channels-last order
    def __init__(self, shape):
        super().__init__()
        self.shape = shape

    def forward(self, x):
        if x.dim() == 4:
            x = x.permute(0, 2, 3, 1)
        return x.reshape((x.shape[0],) + self.shape)


def _same_pads(k, d, stride):
    if stride != 1:
        raise ValueError("'same' padding is ported at stride 1 only")
    total = (k - 1) * d
    return total // 2, total - total // 2


def _port_image_layer(layer):
    cls, cfg = type(layer).__name__, layer.get_config()
    w = [np.asarray(v) for v in layer.get_weights()]
    if cls == "Conv2D":
        if cfg.get("data_format", "channels_last") != "channels_last" or cfg.get("groups", 1) != 1:
            raise ValueError(f"{layer.name}: only channels_last, ungrouped Conv2D is ported")
        kh, kw, cin, cout = w[0].shape
        (sh, sw), (dh, dw) = _pair(cfg["strides"]), _pair(cfg["dilation_rate"])
        conv = nn.Conv2d(cin, cout, (kh, kw), stride=(sh, sw), dilation=(dh, dw), bias=len(w) > 1)
        conv.weight.data = _t(np.transpose(w[0], (3, 2, 0, 1)))
        if len(w) > 1:
            conv.bias.data = _t(w[1])
        pads = ()
        if cfg["padding"] == "same":
            top, bottom = _same_pads(kh, dh, sh)
            left, right = _same_pads(kw, dw, sw)
            pads = (left, right, top, bottom)
        return _Conv2d(conv, pads, ACTIVATIONS[cfg.get("activation", "linear")]())
    if cls == "MaxPooling2D":
        (ph, pw), (sh, sw) = _pair(cfg["pool_size"]), _pair(cfg["strides"] or cfg["pool_size"])
        if cfg["padding"] == "same":
            if (sh, sw) != (1, 1) or ph % 2 == 0 or pw % 2 == 0:
                raise ValueError(f"{layer.name}: 'same' pooling is ported for odd windows at stride 1")
            return nn.MaxPool2d((ph, pw), stride=1, padding=(ph // 2, pw // 2))
        return nn.MaxPool2d((ph, pw), stride=(sh, sw))
    if cls == "LeakyReLU":
        return nn.LeakyReLU(cfg.get("negative_slope", cfg.get("alpha", 0.3)))
    if cls == "Dropout":
        return nn.Identity()
    if cls == "Flatten":
        return nn.Flatten()
    if cls == "Concatenate":
        return cfg["axis"]
    if cls == "Reshape":
        return _Reshape(tuple(cfg["target_shape"]))
    return _port_layer(layer)


def _port_operation(node):
    """A Keras 3 operation node (keras.ops on a functional tensor): its inline constants are
    in the node's arguments, not among its input tensors."""
    op, args = node.operation, node.arguments.args
    cls = type(op).__name__
    if cls == "Pad":
        pads = np.asarray(op.pad_width if hasattr(op, "pad_width") else op.get_config()["pad_width"])
        if np.any(pads[:-1]) or node.arguments.kwargs.get("constant_values", 0) not in (0, None):
            raise ValueError(f"{op.name}: only zero padding of the last axis is ported")
        return _PadLast(int(pads[-1][0]), int(pads[-1][1]))
    if cls == "Add" and len(args) == 2 and isinstance(args[1], np.ndarray):
        return _AddConstant(args[1])
    raise ValueError(f"operation {op.name} ({cls}) has no torch port here")


class _Graph(nn.Module):
    """A functional Keras model's nodes in order (a layer called twice shares one module), each
    on the tensors its node reads."""

    def __init__(self, keras_model):
        super().__init__()
        if len(keras_model.outputs) != 1:
            raise ValueError("one output only")
        self.mods, self.steps, index = nn.ModuleList(), [], {}
        ranks = {id(t): len(t.shape) for t in keras_model.inputs}
        for depth in sorted(keras_model._nodes_by_depth, reverse=True):
            for node in keras_model._nodes_by_depth[depth]:
                layer = node.operation
                if type(layer).__name__ == "InputLayer":
                    continue
                ins = [id(t) for t in node.input_tensors]
                outs = [id(t) for t in node.output_tensors]
                if id(layer) not in index:
                    is_layer = isinstance(layer, keras.layers.Layer)
                    m = _port_image_layer(layer) if is_layer else _port_operation(node)
                    if isinstance(m, int):  # Concatenate: the channel axis of 4-D tensors is dim 1
                        rank = ranks[ins[0]]
                        axis = m % rank
                        m = _Concat(1 if rank == 4 and axis == 3 else axis)
                    self.mods.append(m)
                    index[id(layer)] = len(self.mods) - 1
                kw = {"causal": True} if node.arguments.kwargs.get("use_causal_mask") else {}
                # Several outputs (an LSTM's return_state): the module returns them as a tuple.
                self.steps.append((index[id(layer)], ins, outs if len(outs) > 1 else outs[0], kw))
                for t, o in zip(node.output_tensors, outs):
                    ranks[o] = len(t.shape)
        self.inputs, self.output = [id(t) for t in keras_model.inputs], id(keras_model.outputs[0])
        self.image_inputs = [ranks[i] == 4 for i in self.inputs]

    def forward(self, *xs):
        env = {i: x.permute(0, 3, 1, 2) if image else x for i, x, image in zip(self.inputs, xs, self.image_inputs)}
        for k, ins, out, kw in self.steps:
            y = self.mods[k](*[env[i] for i in ins], **kw)
            if isinstance(out, list):
                env.update(zip(out, y))
            else:
                env[out] = y
        return env[self.output]


def port(keras_model):
    """The torch equivalent of a Keras model of the supported layers: nn.Sequential for a
    Sequential model, a graph walk for a functional one."""
    if type(keras_model).__name__ != "Sequential":
        return _Graph(keras_model)
    mods = [m for m in (_port_layer(layer) for layer in keras_model.layers) if m is not None]
    return nn.Sequential(*mods)
