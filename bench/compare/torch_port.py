"""The bench-suite Keras models rebuilt as PyTorch modules with the same weights.

Supports the layers the suite uses: Dense, LSTM and GRU (Keras 3 defaults: sigmoid recurrent
activation, GRU reset_after=True), causal dilated Conv1D, GlobalAveragePooling1D. Weight layout:
  Dense  kernel [in, out]                  -> Linear.weight [out, in]
  LSTM   kernel [in, 4u], recurrent [u, 4u], bias [4u]; gates i, f, c, o (torch: i, f, g, o)
  GRU    kernel [in, 3u], recurrent [u, 3u], bias [2, 3u]; gates z, r, h (torch: r, z, n)
  Conv1D kernel [k, in, out]               -> Conv1d.weight [out, in, k], left pad (k-1)*dilation
run.py checks the port against Keras on the same inputs before timing it, like every peer.
"""
import numpy as np
import torch
from torch import nn

ACTIVATIONS = {"linear": nn.Identity, "relu": nn.ReLU, "sigmoid": nn.Sigmoid, "tanh": nn.Tanh}


def _t(a):
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32))


class _Recurrent(nn.Module):
    def __init__(self, rnn, return_sequences):
        super().__init__()
        self.rnn, self.return_sequences = rnn, return_sequences

    def forward(self, x):  # [B, T, F]
        y, _ = self.rnn(x)
        return y if self.return_sequences else y[:, -1]


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
        return _Recurrent(rnn, cfg.get("return_sequences", False))
    if cls == "Conv1D":
        if cfg.get("padding") != "causal" or cfg.get("strides", (1,))[0] != 1:
            raise ValueError(f"{layer.name}: only causal stride-1 Conv1D is ported")
        k, cin, cout = w[0].shape
        d = cfg.get("dilation_rate", (1,))[0]
        conv = nn.Conv1d(cin, cout, k, dilation=d, bias=len(w) > 1)
        conv.weight.data = _t(np.transpose(w[0], (2, 1, 0)))
        if len(w) > 1:
            conv.bias.data = _t(w[1])
        return _CausalConv(conv, (k - 1) * d, ACTIVATIONS[cfg.get("activation", "linear")]())
    if cls == "GlobalAveragePooling1D":
        return _MeanOverTime()
    raise ValueError(f"layer {layer.name} ({cls}) has no torch port here")


def port(keras_model):
    """nn.Sequential equivalent of a Keras Sequential model of the supported layers."""
    mods = [m for m in (_port_layer(layer) for layer in keras_model.layers) if m is not None]
    return nn.Sequential(*mods)
