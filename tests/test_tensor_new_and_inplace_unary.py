"""Tensor.new, index_add/index_add_, the in-place unary ops (sin_, cos_, erf_, rsqrt_) with their version
and graph rules, and nn.DataParallel: run on minigrad and (where installed) PyTorch."""
import math

import numpy as np
import pytest


def test_new_is_pytorchs_legacy_constructor(lib):
    x = lib.tensor([1.0, 2.0], dtype=lib.float64)
    assert tuple(x.new().shape) == (0,)
    made = x.new(2, 3)
    assert tuple(made.shape) == (2, 3) and made.dtype == lib.float64
    assert tuple(x.new(lib.Size([1, 4])).shape) == (1, 4)
    assert x.new([1, 2]).tolist() == [1.0, 2.0] and x.new([1, 2]).dtype == lib.float64
    assert x.new((2, 3)).tolist() == [2.0, 3.0]  # a tuple is data, a Size is a shape


def test_index_add_in_place_and_out_of_place_with_gradients(lib):
    base = lib.zeros(3, 2, dtype=lib.float64, requires_grad=True)
    source = lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=lib.float64, requires_grad=True)
    index = lib.tensor([0, 2, 0])
    y = base.clone()
    y.index_add_(0, index, source, alpha=2)
    np.testing.assert_allclose(y.detach().numpy(), [[12.0, 16.0], [0.0, 0.0], [6.0, 8.0]])  # rows 0 and 2 add up
    weights = lib.arange(6.0, dtype=lib.float64).reshape(3, 2)
    (y * weights).sum().backward()
    np.testing.assert_allclose(base.grad.numpy(), weights.numpy())
    np.testing.assert_allclose(source.grad.numpy(), 2 * weights.numpy()[[0, 2, 0]])
    out = lib.index_add(lib.zeros(2, 3), 1, lib.tensor([2]), lib.ones(2, 1))
    np.testing.assert_allclose(out.numpy(), [[0, 0, 1], [0, 0, 1]])
    assert lib.autograd.gradcheck(lambda b, s: b.index_add(1, lib.tensor([1, 1]), s, alpha=0.5),
                                  (lib.rand(2, 3, dtype=lib.float64, requires_grad=True),
                                   lib.rand(2, 2, dtype=lib.float64, requires_grad=True)))


@pytest.mark.parametrize("name, value, derivative", [
    ("sin", math.sin, math.cos),
    ("cos", math.cos, lambda v: -math.sin(v)),
    ("erf", math.erf, lambda v: 2 / math.sqrt(math.pi) * math.exp(-v * v)),
    ("rsqrt", lambda v: v ** -0.5, lambda v: -0.5 * v ** -1.5),
])
def test_unary_in_place_ops_change_the_tensor_bump_its_version_and_record_the_graph(lib, name, value, derivative):
    values = [0.4, 1.3]
    leaf = lib.tensor(values, dtype=lib.float64, requires_grad=True)
    y = leaf * 1
    version = y._version
    assert getattr(y, name + "_")() is y and y._version == version + 1
    np.testing.assert_allclose(y.detach().numpy(), [value(v) for v in values])
    y.sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), [derivative(v) for v in values])
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        getattr(lib.tensor(values, requires_grad=True), name + "_")()


def test_data_parallel_is_the_module_itself_on_the_cpu(lib):
    layer = lib.nn.Linear(2, 3)
    wrapped = lib.nn.DataParallel(layer)
    assert wrapped.module is layer
    x = lib.ones(4, 2)
    np.testing.assert_allclose(wrapped(x).detach().numpy(), layer(x).detach().numpy())
