"""Tensor attributes, conversions and autograd plumbing: shape/size/stride/dim..., float()/int()/to()/type(),
item/tolist/numpy, copy_, grad/grad_fn/is_leaf/requires_grad, backward, hooks, retain_grad.

Attributes are asked of float32/float64, integer, bool, 0-d, empty and non-contiguous tensors; conversions
compared by value and dtype. References: NumPy.
"""
import numpy as np

from . import DT, Check, Fn, Op, S


def _kinds(r):
    return [S(r.real()), S(r.real((2, 3), "float64", layout="T")), S(r.ints((2, 3, 4))), S(r.bools((4,))),
            S(r.real(())), S(r.empty()), S(r.real((2, 3), "float64", layout="step"))]


def attr(name, expr, ref, gen=_kinds):
    """An attribute or a no-argument query, compared on tensors of every kind."""
    return Fn(name, expr, gen, ref=ref, grad=False)


def conversion(method, dtype):
    def gen(r):
        return [S(r.real()), S(r.real((2, 3), "float64", layout="T")), S(r.ints()), S(r.bools()),
                S(r.value([-2.7, 2.7, 0.5], "float64"))]
    grad = dtype == "float64"  # (a float32 result is too coarse for finite differences)
    if dtype == "bfloat16":  # minigrad keeps bfloat16 values in float32 (NumPy has no bfloat16): values compared
        return Fn(f"Tensor.{method}", lambda L, x: x.bfloat16().float(), gen, grad=False, rtol=1e-2, atol=1e-2,
                  ref=lambda x: x.astype(np.float32))
    return Op(method, gen, names=[f"Tensor.{method}"], ref=lambda x, d=dtype: x.astype(d), grad=grad, gradgrad=False,
              rtol=1e-3 if dtype == "float16" else None)


def _hooks(L):
    x = L.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.clone()) or g * 2)
    (x * 3).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0] and seen[0].tolist() == [3.0, 3.0]
    handle.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    after = []
    x.register_post_accumulate_grad_hook(lambda t: after.append(t.grad.clone()))
    (x * 1).sum().backward()
    assert after[0].tolist() == [4.0, 4.0]
    return x.grad.tolist()


def _autograd_state(L):
    x = L.tensor([1.0, -2.0], requires_grad=True)
    y = x * x
    assert x.is_leaf and not y.is_leaf and x.grad_fn is None and y.grad_fn is not None
    assert not y.retains_grad
    y.retain_grad()
    assert y.retains_grad
    y.sum().backward()
    assert y.grad.tolist() == [1.0, 1.0]
    z = L.ones(2)
    assert not z.requires_grad and z.requires_grad_() is z and z.requires_grad
    z.requires_grad_(False)
    x.grad = L.zeros(2)
    x.data = L.tensor([5.0, 6.0])
    return x.grad.tolist(), x.tolist(), x.data.requires_grad, x.requires_grad


def _backward(L):
    x = L.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=L.float64, requires_grad=True)
    y = (x ** 2).sum()
    y.backward(retain_graph=True)
    y.backward()
    (x ** 3).backward(L.ones(2, 2, dtype=L.float64) * 0.5)
    try:
        (x ** 3).sum().backward(inputs=[x])
        x.grad -= 3 * x.detach() ** 2  # (PyTorch: accumulated into x.grad only; taken out again to compare)
    except NotImplementedError as error:  # minigrad refuses inputs= (autograd.grad does the same job)
        assert L.__name__ == "minigrad" and "inputs=" in str(error)
    w = (x * x).sum()
    w.backward(create_graph=True)
    return x.grad.detach().tolist()


def _devices(L):
    x = L.ones(2)
    assert x.cpu() is x or np.array_equal(x.cpu().numpy(), x.numpy())
    assert x.is_cpu and not x.is_cuda and str(x.device) == "cpu" and not x.is_pinned()
    try:
        x.cuda()
    except (RuntimeError, AssertionError, ValueError):
        pass
    else:
        raise AssertionError("cuda() must fail on a machine without CUDA")
    try:
        x.pin_memory()
    except RuntimeError:
        pass
    return str(x.device)


def _copy_(L):
    x = L.zeros(2, 3)
    assert x.copy_(L.tensor([1.0, 2.0, 3.0])) is x  # broadcast
    y = L.zeros(2, 3, dtype=L.float64)
    y.copy_(L.tensor([[1, 2, 3], [4, 5, 6]]))  # cast
    a = L.tensor([1.0, 2.0], requires_grad=True)
    b = L.zeros(2)
    b.copy_(a * 2)
    b.sum().backward()
    return x.tolist(), y.tolist(), str(y.dtype), a.grad.tolist()


