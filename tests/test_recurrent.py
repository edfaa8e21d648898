"""nn.RNN, LSTM, GRU and their cells: PyTorch's parameters, shapes, initialisation and outputs.

Without PyTorch: gradcheck and gradgradcheck in float64, one step against the equations written out in
NumPy, the state layout (a bidirectional stack's h_n, batch_first). With PyTorch: a PyTorch state_dict
loaded into minigrad's module gives PyTorch's outputs and gradients to float32 precision."""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn
from minigrad.autograd import gradcheck, gradgradcheck

from conftest import torch

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


@pytest.fixture
def f64():
    previous = mg.get_default_dtype()
    mg.set_default_dtype(mg.float64)
    yield
    mg.set_default_dtype(previous)


def test_parameters_as_pytorch_names_shapes_and_init():
    lstm = nn.LSTM(3, 5, num_layers=2, bidirectional=True)
    shapes = {k: tuple(v.shape) for k, v in lstm.state_dict().items()}
    assert list(shapes)[:5] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_ih_l0_reverse"]
    assert shapes["weight_ih_l0"] == (20, 3) and shapes["weight_hh_l0"] == (20, 5)
    assert shapes["weight_ih_l1_reverse"] == (20, 10) and shapes["bias_hh_l1_reverse"] == (20,)
    assert len(shapes) == 16
    bound = 1 / math.sqrt(5)
    values = np.concatenate([p.detach().numpy().ravel() for p in lstm.parameters()])
    assert np.abs(values).max() <= bound and np.abs(values).max() > 0.9 * bound  # U(-1/sqrt(h), 1/sqrt(h))
    assert [k for k in nn.GRU(2, 4, bias=False).state_dict()] == ["weight_ih_l0", "weight_hh_l0"]
    assert tuple(nn.GRU(2, 4).weight_ih_l0.shape) == (12, 2)
    assert [k for k in nn.LSTMCell(2, 3).state_dict()] == ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]
    assert tuple(nn.LSTMCell(2, 3).weight_hh.shape) == (12, 3)


def test_one_step_by_the_equations(f64):
    rng = np.random.default_rng(0)
    x, h, c = rng.standard_normal((2, 3)), rng.standard_normal((2, 4)), rng.standard_normal((2, 4))
    cell = nn.LSTMCell(3, 4)
    w_ih, w_hh, b_ih, b_hh = (p.detach().numpy() for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh))
    gates = x @ w_ih.T + b_ih + h @ w_hh.T + b_hh
    i, f, g, o = np.split(gates, 4, axis=1)
    c_next = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    h_next = _sigmoid(o) * np.tanh(c_next)
    got_h, got_c = cell(mg.tensor(x), (mg.tensor(h), mg.tensor(c)))
    np.testing.assert_allclose(got_h.detach().numpy(), h_next, atol=1e-12)
    np.testing.assert_allclose(got_c.detach().numpy(), c_next, atol=1e-12)

    gru = nn.GRUCell(3, 4)
    w_ih, w_hh, b_ih, b_hh = (p.detach().numpy() for p in (gru.weight_ih, gru.weight_hh, gru.bias_ih, gru.bias_hh))
    xr, xz, xn = np.split(x @ w_ih.T + b_ih, 3, axis=1)
    hr, hz, hn = np.split(h @ w_hh.T + b_hh, 3, axis=1)
    r, z = _sigmoid(xr + hr), _sigmoid(xz + hz)
    expected = (1 - z) * np.tanh(xn + r * hn) + z * h
    np.testing.assert_allclose(gru(mg.tensor(x), mg.tensor(h)).detach().numpy(), expected, atol=1e-12)

    rnn = nn.RNNCell(3, 4, nonlinearity="relu")
    w_ih, w_hh, b_ih, b_hh = (p.detach().numpy() for p in (rnn.weight_ih, rnn.weight_hh, rnn.bias_ih, rnn.bias_hh))
    expected = np.maximum(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh, 0)
    np.testing.assert_allclose(rnn(mg.tensor(x), mg.tensor(h)).detach().numpy(), expected, atol=1e-12)


