"""What the graph saves for backward, as PyTorch's autograd mechanics notes show it: grad_fn._saved_*,
_raw_saved_*.register_hooks, torch.autograd.graph.saved_tensors_hooks and save_on_cpu.

Written once, run on minigrad and (where installed) on PyTorch.
"""
import numpy as np
import pytest


def _double(lib, values):
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


def test_saved_self_is_the_input_and_saved_result_equals_the_output(lib):
    x = _double(lib, [0.5, -1.0, 2.0])
    y = x.pow(2)
    assert y.grad_fn._saved_self is x  # an input is saved as itself
    r = x.exp()
    assert r.equal(r.grad_fn._saved_result) and r.grad_fn._saved_result is not r  # an output: equal, not it
    w = _double(lib, [1.0, 2.0, 3.0])
    p = x * w
    assert p.grad_fn._saved_self is x and p.grad_fn._saved_other is w
    s = x.sin()
    assert s.grad_fn._saved_self is x


def test_saved_values_are_gone_after_backward(lib):
    x = _double(lib, [0.5, 1.5])
    y = x.exp()
    node = y.grad_fn
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        node._saved_result


def test_saved_tensors_hooks_pack_every_saved_value_and_backward_reads_what_unpack_gives(lib):
    packed = []

    def pack(t):
        packed.append(tuple(t.shape))
        return t.detach().numpy().copy()  # kept as a plain array, away from the graph

    def unpack(kept):
        return lib.from_numpy(kept)

    x = _double(lib, [0.5, 1.5])
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x * x).exp()  # mul saves x twice, exp saves its result
    assert packed == [(2,), (2,), (2,)]
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.array([0.5, 1.5]) * np.exp([0.25, 2.25]))


def test_unpack_decides_the_value_backward_uses(lib):
    """Proof that backward reads through unpack: an unpack that doubles what was saved doubles d(x^2)."""
    x = _double(lib, [1.0, 3.0])
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t * 2):
        y = x.pow(2)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 12.0])  # 2 * (2x), not 2x


def test_hooks_apply_to_a_custom_functions_saved_tensors(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):  # 3 x^2
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * grad

    calls = []

    def pack(t):
        calls.append("pack")
        return t

    def unpack(t):
        calls.append("unpack")
        return t

    x = _double(lib, [1.0, -2.0])
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = Cube.apply(x)
    assert calls == ["pack"]
    y.sum().backward()
    assert calls == ["pack", "unpack"]
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 12.0])


def test_hooks_under_create_graph_keep_second_derivatives(lib):
    x = _double(lib, [0.3, 0.9])
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = (x.sin() * x).sum()
    (g,) = lib.autograd.grad(y, x, create_graph=True)
    (h,) = lib.autograd.grad(g.sum(), x)
    v = np.array([0.3, 0.9])
    np.testing.assert_allclose(h.numpy(), 2 * np.cos(v) - v * np.sin(v))  # d2(x sin x)/dx2


def test_save_on_cpu_keeps_values_as_they_are(lib):
    x = _double(lib, [0.2, 0.4])
    with lib.autograd.graph.save_on_cpu():
        y = (x.exp() * x).sum()
    y.backward()
    v = np.array([0.2, 0.4])
    np.testing.assert_allclose(x.grad.numpy(), np.exp(v) * (1 + v))


def test_raw_saved_register_hooks_packs_one_value(lib):
    x = _double(lib, [1.0, 2.0])
    y = x.pow(2)
    seen = []
    y.grad_fn._raw_saved_self.register_hooks(lambda t: seen.append("pack") or t.detach() * 10,
                                             lambda t: seen.append("unpack") or t)
    assert seen == ["pack"]
    y.sum().backward()
    assert seen == ["pack", "unpack"]
    np.testing.assert_allclose(x.grad.numpy(), [20.0, 40.0])  # 2 * (10 x): backward used the unpacked value