ENTRIES = [
    attr("Tensor.dim", lambda L, x: x.dim(), np.ndim),
    attr("Tensor.ndim", lambda L, x: x.ndim, np.ndim),
    attr("Tensor.ndimension", lambda L, x: x.ndimension(), np.ndim),
    attr("Tensor.numel", lambda L, x: x.numel(), np.size),
    attr("torch.numel", lambda L, x: L.numel(x), np.size),
    attr("Tensor.nelement", lambda L, x: x.nelement(), np.size),
    attr("Tensor.shape", lambda L, x: x.shape, np.shape),
    Fn("Tensor.size", lambda L, x, *d: x.size(*d), lambda r: _kinds(r) + [S(r.real(), 1), S(r.real(), -1)],
       ref=lambda x, *d: x.shape[d[0]] if d else x.shape, grad=False),
    Fn("Tensor.stride", lambda L, x, *d: x.contiguous().stride(*d),
       lambda r: [S(r.real()), S(r.ints((2, 3, 4))), S(r.real(), 0)],
       ref=lambda x, *d: (lambda s: s[d[0]] if d else s)(tuple(v // x.itemsize for v in np.ascontiguousarray(
           x).strides)), grad=False),
    attr("Tensor.element_size", lambda L, x: x.element_size(), lambda x: x.itemsize),
    attr("Tensor.itemsize", lambda L, x: x.itemsize, lambda x: x.itemsize),
    attr("Tensor.nbytes", lambda L, x: x.nbytes, lambda x: x.nbytes),
    attr("Tensor.is_contiguous", lambda L, x: x.is_contiguous(), lambda x: x.flags.c_contiguous or x.size <= 1),
    attr("Tensor.is_floating_point", lambda L, x: x.is_floating_point(), lambda x: x.dtype.kind == "f"),
    attr("torch.is_floating_point", lambda L, x: L.is_floating_point(x), lambda x: x.dtype.kind == "f"),
    attr("Tensor.is_signed", lambda L, x: x.is_signed(), lambda x: x.dtype.kind in "fi"),
    attr("torch.is_signed", lambda L, x: L.is_signed(x), lambda x: x.dtype.kind in "fi"),
    attr("Tensor.dtype", lambda L, x: x.dtype, lambda x: str(x.dtype)),
    attr("Tensor.tolist", lambda L, x: x.tolist(), lambda x: x.tolist()),
    attr("Tensor.numpy", lambda L, x: x.numpy(), lambda x: x),
    Fn("Tensor.item", lambda L, x: x.item(), lambda r: [S(r.real(())), S(r.ints((1,))), S(r.bools((1, 1))),
                                                         S(r.real(), error=True)],
       ref=lambda x: x.item(), grad=False),
    Fn(["Tensor.is_nonzero", "torch.is_nonzero"], lambda L, x: (x.is_nonzero(), L.is_nonzero(x)),
       lambda r: [S(r.value([0.0])), S(r.value(2, "int64")), S(r.value([False], "bool")),
                  S(r.real(), error=True)], ref=lambda x: (bool(x), bool(x)), grad=False),
    Fn(["Tensor.is_same_size", "torch.is_same_size"], lambda L, a, b: (a.is_same_size(b), L.is_same_size(a, b)),
       lambda r: [S(r.real(), r.ints()), S(r.real(), r.real((3, 2)))], ref=lambda a, b: (a.shape == b.shape,) * 2,
       grad=False),
    Fn("Tensor.is_set_to", lambda L, a, b: (a.is_set_to(a), a.is_set_to(b)),
       lambda r: [S(r.real(), r.real())], ref=lambda a, b: (True, False), grad=False),
    Fn(["torch.is_tensor"], lambda L, x: (L.is_tensor(x), L.is_tensor(x.numpy()), L.is_tensor(1.0)),
       lambda r: [S(r.real())], ref=lambda x: (True, False, False), grad=False),
    conversion("float", "float32"), conversion("double", "float64"), conversion("half", "float16"),
    conversion("bfloat16", "bfloat16"), conversion("int", "int32"), conversion("long", "int64"),
    conversion("short", "int16"), conversion("char", "int8"), conversion("byte", "uint8"),
    conversion("bool", "bool"),
    Op("to", lambda r: [S(r.real(), DT("float64")), S(r.ints(), dtype=DT("float32")), S(r.real(), "cpu", grad=False),
                        S(r.real((2, 3), "float64"), r.ints(), grad=False),
                        S(r.real(), "cpu", DT("int64"), grad=False),
                        S(r.real(), DT("float32"), copy=True, grad=False)], names=["Tensor.to"], gradgrad=False),
    Op("type", lambda r: [S(r.real(), DT("float64")), S(r.ints(), dtype=DT("float32")), S(r.real())],
       names=["Tensor.type"], grad=False),
    Op("type_as", lambda r: [S(r.real(), r.ints()), S(r.ints(), r.real((2, 3), "float64"))],
       names=["Tensor.type_as"], ref=lambda x, other: x.astype(other.dtype), grad=False),
    Fn("Tensor.frexp", lambda L, x: x.frexp(), lambda r: [S(r.real()), S(r.edges(dtype="float32"))], grad=False,
       ref=lambda x: (np.frexp(x)[0], np.frexp(x)[1].astype(np.int32))),
    Op("frexp", lambda r: [S(r.real()), S(r.real((2, 3), "float64")), S(r.value([0.0, 1.0, -3.0, 1e-30]))],
       names=["torch.frexp"], grad=False, ref=lambda x: (np.frexp(x)[0], np.frexp(x)[1].astype(np.int32))),
    Check("Tensor.copy_", _copy_),
    Check(["Tensor.register_hook", "Tensor.register_post_accumulate_grad_hook"], _hooks),
    Check(["Tensor.is_leaf", "Tensor.grad_fn", "Tensor.retain_grad", "Tensor.retains_grad",
           "Tensor.requires_grad", "Tensor.requires_grad_", "Tensor.grad", "Tensor.data"], _autograd_state),
    Check("Tensor.backward", _backward),
    Check(["Tensor.cpu", "Tensor.cuda", "Tensor.device", "Tensor.is_cpu", "Tensor.is_cuda", "Tensor.pin_memory",
           "Tensor.is_pinned"], _devices),
    Check("Tensor.name", lambda L: L.ones(2).name),
    Check("Tensor.as_subclass", lambda L: _subclass(L)),
]


def _subclass(L):
    class Mine(L.Tensor):
        pass
    y = L.tensor([1.0, 2.0]).as_subclass(Mine)
    assert isinstance(y, Mine)
    return y.tolist()