def test_sequence_layout(f64):
    """output[t] is the last layer's h at step t; h_n holds each layer and direction's last state."""
    rnn = nn.RNN(3, 4, num_layers=2, bidirectional=True)
    x = mg.tensor(np.random.default_rng(1).standard_normal((5, 2, 3)))
    out, h_n = rnn(x)
    assert out.shape == (5, 2, 8) and h_n.shape == (4, 2, 4)
    np.testing.assert_array_equal(out[-1, :, :4].detach().numpy(), h_n[2].detach().numpy())  # forward: last step
    np.testing.assert_array_equal(out[0, :, 4:].detach().numpy(), h_n[3].detach().numpy())  # reverse: first step
    rnn.batch_first = True
    out_bf, h_bf = rnn(x.transpose(0, 1))
    np.testing.assert_array_equal(out_bf.transpose(0, 1).detach().numpy(), out.detach().numpy())
    np.testing.assert_array_equal(h_bf.detach().numpy(), h_n.detach().numpy())  # h_n is never batch-first
    rnn.batch_first = False
    single, h1 = rnn(x[:, 0])  # one sequence without a batch dim: (L, H_in)
    assert single.shape == (5, 8) and h1.shape == (4, 4)
    np.testing.assert_allclose(single.detach().numpy(), out[:, 0].detach().numpy(), atol=1e-12)


GRAD_MODULES = {
    "rnn_tanh": lambda: nn.RNN(2, 3, num_layers=2),
    "rnn_relu_bidirectional": lambda: nn.RNN(2, 3, nonlinearity="relu", bidirectional=True),
    "lstm": lambda: nn.LSTM(2, 3, num_layers=2),
    "lstm_bidirectional": lambda: nn.LSTM(2, 2, bidirectional=True),
    "gru": lambda: nn.GRU(2, 3, batch_first=True, bias=False),
}


@pytest.mark.parametrize("name", sorted(GRAD_MODULES))
def test_gradients_every_order(name, f64):
    mg.manual_seed(0)
    module = GRAD_MODULES[name]()
    params = list(module.parameters())
    rng = np.random.default_rng(2)
    x = mg.tensor(rng.standard_normal((3, 2, 2)) + 0.3, requires_grad=True)

    weights = tuple(mg.tensor(p.detach().numpy(), requires_grad=True) for p in params)
    # fast mode: random directions and a sample of each parameter's elements (a stack has hundreds)
    assert gradcheck(lambda x, *w: _through(module, x, params, w), (x,) + weights, fast_mode=True)
    if name in ("rnn_tanh", "gru", "lstm"):  # second order: one layer, two steps (relu's is 0 where it exists)
        module = type(module)(2, 2)
        params = list(module.parameters())
        small = mg.tensor(rng.standard_normal((2, 1, 2)), requires_grad=True)
        first = mg.tensor(params[0].detach().numpy(), requires_grad=True)
        assert gradgradcheck(lambda x, w: _through(module, x, params, (w,)), (small, first), fast_mode=True)


def _through(module, x, params, weights):
    """The module's outputs as a function of x and (the first len(weights)) parameters: each given Tensor
    stands in for its parameter during this call (the module reads its parameters by attribute)."""
    names = [n for n, _ in module.named_parameters()][:len(weights)]
    for name, w in zip(names, weights):
        module._parameters[name] = w
    try:
        out, state = module(x)
    finally:
        for name, p in zip(names, params):
            module._parameters[name] = p
    h = state[0] if isinstance(state, tuple) else state
    return out, h


@pytest.mark.parametrize("cell", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_gradients(cell, f64):
    module = getattr(nn, cell)(2, 3)
    rng = np.random.default_rng(3)
    x = mg.tensor(rng.standard_normal((2, 2)), requires_grad=True)
    h = mg.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    hx = (h, h * 0.5) if cell == "LSTMCell" else h
    fn = lambda x, h: module(x, (h, h * 0.5) if cell == "LSTMCell" else h)  # noqa: E731
    assert gradcheck(fn, (x, h))
    assert gradgradcheck(fn, (x, h))
    assert module(x, hx) is not None


def test_errors():
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size, got 4 >= 4"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="Expected hidden size \\(1, 2, 2\\) for h_0"):
        nn.LSTM(3, 4, proj_size=2)(mg.randn(5, 2, 3), (mg.zeros(1, 2, 4), mg.zeros(1, 2, 4)))
    with pytest.raises(ValueError, match="input.size\\(-1\\) must be equal to input_size. Expected 3, got 5"):
        nn.GRU(3, 4)(mg.randn(2, 1, 5))
    with pytest.raises(ValueError, match="Expected hidden size \\(1, 2, 4\\) for h_0"):
        nn.RNN(3, 4)(mg.randn(5, 2, 3), mg.zeros(2, 2, 4))
    with pytest.raises(TypeError, match="hx must be a tuple"):
        nn.LSTM(3, 4)(mg.randn(5, 2, 3), mg.zeros(1, 2, 4))
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="gelu")
    with pytest.raises(TypeError, match="packed sequences are not supported"):
        nn.LSTM(3, 4)([mg.randn(2, 3)])


