"""grad_fn names as PyTorch prints them (type(y.grad_fn).__name__ and y.grad_fn.name()).

The table below was read off PyTorch 2.13 (CPU); each case runs on minigrad and, where PyTorch is
installed, on PyTorch too, so the table itself is checked against the library it copies. One op may
have several names by how it is called (x.sum() SumBackward0, x.sum(1) SumBackward1; x[0]
SelectBackward0, x[:, 1:] SliceBackward0): minigrad records each with its one op and gives the node the
name of the use (function.named_node).
"""
import numpy as np
import pytest

# case: (what is computed from x (2x3 float64), w (2x3), mask (2x3 bool), PyTorch's node name)
NAMES = {
    "x.sum()": (lambda T, F, x, w, m: x.sum(), "SumBackward0"),
    "x.sum(1)": (lambda T, F, x, w, m: x.sum(1), "SumBackward1"),
    "x.sum((0, 1))": (lambda T, F, x, w, m: x.sum((0, 1)), "SumBackward1"),
    "x.mean()": (lambda T, F, x, w, m: x.mean(), "MeanBackward0"),
    "x.mean(0, keepdim=True)": (lambda T, F, x, w, m: x.mean(0, keepdim=True), "MeanBackward1"),
    "x.max()": (lambda T, F, x, w, m: x.max(), "MaxBackward1"),
    "x.abs().max()": (lambda T, F, x, w, m: x.abs().max(), "MaxBackward1"),
    "x.min()": (lambda T, F, x, w, m: x.min(), "MinBackward1"),
    "x.max(1).values": (lambda T, F, x, w, m: x.max(1)[0], "MaxBackward0"),
    "x.min(1).values": (lambda T, F, x, w, m: x.min(1)[0], "MinBackward0"),
    "x.amax(1)": (lambda T, F, x, w, m: x.amax(1), "AmaxBackward0"),
    "x.amin(1)": (lambda T, F, x, w, m: x.amin(1), "AminBackward0"),
    "x.t()": (lambda T, F, x, w, m: x.t(), "TBackward0"),
    "x.unsqueeze(0)": (lambda T, F, x, w, m: x.unsqueeze(0), "UnsqueezeBackward0"),
    "x[None].squeeze(0)": (lambda T, F, x, w, m: x[None].squeeze(0), "SqueezeBackward1"),
    "x[None].squeeze()": (lambda T, F, x, w, m: x[None].squeeze(), "SqueezeBackward0"),
    "x[0]": (lambda T, F, x, w, m: x[0], "SelectBackward0"),
    "x[:, 1:]": (lambda T, F, x, w, m: x[:, 1:], "SliceBackward0"),
    "x[0, 1:]": (lambda T, F, x, w, m: x[0, 1:], "SliceBackward0"),
    "x[1:, 0]": (lambda T, F, x, w, m: x[1:, 0], "SelectBackward0"),
    "x[:, None]": (lambda T, F, x, w, m: x[:, None], "UnsqueezeBackward0"),
    "x[...]": (lambda T, F, x, w, m: x[...], "AliasBackward0"),
    "x[:]": (lambda T, F, x, w, m: x[:], "SliceBackward0"),
    "x[[0, 1]]": (lambda T, F, x, w, m: x[[0, 1]], "IndexBackward0"),
    "x.narrow(1, 0, 2)": (lambda T, F, x, w, m: x.narrow(1, 0, 2), "SliceBackward0"),
    "x.split(1)[0]": (lambda T, F, x, w, m: x.split(1)[0], "SplitBackward0"),
    "x.split([1, 2], 1)[0]": (lambda T, F, x, w, m: x.split([1, 2], 1)[0], "SplitWithSizesBackward0"),
    "x.chunk(3, 1)[0]": (lambda T, F, x, w, m: x.chunk(3, 1)[0], "SplitBackward0"),
    "x.unbind()[0]": (lambda T, F, x, w, m: x.unbind()[0], "UnbindBackward0"),
    "x.tril()": (lambda T, F, x, w, m: x.tril(), "TrilBackward0"),
    "x.triu()": (lambda T, F, x, w, m: x.triu(), "TriuBackward0"),
    "x.index_select(1, idx)": (lambda T, F, x, w, m: x.index_select(1, T.tensor([0, 2])), "IndexSelectBackward0"),
    "x.sort().values": (lambda T, F, x, w, m: x.sort()[0], "SortBackward0"),
    "x.topk(2).values": (lambda T, F, x, w, m: x.topk(2)[0], "TopkBackward0"),
    "x.scatter_add(1, i, w)": (lambda T, F, x, w, m: x.scatter_add(1, T.tensor([[0], [1]]), w[:, :1]),
                               "ScatterAddBackward0"),
    "x.logsumexp(1)": (lambda T, F, x, w, m: x.logsumexp(1), "LogsumexpBackward0"),
    "1 - x": (lambda T, F, x, w, m: 1 - x, "RsubBackward1"),
    "2 ** x": (lambda T, F, x, w, m: 2 ** x, "PowBackward2"),
    "2 / x": (lambda T, F, x, w, m: 2 / x, "MulBackward0"),
    "x / 2": (lambda T, F, x, w, m: x / 2, "DivBackward0"),
    "x ** w": (lambda T, F, x, w, m: x.abs() ** w, "PowBackward1"),
    "x @ w[0]": (lambda T, F, x, w, m: x @ w[0], "MvBackward0"),
    "x[0] @ w[0]": (lambda T, F, x, w, m: x[0] @ w[0], "DotBackward0"),
    "x @ w.t()": (lambda T, F, x, w, m: x @ w.t(), "MmBackward0"),
    "bmm": (lambda T, F, x, w, m: x[None].bmm(w.t()[None]), "BmmBackward0"),
    "F.linear(x, w)": (lambda T, F, x, w, m: F.linear(x, w), "MmBackward0"),
    "F.linear(x, w, b)": (lambda T, F, x, w, m: F.linear(x, w, w[0, :2]), "AddmmBackward0"),
    "F.mse_loss": (lambda T, F, x, w, m: F.mse_loss(x, w), "MseLossBackward0"),
    "F.mse_loss none": (lambda T, F, x, w, m: F.mse_loss(x, w, reduction="none"), "MseLossBackward0"),
    "F.binary_cross_entropy_with_logits": (
        lambda T, F, x, w, m: F.binary_cross_entropy_with_logits(x, m.to(x.dtype)),
        "BinaryCrossEntropyWithLogitsBackward0"),
    "F.cross_entropy": (lambda T, F, x, w, m: F.cross_entropy(x, T.tensor([0, 2])), "NllLossBackward0"),
    "x.exp()": (lambda T, F, x, w, m: x.exp(), "ExpBackward0"),
    "x.sigmoid()": (lambda T, F, x, w, m: x.sigmoid(), "SigmoidBackward0"),
    "x.clamp(min=0)": (lambda T, F, x, w, m: x.clamp(min=0), "ClampBackward1"),
    "x.masked_fill(m, 0)": (lambda T, F, x, w, m: x.masked_fill(m, 0.0), "MaskedFillBackward0"),
    "x.to(float32)": (lambda T, F, x, w, m: x.to(T.float32), "ToCopyBackward0"),
    "x.t().contiguous()": (lambda T, F, x, w, m: x.t().contiguous(), "CloneBackward0"),
    "x.cumsum(1)": (lambda T, F, x, w, m: x.cumsum(1), "CumsumBackward0"),
    "x.prod(1)": (lambda T, F, x, w, m: x.prod(1), "ProdBackward1"),
    "x.expand(2, 2, 3)": (lambda T, F, x, w, m: x.expand(2, 2, 3), "ExpandBackward0"),
}


