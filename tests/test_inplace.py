"""In-place ops and augmented assignment, with PyTorch's rules (issue 21).

Each behaviour is written once as `fn(lib)` and run with lib = minigrad and, where installed, with
lib = torch; the expected values are worked out by hand (or by a NumPy loop written here), so the
tests stand without PyTorch too.
"""
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim

try:
    import torch
except ImportError:
    torch = None


def values(t):
    return t.detach().numpy().tolist()


# ---- augmented assignment under no_grad: the parameter-update habit -----------------------------
def test_augmented_assignment_under_no_grad_updates_the_same_leaf_in_place(lib):
    a = lib.tensor([1.0, 2.0, 4.0], requires_grad=True)
    same, alias = a, a.detach()  # another reference, and a tensor sharing the storage
    a.grad = lib.tensor([10.0, 20.0, 40.0])
    with lib.no_grad():
        a -= 0.5 * a.grad
        a += 1.0
        a *= 2.0
        a /= 4.0
    assert a is same and a.is_leaf and a.requires_grad and a.grad_fn is None
    assert values(a) == [-1.5, -3.5, -7.5]  # ((1 - 5 + 1) * 2) / 4, ...
    assert values(alias) == [-1.5, -3.5, -7.5]  # the storage itself changed
    (a * a).sum().backward()  # still a leaf that collects gradients
    assert values(a.grad) == [10.0 - 3.0, 20.0 - 7.0, 40.0 - 15.0]  # 2a, accumulated onto the grad set above


def test_power_assignment_is_in_place_too(lib):
    a = lib.tensor([1.0, 2.0, 3.0])
    alias = a.detach()
    a **= 2
    assert values(alias) == [1.0, 4.0, 9.0]


def test_matmul_assignment_rebinds_as_in_pytorch(lib):
    # PyTorch has no __imatmul__: a @= m is a = a @ m, a new tensor
    a = lib.tensor([[1.0, 2.0]])
    before = a
    a @= lib.tensor([[0.0, 1.0], [1.0, 0.0]])
    assert values(a) == [[2.0, 1.0]] and values(before) == [[1.0, 2.0]]


def _polynomial_fit(lib, steps):
    """PyTorch's introductory loop ("Learning PyTorch with Examples", autograd section)."""
    x = lib.linspace(-math.pi, math.pi, 2000)
    y = lib.sin(x)
    a, b, c, d = (lib.tensor(v, requires_grad=True) for v in (0.1, -0.2, 0.3, -0.05))
    learning_rate = 1e-6
    losses = []
    for _ in range(steps):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with lib.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    return losses, [p.item() for p in (a, b, c, d)]


def _polynomial_fit_in_numpy(steps):
    """The same loop with the gradients written out by hand: dL/dp = sum(2 (y_pred - y) x^k)."""
    x = np.linspace(-math.pi, math.pi, 2000)
    y = np.sin(x)
    coefficients = np.array([0.1, -0.2, 0.3, -0.05])
    powers = np.stack([x ** k for k in range(4)])
    losses = []
    for _ in range(steps):
        residual = coefficients @ powers - y
        losses.append(float(np.sum(residual ** 2)))
        coefficients = coefficients - 1e-6 * (powers @ (2 * residual))
    return losses, coefficients.tolist()


def test_pytorchs_polynomial_fit_loop_runs_and_gives_its_numbers():
    steps = 400
    losses, coefficients = _polynomial_fit(mg, steps)
    want_losses, want_coefficients = _polynomial_fit_in_numpy(steps)  # float64: float32 drifts a little
    np.testing.assert_allclose(losses, want_losses, rtol=2e-4)
    np.testing.assert_allclose(coefficients, want_coefficients, rtol=2e-4, atol=1e-6)
    assert losses[-1] < losses[0] / 10
    if torch is not None:  # and PyTorch's own float32 run, step by step
        torch_losses, torch_coefficients = _polynomial_fit(torch, steps)
        np.testing.assert_allclose(losses, torch_losses, rtol=1e-5)
        np.testing.assert_allclose(coefficients, torch_coefficients, rtol=1e-5, atol=1e-7)