CONFIGS = [
    ("RNN", dict(num_layers=2, nonlinearity="tanh"), False),
    ("RNN", dict(nonlinearity="relu", bidirectional=True), False),
    ("LSTM", dict(num_layers=2, bidirectional=True), True),
    ("LSTM", dict(batch_first=True, bias=False), True),
    ("GRU", dict(num_layers=3, batch_first=True), True),
    ("GRU", dict(bidirectional=True, num_layers=2), False),
]


@needs_torch
@pytest.mark.parametrize("case", range(len(CONFIGS)))
def test_pytorch_state_dict_gives_pytorch_outputs(case):
    name, kwargs, with_state = CONFIGS[case]
    torch.manual_seed(case)
    theirs = getattr(torch.nn, name)(4, 5, **kwargs)
    ours = getattr(nn, name)(4, 5, **kwargs)
    ours.load_state_dict({k: mg.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    assert list(ours.state_dict()) == list(theirs.state_dict())
    rng = np.random.default_rng(case)
    shape = (3, 6, 4) if kwargs.get("batch_first") else (6, 3, 4)
    x = rng.standard_normal(shape).astype(np.float32)
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    h0 = rng.standard_normal((layers, 3, 5)).astype(np.float32)
    results = []
    for lib, module in ((mg, ours), (torch, theirs)):
        xt = lib.tensor(x, requires_grad=True)
        hx = None
        if with_state:
            hx = (lib.tensor(h0), lib.tensor(h0 * 0.5)) if name == "LSTM" else lib.tensor(h0)
        out, state = module(xt, hx)
        states = state if isinstance(state, tuple) else (state,)
        loss = (out * lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)).astype(np.float32))).sum()
        loss = loss + sum((s * s).sum() for s in states)
        loss.backward()
        grads = [p.grad.numpy() for _, p in module.named_parameters()]
        results.append([out.detach().numpy(), *(s.detach().numpy() for s in states), xt.grad.numpy(), *grads])
    for ours_v, theirs_v in zip(*results):
        np.testing.assert_allclose(ours_v, theirs_v, rtol=2e-5, atol=2e-5)


