"""PyTorch's recurrent layers, built on the cells of minigrad/composites/recurrent.py: RNN (tanh or relu),
LSTM and GRU (stacked layers, bias, batch_first, dropout between layers, bidirectional) and RNNCell,
LSTMCell, GRUCell. Their parameters have PyTorch's names, shapes, order and initialisation
(U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))), so a PyTorch state_dict loads and gives PyTorch's
outputs. An LSTM with proj_size > 0 projects each h_t = W_hr (o * tanh(c_t)) to proj_size dims (PyTorch's
weight_hr_l{k} parameters). Not here: packed sequences, refused with a message."""
import math

import numpy as np

from .. import dtype as _dtype
from ..composites import recurrent as _cells
from ..composites.linear import linear
from ..ops import cat, stack
from ..ops.dropout import dropout
from ..tensor import Tensor
from . import init
from .module import Module
from .parameter import Parameter

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _parameter(*shape, dtype=None):
    dt = _dtype.get_default_dtype() if dtype is None else np.dtype(dtype)
    return Parameter(np.empty(shape, dtype=dt))


def _zeros(shape, like):
    return Tensor._make(np.zeros(shape, dtype=like.dtype))


class RNNBase(Module):
    """The stack: layer k reads layer k-1's outputs (both directions' concatenated when bidirectional)."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, dtype=None, device=None):
        super().__init__()
        name = type(self).__name__
        if proj_size < 0:
            raise ValueError(f"{name}: proj_size should be a positive integer or zero to disable projections, got {proj_size}")
        if proj_size and mode != "LSTM":
            raise ValueError(f"{name}: proj_size argument is only supported for LSTM, not RNN or GRU")
        if proj_size >= hidden_size:
            raise ValueError(f"{name}: proj_size has to be smaller than hidden_size, got {proj_size} >= {hidden_size}")
        if not 0 <= dropout <= 1:
            raise ValueError(f"{name}: dropout should be a number in [0, 1], got {dropout}")
        if num_layers < 1 or hidden_size < 1:
            raise ValueError(f"{name}: num_layers and hidden_size must be positive, got {num_layers} and {hidden_size}")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        gate_size = _GATES[mode] * hidden_size
        directions = 2 if bidirectional else 1
        out_size = proj_size or hidden_size  # the size of h (projected with proj_size)
        self._flat_weights_names = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else out_size * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                shapes = [("weight_ih", (gate_size, layer_input)), ("weight_hh", (gate_size, out_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for kind, shape in shapes:
                    setattr(self, kind + suffix, _parameter(*shape, dtype=dtype))
                    self._flat_weights_names.append(kind + suffix)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size)
        for name in self._flat_weights_names:
            init.uniform_(getattr(self, name), -bound, bound)

    @property
    def all_weights(self):
        per_direction = (4 if self.bias else 2) + (1 if self.proj_size else 0)
        flat = [getattr(self, n) for n in self._flat_weights_names]
        return [flat[k:k + per_direction] for k in range(0, len(flat), per_direction)]

    def _cell_weights(self, layer, direction):
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        get = lambda kind: getattr(self, kind + suffix, None)  # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"), get("weight_hr")

    def _step(self, x, state, weights):
        """One time step: (new state, output). The state is h, or (h, c) for an LSTM."""
        weights, w_hr = weights[:4], weights[4]
        if self.mode == "LSTM":
            h, c = _cells.lstm_cell(x, *state, *weights)
            if w_hr is not None:  # the projection: h = W_hr h
                h = linear(h, w_hr, None)
            return (h, c), h
        if self.mode == "GRU":
            h = _cells.gru_cell(x, state, *weights)
        else:
            h = _cells.rnn_cell(x, state, *weights, nonlinearity="tanh" if self.mode == "RNN_TANH" else "relu")
        return h, h

    def forward(self, input, hx=None):
        name = type(self).__name__
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}: expects a Tensor as input, got {type(input).__name__} (packed sequences are "
                            "not supported by minigrad: pad the batch and pass a Tensor)")
        if input.ndim not in (2, 3):
            raise ValueError(f"{name}: expected input of 2 (unbatched) or 3 dims, got shape {tuple(input.shape)}")
        if input.shape[-1] != self.input_size:
            raise ValueError(f"{name}: input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                             f"{input.shape[-1]} (input of shape {tuple(input.shape)})")
        batched = input.ndim == 3
        x = input if not batched else input.transpose(0, 1) if self.batch_first else input  # (L, N, H_in)
        if not batched:
            x = x.unsqueeze(1)
        directions = 2 if self.bidirectional else 1
        states = self._initial_states(hx, x, directions, batched)
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                k = layer * directions + direction
                state = tuple(s[k] for s in states) if self.mode == "LSTM" else states[0][k]
                weights = self._cell_weights(layer, direction)
                steps = range(x.shape[0]) if direction == 0 else reversed(range(x.shape[0]))
                seq = [None] * x.shape[0]
                for t in steps:
                    state, seq[t] = self._step(x[t], state, weights)
                outputs.append(stack(seq, 0))  # (L, N, hidden)
                finals.append(state)
            x = outputs[0] if directions == 1 else cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = dropout(x, self.dropout, training=True)  # between layers, not after the last
        output = x if batched else x.squeeze(1)
        if batched and self.batch_first:
            output = output.transpose(0, 1)
        if self.mode == "LSTM":
            h_n, c_n = (stack([f[j] for f in finals], 0) for j in (0, 1))
            return output, ((h_n, c_n) if batched else (h_n.squeeze(1), c_n.squeeze(1)))
        h_n = stack(finals, 0)
        return output, (h_n if batched else h_n.squeeze(1))

    def _initial_states(self, hx, x, directions, batched):
        """hx as a tuple of (layers * directions, N, hidden) Tensors (zeros where not given)."""
        name = type(self).__name__
        shape = (self.num_layers * directions, x.shape[1], self.hidden_size)
        h_shape = shape[:2] + (self.proj_size or self.hidden_size,)  # (h: projected with proj_size; c: not)
        if hx is None:
            return (_zeros(h_shape, x), _zeros(shape, x)) if self.mode == "LSTM" else (_zeros(shape, x),)
        given = hx if self.mode == "LSTM" else (hx,)
        if self.mode == "LSTM" and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError(f"{name}: hx must be a tuple (h_0, c_0), got {type(hx).__name__}")
        out = []
        for label, h, shape in zip(("h_0", "c_0"), given, (h_shape, shape)):
            h = h if batched else h.unsqueeze(1)
            if tuple(h.shape) != shape:
                raise ValueError(f"{name}: Expected hidden size {shape if batched else (shape[0], shape[2])} for "
                                 f"{label}, got {tuple(h.shape) if batched else tuple(h.shape[::2])}")
            out.append(h)
        return tuple(out)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


def _split_args(name, args, kwargs, keys):
    """PyTorch's positional order after (input_size, hidden_size) for the layers."""
    for key, value in zip(keys, args):
        if key in kwargs:
            raise TypeError(f"{name}: got multiple values for argument {key!r}")
        kwargs[key] = value
    return kwargs