# ---- a leaf that requires grad, outside no_grad ----------------------------------------------------
LEAF_CHANGES = {
    "+=": lambda t: t.__iadd__(1.0),
    "-=": lambda t: t.__isub__(1.0),
    "*=": lambda t: t.__imul__(2.0),
    "/=": lambda t: t.__itruediv__(2.0),
    "**=": lambda t: t.__ipow__(2.0),
    "add_": lambda t: t.add_(1.0),
    "mul_": lambda t: t.mul_(2.0),
    "zero_": lambda t: t.zero_(),
    "fill_": lambda t: t.fill_(3.0),
    "clamp_": lambda t: t.clamp_(0.0, 1.0),
    "exp_": lambda t: t.exp_(),
    "masked_fill_": lambda t: t.masked_fill_(t > 1.5, 0.0),
    "setitem": lambda t: t.__setitem__(0, 5.0),
}


@pytest.mark.parametrize("change", sorted(LEAF_CHANGES))
def test_an_in_place_change_of_a_leaf_that_requires_grad_is_refused_outside_no_grad(lib, change):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        LEAF_CHANGES[change](w)
    assert values(w) == [1.0, 2.0] and w.is_leaf and w._version == 0


def test_an_in_place_change_of_a_view_of_such_a_leaf_is_refused(lib):
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place"):
        w[0:2].add_(1.0)
    assert values(w) == [1.0, 2.0, 3.0]