@needs_torch
@pytest.mark.parametrize("cell", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_as_pytorch(cell):
    torch.manual_seed(0)
    theirs = getattr(torch.nn, cell)(4, 5)
    ours = getattr(nn, cell)(4, 5)
    ours.load_state_dict({k: mg.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    outs = []
    for lib, module in ((mg, ours), (torch, theirs)):
        out = module(lib.tensor(x))
        out = out if isinstance(out, tuple) else (out,)
        sum((o * o).sum() for o in out).backward()
        outs.append([o.detach().numpy() for o in out] + [p.grad.numpy() for _, p in module.named_parameters()])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)
    unbatched = ours(mg.tensor(x[0]))
    assert (unbatched[0] if isinstance(unbatched, tuple) else unbatched).shape == (5,)


def test_dropout_between_layers_only():
    """dropout applies to the outputs of every layer but the last, while training (PyTorch's rule)."""
    ours = nn.LSTM(3, 4, num_layers=1, dropout=0.5)  # one layer: dropout changes nothing (PyTorch warns)
    x = mg.randn(5, 2, 3)
    np.testing.assert_array_equal(ours(x)[0].detach().numpy(), ours(x)[0].detach().numpy())
    two = nn.GRU(3, 4, num_layers=2, dropout=0.5)
    a, b = two(x)[0].detach().numpy(), two(x)[0].detach().numpy()
    assert not np.array_equal(a, b)  # training: the layer-1 inputs are dropped at random
    two.eval()
    np.testing.assert_array_equal(two(x)[0].detach().numpy(), two(x)[0].detach().numpy())


def test_pad_sequence_and_packing_refused():
    from minigrad.nn.utils import rnn
    a = mg.tensor([[1.0, 2.0]], requires_grad=True)
    b = mg.tensor([[3.0, 4.0], [5.0, 6.0], [7.0, 8.0]], requires_grad=True)
    padded = rnn.pad_sequence([a, b], batch_first=True, padding_value=-1.0)
    assert padded.tolist() == [[[1.0, 2.0], [-1.0, -1.0], [-1.0, -1.0]], [[3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]]
    assert rnn.pad_sequence([a, b]).shape == (3, 2, 2)
    assert rnn.pad_sequence([a, b], padding_side="left")[:, 0].tolist() == [[0.0, 0.0], [0.0, 0.0], [1.0, 2.0]]
    (padded * mg.arange(12.0).reshape(2, 3, 2)).sum().backward()
    assert a.grad.tolist() == [[0.0, 1.0]] and b.grad.tolist() == [[6.0, 7.0], [8.0, 9.0], [10.0, 11.0]]
    with pytest.raises(NotImplementedError, match="pack_padded_sequence is not supported by minigrad: .* padded"):
        rnn.pack_padded_sequence(padded, [1, 3], batch_first=True)
    import subprocess
    import sys
    code = ("import sys, minigrad; sys.modules['torch'] = minigrad; import torch.nn.utils.rnn; "
            "from torch.nn.utils.rnn import pad_sequence; assert pad_sequence is minigrad.nn.utils.rnn.pad_sequence")
    subprocess.run([sys.executable, "-c", code], check=True)


@needs_torch
def test_pad_sequence_as_pytorch():
    rng = np.random.default_rng(9)
    seqs = [rng.standard_normal((n, 3)) for n in (2, 5, 1)]
    for kwargs in (dict(), dict(batch_first=True, padding_value=2.5), dict(padding_side="left")):
        ours = mg.nn.utils.rnn.pad_sequence([mg.tensor(s) for s in seqs], **kwargs)
        theirs = torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs], **kwargs)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_lstm_with_projections_by_the_equations(f64):
    # proj_size: h_t = W_hr (o * tanh(c_t)), h of proj_size dims feeds the next step and layer; c keeps hidden_size
    lstm = nn.LSTM(3, 5, num_layers=2, proj_size=2)
    shapes = {k: tuple(v.shape) for k, v in lstm.state_dict().items()}
    assert list(shapes) == [f"{kind}_l{k}" for k in (0, 1) for kind in
                            ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")]
    assert shapes["weight_hh_l0"] == (20, 2) and shapes["weight_hr_l0"] == (2, 5) and shapes["weight_ih_l1"] == (20, 2)
    assert [len(w) for w in lstm.all_weights] == [5, 5] and "proj_size=2" in repr(lstm)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 2, 3))
    weights = {k: v.detach().numpy() for k, v in lstm.state_dict().items()}
    layer_input = x
    for k in (0, 1):
        h, c, outs = np.zeros((2, 2)), np.zeros((2, 5)), []
        for t in range(4):
            gates = (layer_input[t] @ weights[f"weight_ih_l{k}"].T + weights[f"bias_ih_l{k}"]
                     + h @ weights[f"weight_hh_l{k}"].T + weights[f"bias_hh_l{k}"])
            i, f, g, o = np.split(gates, 4, axis=1)
            c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
            h = (_sigmoid(o) * np.tanh(c)) @ weights[f"weight_hr_l{k}"].T
            outs.append(h)
        layer_input = np.stack(outs)
    output, (h_n, c_n) = lstm(mg.tensor(x))
    assert tuple(output.shape) == (4, 2, 2) and tuple(h_n.shape) == (2, 2, 2) and tuple(c_n.shape) == (2, 2, 5)
    np.testing.assert_allclose(output.detach().numpy(), layer_input, atol=1e-12)
    np.testing.assert_allclose(c_n[1].detach().numpy(), c, atol=1e-12)
    small = nn.LSTM(2, 3, proj_size=1, bidirectional=True, batch_first=True)
    xs = mg.tensor(rng.standard_normal((2, 3, 2)), requires_grad=True)
    assert gradcheck(lambda x, w: small(x)[0] * w.sum(), (xs, small.weight_hr_l0_reverse))
    assert gradgradcheck(lambda x: small(x)[1][0], (xs,))


@needs_torch
def test_lstm_with_projections_loads_pytorch_state_dict():
    for options in (dict(proj_size=2), dict(proj_size=3, num_layers=2, bidirectional=True, batch_first=True, bias=False)):
        torch.manual_seed(0)
        theirs = torch.nn.LSTM(4, 5, **options).double()
        ours = nn.LSTM(4, 5, **options).double()
        state = theirs.state_dict()
        assert list(ours.state_dict()) == list(state)
        ours.load_state_dict({k: mg.tensor(v.numpy()) for k, v in state.items()})
        x = np.random.default_rng(2).standard_normal((3, 2, 4))
        out_t, (h_t, c_t) = theirs(torch.tensor(x))
        out_m, (h_m, c_m) = ours(mg.tensor(x))
        for a, b in ((out_t, out_m), (h_t, h_m), (c_t, c_m)):
            np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), atol=1e-12)
        (out_t.sum() + h_t.sum()).backward()
        (out_m.sum() + h_m.sum()).backward()
        for name, p in theirs.named_parameters():
            np.testing.assert_allclose(getattr(ours, name).grad.numpy(), p.grad.numpy(), atol=1e-10, err_msg=name)
        assert repr(ours) == repr(theirs)