class RNN(RNNBase):
    """h_t = tanh(x_t W_ih^T + b_ih + h_(t-1) W_hh^T + b_hh) (nonlinearity='relu': relu)."""

    def __init__(self, input_size, hidden_size, *args, nonlinearity="tanh", **kwargs):
        kwargs = _split_args("RNN", args, kwargs, ("num_layers", "nonlinearity", "bias", "batch_first", "dropout",
                                                   "bidirectional"))
        nonlinearity = kwargs.pop("nonlinearity", nonlinearity)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, **kwargs)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Input, forget, cell and output gates (PyTorch's order in weight_ih/weight_hh); returns
    (output, (h_n, c_n))."""

    def __init__(self, input_size, hidden_size, *args, **kwargs):
        kwargs = _split_args("LSTM", args, kwargs, ("num_layers", "bias", "batch_first", "dropout", "bidirectional",
                                                    "proj_size"))
        super().__init__("LSTM", input_size, hidden_size, **kwargs)


class GRU(RNNBase):
    """Reset, update and new gates (PyTorch's order)."""

    def __init__(self, input_size, hidden_size, *args, **kwargs):
        kwargs = _split_args("GRU", args, kwargs, ("num_layers", "bias", "batch_first", "dropout", "bidirectional"))
        super().__init__("GRU", input_size, hidden_size, **kwargs)


class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, gates, dtype=None, device=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = _parameter(gates * hidden_size, input_size, dtype=dtype)
        self.weight_hh = _parameter(gates * hidden_size, hidden_size, dtype=dtype)
        self.bias_ih = _parameter(gates * hidden_size, dtype=dtype) if bias else None
        self.bias_hh = _parameter(gates * hidden_size, dtype=dtype) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _prepare(self, input, hx, count):
        """(input as (N, H_in), hidden states as (N, hidden), whether the input had a batch dim)."""
        name = type(self).__name__
        if input.ndim not in (1, 2) or input.shape[-1] != self.input_size:
            raise ValueError(f"{name}: expected input of shape (N, {self.input_size}) or ({self.input_size},), got "
                             f"{tuple(input.shape)}")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        if hx is None:
            states = [_zeros((x.shape[0], self.hidden_size), x) for _ in range(count)]
        else:
            states = list(hx) if count == 2 else [hx]
            states = [h if batched else h.unsqueeze(0) for h in states]
            for h in states:
                if tuple(h.shape) != (x.shape[0], self.hidden_size):
                    raise ValueError(f"{name}: hidden state of shape {tuple(h.shape)}, expected "
                                     f"{(x.shape[0], self.hidden_size) if batched else (self.hidden_size,)}")
        return x, states, batched

    def _weights(self):
        return self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", dtype=None, device=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        super().__init__(input_size, hidden_size, bias, 1, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, (h,), batched = self._prepare(input, hx, 1)
        h = _cells.rnn_cell(x, h, *self._weights(), nonlinearity=self.nonlinearity)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, dtype=None, device=None):
        super().__init__(input_size, hidden_size, bias, 4, dtype)

    def forward(self, input, hx=None):
        x, (h, c), batched = self._prepare(input, hx, 2)
        h, c = _cells.lstm_cell(x, h, c, *self._weights())
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, dtype=None, device=None):
        super().__init__(input_size, hidden_size, bias, 3, dtype)

    def forward(self, input, hx=None):
        x, (h,), batched = self._prepare(input, hx, 1)
        h = _cells.gru_cell(x, h, *self._weights())
        return h if batched else h.squeeze(0)