@pytest.mark.parametrize("case", list(NAMES))
def test_node_name_is_pytorchs(lib, case):
    fn, name = NAMES[case]
    x = lib.tensor([[0.3, -1.2, 2.0], [0.5, 0.1, -0.7]], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([[0.2, 0.4, -0.1], [0.3, -0.5, 0.6]], dtype=lib.float64, requires_grad=True)
    mask = lib.tensor([[True, False, True], [False, True, False]])
    node = fn(lib, lib.nn.functional, x, w, mask).grad_fn
    assert (type(node).__name__, node.name()) == (name, name)


def test_a_renamed_node_keeps_its_ops_gradient():
    """The name is all that changes: x.max() (MaxBackward1, recorded by amax) still shares the gradient
    among ties, and x[0, 1:] (SliceBackward0) still sends it to its places."""
    import minigrad as mg

    x = mg.tensor([[1.0, 3.0], [3.0, 0.0]], requires_grad=True)
    x.max().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 0.5], [0.5, 0]])
    x.grad = None
    x[0, 1:].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 1], [0, 0]])
    assert mg.gradgradcheck(lambda t: (t[1:, 0] ** 3).sum() + t.t().sum(1).pow(2).sum(),
                            (mg.randn(3, 2, dtype=mg.float64, requires_grad=True),))
