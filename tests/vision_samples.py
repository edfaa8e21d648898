"""Sample calls of the convolution, pooling and resizing functions, and the checks every sample gets.

A sample is (args, kwargs) for a function of nn.functional; a tensor argument is written T(shape) (a
float64 tensor of random values, seeded by the sample) and TI(shape, high) an int64 one. The same
sample runs on minigrad and on PyTorch (values and gradients compared), against a plain NumPy reference
(a loop over the windows), and through gradcheck and gradgradcheck in float64. The lists are shaped to
move into the table of sample inputs (issue 39) as they are.
"""
import numpy as np

import minigrad as mg

try:
    import torch
except ImportError:
    torch = None


class T:
    """A float64 tensor argument of this shape; `grad`: whether the gradient checks differentiate it."""

    def __init__(self, *shape, grad=True, offset=0.0):
        self.shape, self.grad, self.offset = shape, grad, offset

    def __repr__(self):
        return f"T{self.shape}"


def arrays(sample, seed):
    """The sample's arguments with each T as a NumPy array (the same values for every library)."""
    rng = np.random.default_rng(seed)
    args, kwargs = sample

    def make(value):
        if isinstance(value, T):
            # distinct values, so that a max has one winner and finite differences do not cross a tie
            n = int(np.prod(value.shape))
            return (rng.permutation(n).reshape(value.shape) / n * 4 - 2 + rng.uniform(-0.01, 0.01, value.shape)
                    + value.offset)
        return value

    return [make(a) for a in args], {k: make(v) for k, v in kwargs.items()}


def on(library, args, kwargs, sample, requires_grad=False):
    """The arguments as `library` tensors (float64); returns (args, kwargs, the tensors to differentiate)."""
    to_tensor = library.tensor
    wrt = []

    def convert(value, spec):
        if isinstance(spec, T):
            t = to_tensor(value, dtype=library.float64, requires_grad=requires_grad and spec.grad)
            if spec.grad:
                wrt.append(t)
            return t
        return value

    new_args = [convert(a, s) for a, s in zip(args, sample[0])]
    new_kwargs = {k: convert(v, sample[1][k]) for k, v in kwargs.items()}
    return new_args, new_kwargs, wrt


def first(output):
    return output[0] if isinstance(output, tuple) else output


def compare_with_torch(name, sample, seed, atol=1e-10):
    """Values (and indices, where returned) and the gradients of sum(y * g) equal PyTorch's."""
    args, kwargs = arrays(sample, seed)
    results = []
    for library in (mg, torch):
        a, k, wrt = on(library, args, kwargs, sample, requires_grad=True)
        out = getattr(library.nn.functional, name)(*a, **k)
        y = first(out)
        g = np.random.default_rng(seed + 1).standard_normal(tuple(y.shape))
        grads = library.autograd.grad((y * library.tensor(g)).sum(), wrt) if wrt else ()
        extra = out[1].numpy() if isinstance(out, tuple) else None
        results.append((y.detach().numpy(), extra, [gr.numpy() for gr in grads]))
    (y_mg, i_mg, g_mg), (y_t, i_t, g_t) = results
    assert y_mg.shape == y_t.shape, f"{name}{sample}: shape {y_mg.shape}, PyTorch {y_t.shape}"
    np.testing.assert_allclose(y_mg, y_t, atol=atol, rtol=1e-9, err_msg=f"{name}{sample}: values")
    if i_t is not None:
        np.testing.assert_array_equal(i_mg, i_t, err_msg=f"{name}{sample}: indices")
    for a, b in zip(g_mg, g_t):
        np.testing.assert_allclose(a, b, atol=atol, rtol=1e-9, err_msg=f"{name}{sample}: gradient")


def compare_with_reference(name, sample, seed, reference, atol=1e-10):
    """Values (and indices) equal the NumPy reference's."""
    args, kwargs = arrays(sample, seed)
    a, k, _ = on(mg, args, kwargs, sample)
    out = getattr(mg.nn.functional, name)(*a, **k)
    expected = reference(*args, **kwargs)
    if isinstance(out, tuple):
        np.testing.assert_allclose(out[0].numpy(), expected[0], atol=atol, err_msg=f"{name}{sample}: values")
        np.testing.assert_array_equal(out[1].numpy(), expected[1], err_msg=f"{name}{sample}: indices")
    else:
        assert tuple(out.shape) == expected.shape, f"{name}{sample}: shape {tuple(out.shape)}, reference {expected.shape}"
        np.testing.assert_allclose(out.numpy(), expected, atol=atol, err_msg=f"{name}{sample}: values")


def check_gradients(name, sample, seed, second_order=True):
    """gradcheck (and gradgradcheck) in float64 against central differences."""
    args, kwargs = arrays(sample, seed)
    a, k, wrt = on(mg, args, kwargs, sample, requires_grad=True)
    positions = [i for i, s in enumerate(sample[0]) if isinstance(s, T) and s.grad]
    names = [key for key, s in sample[1].items() if isinstance(s, T) and s.grad]
    function = getattr(mg.nn.functional, name)

    def f(*tensors):
        call_args, call_kwargs = list(a), dict(k)
        for i, t in zip(positions, tensors):
            call_args[i] = t
        for key, t in zip(names, tensors[len(positions):]):
            call_kwargs[key] = t
        return first(function(*call_args, **call_kwargs))

    assert mg.gradcheck(f, wrt), f"{name}{sample}"
    if second_order:
        assert mg.gradgradcheck(f, wrt), f"{name}{sample}"


def ids(samples):
    return [f"{name}-{i}" for name, calls in samples.items() for i in range(len(calls))]


def flat(samples):
    return [(name, call) for name, calls in samples.items() for call in calls]
