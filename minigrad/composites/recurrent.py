"""One time step of the recurrent cells, PyTorch's equations (its gate order and bias placement), composed
from linear, sigmoid, tanh and relu: the backward through time is the chain rule through these steps.

    RNN    h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)            (or relu)
    LSTM   i, f, g, o = split(x W_ih^T + b_ih + h W_hh^T + b_hh)   four gates, in that order
           c' = sigmoid(f) * c + sigmoid(i) * tanh(g),   h' = sigmoid(o) * tanh(c')
    GRU    r, z, n from x W_ih^T + b_ih and h W_hh^T + b_hh        three gates, in that order
           r = sigmoid(x_r + h_r),  z = sigmoid(x_z + h_z),  n = tanh(x_n + r * h_n)
           h' = (1 - z) * n + z * h
"""
from .activations import sigmoid
from .linear import linear


def rnn_cell(x, h, w_ih, w_hh, b_ih, b_hh, nonlinearity="tanh"):
    pre = linear(x, w_ih, b_ih) + linear(h, w_hh, b_hh)
    return pre.tanh() if nonlinearity == "tanh" else pre.relu()


def lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh):
    gates = linear(x, w_ih, b_ih) + linear(h, w_hh, b_hh)  # (N, 4 hidden)
    i, f, g, o = gates.chunk(4, -1)
    c_next = sigmoid(f) * c + sigmoid(i) * g.tanh()
    return sigmoid(o) * c_next.tanh(), c_next


def gru_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    x_r, x_z, x_n = linear(x, w_ih, b_ih).chunk(3, -1)
    h_r, h_z, h_n = linear(h, w_hh, b_hh).chunk(3, -1)
    r = sigmoid(x_r + h_r)
    z = sigmoid(x_z + h_z)
    n = (x_n + r * h_n).tanh()
    return (1 - z) * n + z * h