# ---- a tensor inside a graph: its history continues through the op -------------------------------
def test_in_place_ops_on_a_tensor_in_the_graph_give_pytorchs_gradients(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    z = y + 1  # recorded before the change: it used y's old value
    y *= 3
    y.add_(x)  # y = 6x + x = 7x
    assert values(y) == [7.0, 14.0, 21.0] and not y.is_leaf
    (z * 10 + y * y).sum().backward()
    # d/dx of 10 (2x + 1) + (7x)^2 = 20 + 98 x
    assert values(x.grad) == [118.0, 216.0, 314.0]


def test_unary_in_place_ops_in_the_graph(lib):
    x = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
    y = x * 1.0
    y.mul_(2.0)
    y.exp_()  # exp(2x); PyTorch's exp_ saves its output, so it has to be the last change before backward
    y.sum().backward()
    e = np.exp(2 * np.array([0.5, -1.0]))
    np.testing.assert_allclose(values(y), e, rtol=1e-12)
    np.testing.assert_allclose(values(x.grad), 2 * e, rtol=1e-12)
    x.grad = None
    y = x - 1.0
    y.sigmoid_()
    y.sum().backward()
    s = 1 / (1 + np.exp(-(np.array([0.5, -1.0]) - 1.0)))
    np.testing.assert_allclose(values(x.grad), s * (1 - s), rtol=1e-12)


def test_setitem_records_the_written_value_and_drops_the_overwritten_one(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = lib.zeros(2, 3)  # a plain buffer, filled from tensors that require grad (a common loop)
    out[0] = x * 2
    out[1, 1:] = x[:2] * x[:2]
    assert out.requires_grad and not out.is_leaf
    assert values(out) == [[2.0, 4.0, 6.0], [0.0, 1.0, 4.0]]
    (out * lib.tensor([[1.0, 1.0, 1.0], [5.0, 7.0, 11.0]])).sum().backward()
    assert values(x.grad) == [2.0 + 7 * 2 * 1.0, 2.0 + 11 * 2 * 2.0, 2.0]

    y = x * 3
    y[1] = 0.0  # the overwritten element no longer depends on x
    x.grad = None
    y.sum().backward()
    assert values(x.grad) == [3.0, 0.0, 3.0]


def test_copy_and_fill_in_the_graph(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 5
    y.copy_(x * x)  # y's old value is gone: the gradient comes through x * x only
    y.sum().backward()
    assert values(x.grad) == [2.0, 4.0]
    x.grad = None
    y = x * 5
    y.fill_(7.0)
    y.sum().backward()
    assert values(x.grad) == [0.0, 0.0]


def _in_place_chain(x, w):
    y = x * 1.0
    y.mul_(w)
    y.add_(x, alpha=0.5)
    y[0] = w[1] * 2
    y -= x * x
    y.tanh_()  # last: PyTorch's tanh_ saves its output
    return y


def test_a_chain_of_in_place_ops_passes_gradcheck():
    rng = np.random.default_rng(0)
    x = mg.tensor(rng.standard_normal(4), requires_grad=True)
    w = mg.tensor(rng.standard_normal(4), requires_grad=True)
    assert mg.gradcheck(_in_place_chain, [x, w])


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
def test_a_chain_of_in_place_ops_matches_pytorch():
    rng = np.random.default_rng(1)
    xs, ws, upstream = rng.standard_normal(4), rng.standard_normal(4), rng.standard_normal(4)
    results = []
    for lib_ in (mg, torch):
        x = lib_.tensor(xs, requires_grad=True)
        w = lib_.tensor(ws, requires_grad=True)
        y = _in_place_chain(x, w)
        (y * lib_.tensor(upstream)).sum().backward()
        results.append([values(y), values(x.grad), values(w.grad)])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-12)


# ---- never a silently wrong gradient --------------------------------------------------------------
OVERWRITES = {
    # an op saved the value that is then changed in place: PyTorch refuses at backward
    "saved output": lambda lib, x: _then(x.exp(), lambda y: y.add_(1.0), lambda y: y),
    "saved input": lambda lib, x: _changed_after(x * 2, lambda y: y * y, lambda y: y.add_(1.0)),
    "mul by itself": lambda lib, x: _then(x * 2, lambda y: y.mul_(y), lambda y: y),
}


def _then(y, change, result):
    change(y)
    return result(y)


def _changed_after(y, use, change):
    out = use(y)
    change(y)
    return out


@pytest.mark.parametrize("case", sorted(OVERWRITES))
def test_backward_refuses_when_a_saved_value_was_overwritten(lib, case):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    out = OVERWRITES[case](lib, x)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()
    assert x.grad is None


def test_in_place_on_a_view_in_the_graph_is_recorded_in_its_base(lib):
    # PyTorch's CopySlices: the base's history continues through the write into the view
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y[0:2].mul_(3.0)
    assert values(y) == [6.0, 12.0, 6.0] and type(y.grad_fn).__name__ == "CopySlices"
    y.sum().backward()
    assert values(x.grad) == [6.0, 6.0, 2.0]


def test_backward_through_a_view_of_a_tensor_changed_later_follows_the_base(lib):
    # the view's history is derived again from its base's (PyTorch: AsStridedBackward0 over MulBackward0)
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    v = y[0:2]
    y.mul_(3.0)
    assert values(v) == [6.0, 12.0]  # the view sees the new values, and its gradient follows them
    v.sum().backward()
    assert values(x.grad) == [6.0, 6.0, 0.0]


def test_views_share_storage_and_version_counter(lib):
    base = lib.zeros(2, 3)
    row, flat, t = base[1], base.view(-1), base.t()
    row.add_(1.0)
    flat[0] = 5.0
    t[2, 0] = 7.0
    assert values(base) == [[5.0, 0.0, 7.0], [1.0, 1.0, 1.0]]
    assert base._version == row._version == flat._version == 3


# ---- dtypes and shapes, as PyTorch ---------------------------------------------------------------
@pytest.mark.parametrize("make, change, words", [
    (lambda lib: lib.tensor([1, 2]), lambda t: t.__iadd__(0.5), "result type Float can't be cast to the desired output type Long"),
    (lambda lib: lib.tensor([1, 2]), lambda t: t.__itruediv__(2), "result type Float can't be cast to the desired output type Long"),
    (lambda lib: lib.tensor([True]), lambda t: t.__iadd__(1), "result type Long can't be cast to the desired output type Bool"),
    (lambda lib: lib.tensor([1, 2]), lambda t: t.mul_(lib_tensor_like(t, [0.5, 0.5])), "result type Float can't be cast"),
])
def test_in_place_arithmetic_refuses_a_result_of_a_higher_kind(lib, make, change, words):
    t = make(lib)
    before = values(t)
    with pytest.raises(RuntimeError, match=words):
        change(t)
    assert values(t) == before


def lib_tensor_like(t, data):
    return (mg if isinstance(t, mg.Tensor) else torch).tensor(data)


def test_in_place_casts_where_pytorch_does(lib):
    f32 = lib.tensor([1.0, 2.0])
    f32 += lib.tensor([0.25, 0.5], dtype=lib.float64)  # down within floats: allowed, stays float32
    assert f32.dtype == lib.float32 and values(f32) == [1.25, 2.5]
    ints = lib.tensor([1, 2])
    ints += lib.tensor([True, False])
    assert values(ints) == [2, 2]
    ints.copy_(lib.tensor([0.5, 1.7]))  # copies truncate, as PyTorch's
    assert values(ints) == [0, 1]
    ints[0] = 2.7
    assert values(ints) == [2, 1]


def test_in_place_shape_errors(lib):
    t = lib.ones(3)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        t += lib.ones(2, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single memory"):
        lib.ones(3).expand(2, 3).add_(1.0)
    assert values(t) == [1.0, 1.0, 1.0]


def test_an_element_taken_by_integer_indices_is_a_view_of_it(lib):
    """x[1] of a 1-D tensor (and m[1, 1]) is a 0-d view: changing it changes x, and x's changes show in it."""
    x = lib.zeros(3)
    x[1].fill_(5)
    x[2].copy_(lib.tensor(7.0))
    first = x[0]
    first += 1
    assert values(x) == [1.0, 5.0, 7.0]
    x.add_(1)
    assert values(first) == 2.0
    m = lib.zeros(2, 2)
    m[1, 1].add_(3)
    assert values(m) == [[0.0, 0.0], [0.0, 3.0]]
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (w[1] * w[2]).backward()  # the gradient of one element still goes to that element
    assert values(w.grad) == [0.0, 3.0, 2.0]


def test_logical_augmented_assignment_is_in_place(lib):
    """mask |= other changes the mask itself (every reference sees it), as PyTorch's in-place ops."""
    mask = lib.tensor([True, False, False])
    alias = mask
    mask |= lib.tensor([False, True, False])
    assert alias is mask and values(alias) == [True, True, False]
    mask &= lib.tensor([True, False, True])
    assert values(alias) == [True, False, False]


def test_bitwise_augmented_assignment_on_integers_as_pytorch(lib):
    """&=, |=, ^= are bitwise on integers (PyTorch's operators), in place; the result keeps the tensor's
    dtype, so bool &= uint8 (a uint8 result) is refused while uint8 &= bool works."""
    ints = lib.tensor([6, 3], dtype=lib.uint8)
    alias = ints
    ints |= lib.tensor([1, 8], dtype=lib.uint8)
    assert alias is ints and values(ints) == [7, 11] and ints.dtype == lib.uint8
    ints &= lib.tensor([True, False])
    assert values(ints) == [1, 0] and ints.dtype == lib.uint8
    ints ^= 3
    assert values(ints) == [2, 3]
    mask = lib.tensor([True, False])
    with pytest.raises((TypeError, RuntimeError)):
        mask &= lib.tensor([1, 2], dtype=lib.uint8)
    assert values(mask) == [True, False]
    with pytest.raises((TypeError, RuntimeError)):
        lib.tensor([1.0]).__ior__(lib.tensor([1.0]))  # floats have no bitwise or


# ---- a tensor an op saved, changed in place before backward: an error, not a wrong gradient ------
def test_changing_a_saved_parameter_before_backward_is_an_error_not_a_wrong_gradient():
    w = mg.randn(3, 2, requires_grad=True)
    x = mg.randn(4, 3, requires_grad=True)
    loss = (x @ w).sum()
    with mg.no_grad():
        w.sub_(0.1)
    with pytest.raises(RuntimeError, match=r"MatMul.*modified by an inplace operation: \[torch.FloatTensor \[3, 2\]\] "
                                           r"is at version 1; expected version 0 instead"):
        loss.backward()
    assert x.grad is None and w.grad is None  # nothing half-done


def test_optimizer_step_between_forward_and_backward_is_caught():
    model = nn.Linear(3, 2)
    opt = optim.SGD(model.parameters(), lr=0.1)
    x = mg.randn(4, 3)
    loss = model(x).sum()
    loss.backward(retain_graph=True)
    opt.step()
    with pytest.raises(RuntimeError, match="changed in place"):
        loss.backward()


def test_in_place_change_of_a_saved_output_or_constant_is_caught():
    x = mg.randn(3, requires_grad=True)
    y = x.exp()  # Exp saves its output
    with mg.no_grad():
        y.mul_(2.0)
    with pytest.raises(RuntimeError, match="Exp"):
        y.sum().backward()

    c = mg.tensor([1.0, 2.0, 3.0])  # a constant that Mul saves to differentiate x * c
    z = x * c
    c[0] = 10.0
    with pytest.raises(RuntimeError, match="Mul"):
        z.sum().backward()

    d = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = x.detach()  # shares x's data and version counter
    z = x * d  # d's gradient reads x, so x is saved (with d constant it would not be, as in PyTorch)
    with mg.no_grad():
        w.add_(1.0)
    with pytest.raises(RuntimeError, match="changed in place"):
        z.sum().backward()


def test_in_place_change_of_a_linear_input_or_of_embedding_ids_is_caught():
    layer = nn.Linear(3, 2)
    for shape in ((4, 3), (2, 4, 3)):  # the fused op works on a 2-D view of x: x itself must be watched
        x = mg.randn(*shape)
        loss = layer(x).sum()
        x.mul_(2.0)
        with pytest.raises(RuntimeError, match="Linear.*changed in place"):
            loss.backward()
    embed = nn.Embedding(5, 3)
    ids = mg.tensor([[1, 2, 2]])
    loss = embed(ids).sum()
    ids[0, 0] = 4
    with pytest.raises(RuntimeError, match="Embedding.*changed in place"):
        loss.backward()


def test_in_place_changes_that_backward_does_not_need_are_fine():
    x = mg.randn(3, requires_grad=True)
    c = mg.tensor([1.0, 2.0, 3.0])
    y = x + c  # Add saves nothing
    c.add_(5.0)
    y.sum().backward()
    assert np.array_equal(x.grad.numpy(), np.ones(3, dtype=np.float32))
    # clone() gives a copy that can be changed freely
    z = x.clone()
    w = x * z.detach().clone()
    with mg.no_grad():
        z.mul_(3.0)
    w.sum().backward()


def test_in_place_on_a_leaf_is_refused_with_advice_and_on_a_tensor_in_the_graph_recorded():
    x = mg.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="no_grad"):
        x.add_(1.0)
    y = x * 2
    y.mul_(2.0)  # as PyTorch: y's history continues through the in-place op (above)
    y[0] = 1.0
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 4.0, 4.0]

# ---- in-place ops: shapes that do not fit, floats into an integer tensor, fill_ of a non-number ---
INPLACE = {
    "add_": lambda t, v: t.add_(v),
    "sub_": lambda t, v: t.sub_(v),
    "mul_": lambda t, v: t.mul_(v),
    "div_": lambda t, v: t.div_(v),
    "copy_": lambda t, v: t.copy_(v),
}


@pytest.mark.parametrize("op", sorted(INPLACE))
@pytest.mark.parametrize("other_shape", [(3,), (2, 2, 2)])
def test_inplace_ops_with_shapes_that_do_not_fit_name_the_op_and_both_shapes(op, other_shape):
    t = mg.ones(2, 2)
    with pytest.raises(mg.ShapeError) as error:
        INPLACE[op](t, mg.ones(*other_shape))
    message = str(error.value)
    assert message.startswith(op) and "(2, 2)" in message and str(other_shape) in message
    assert t.numpy().tolist() == [[1.0, 1.0], [1.0, 1.0]] and t._version == 0  # untouched


def test_inplace_broadcasting_that_fits_still_works():
    t = mg.ones(2, 3)
    t.add_(mg.tensor([1.0, 2.0, 3.0])).mul_(2.0).copy_(t * 1.0)
    assert t.numpy().tolist() == [[4.0, 6.0, 8.0]] * 2


@pytest.mark.parametrize("op", ["add_", "sub_", "mul_"])  # copy_ casts, as PyTorch's (above)
def test_inplace_ops_refuse_floats_into_an_integer_tensor(op):
    t = mg.tensor([1, 2])
    with pytest.raises(TypeError, match=rf"^{op}: cannot write .*float32.* into a tensor of dtype int64"):
        INPLACE[op](t, mg.tensor([0.5, 0.5]))
    assert t.tolist() == [1, 2]


def test_fill_refuses_what_is_not_a_number():
    with pytest.raises(TypeError, match="fill_: the value must be a number, got str 'x'"):
        mg.zeros(2).fill_("x")
