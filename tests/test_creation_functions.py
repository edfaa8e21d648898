"""PyTorch's creation functions and their `*_like` forms, called as PyTorch code calls them.

Each case is one call written once for both libraries (`lib` is minigrad, then PyTorch where installed)
with the shape and dtype PyTorch gives, written down here from PyTorch's documentation: run on PyTorch
the table itself is checked, run on minigrad the functions are. A PyTorch script stopped at
`torch.randn_like` before these existed (issue 35).
"""
import numpy as np
import pytest

import minigrad as mg
from conftest import torch

F32, F64, I64, I32, BOOL = "float32", "float64", "int64", "int32", "bool"

CASES = {  # name: (call, shape, dtype)
    "randn_like": (lambda lib: lib.randn_like(lib.zeros(2, 3)), (2, 3), F32),
    "randn_like float64": (lambda lib: lib.randn_like(lib.zeros(2, 3, dtype=lib.float64)), (2, 3), F64),
    "randn_like dtype=": (lambda lib: lib.randn_like(lib.zeros(4), dtype=lib.float64), (4,), F64),
    "randn_like all options": (lambda lib: lib.randn_like(
        lib.zeros(2), generator=lib.Generator().manual_seed(1), dtype=lib.float32, layout=lib.strided,
        device="cpu", requires_grad=True, memory_format=lib.preserve_format), (2,), F32),
    "rand_like": (lambda lib: lib.rand_like(lib.ones(3, 1, dtype=lib.float64)), (3, 1), F64),
    "rand_like generator": (lambda lib: lib.rand_like(lib.ones(5), generator=lib.Generator().manual_seed(0)),
                            (5,), F32),
    "randint_like high": (lambda lib: lib.randint_like(lib.zeros(2, 2, dtype=lib.int64), 10), (2, 2), I64),
    "randint_like low high": (lambda lib: lib.randint_like(lib.zeros(3, dtype=lib.int32), 3, 10), (3,), I32),
    "randint_like on floats": (lambda lib: lib.randint_like(lib.zeros(3), 5), (3,), F32),
    "randint_like dtype=": (lambda lib: lib.randint_like(lib.zeros(3), 5, dtype=lib.int64), (3,), I64),
    "zeros_like": (lambda lib: lib.zeros_like(lib.ones(2, 3, dtype=lib.int32)), (2, 3), I32),
    "zeros_like options": (lambda lib: lib.zeros_like(
        lib.ones(2), dtype=lib.float64, layout=lib.strided, device="cpu", requires_grad=True,
        memory_format=lib.preserve_format), (2,), F64),
    "ones_like": (lambda lib: lib.ones_like(lib.zeros(4, dtype=lib.bool)), (4,), BOOL),
    "empty_like": (lambda lib: lib.empty_like(lib.zeros(1, 2, 3), memory_format=lib.contiguous_format),
                   (1, 2, 3), F32),
    "full_like": (lambda lib: lib.full_like(lib.zeros(2, dtype=lib.int64), 7), (2,), I64),
    "full_like options": (lambda lib: lib.full_like(lib.zeros(2), 0.5, dtype=lib.float64, layout=lib.strided),
                          (2,), F64),
    "randn varargs": (lambda lib: lib.randn(2, 3), (2, 3), F32),
    "randn tuple": (lambda lib: lib.randn((2, 3)), (2, 3), F32),
    "randn size=": (lambda lib: lib.randn(size=(2, 3)), (2, 3), F32),
    "randn options": (lambda lib: lib.randn(3, generator=lib.Generator().manual_seed(0), dtype=lib.float64,
                                            layout=lib.strided, device="cpu", requires_grad=True,
                                            pin_memory=False), (3,), F64),
    "randn 0-d": (lambda lib: lib.randn(()), (), F32),
    "rand list": (lambda lib: lib.rand([4, 1]), (4, 1), F32),
    "rand size=": (lambda lib: lib.rand(size=(2,), dtype=lib.float64), (2,), F64),
    "randint high size": (lambda lib: lib.randint(10, (3,)), (3,), I64),
    "randint low high size": (lambda lib: lib.randint(3, 10, (2, 2)), (2, 2), I64),
    "randint size=": (lambda lib: lib.randint(10, size=(2,)), (2,), I64),
    "randint low high size=": (lambda lib: lib.randint(3, 10, size=(1, 4)), (1, 4), I64),
    "randint options": (lambda lib: lib.randint(0, 2, (3,), generator=lib.Generator().manual_seed(0),
                                                dtype=lib.int32, layout=lib.strided, device="cpu"), (3,), I32),
    "randperm": (lambda lib: lib.randperm(5), (5,), I64),
    "randperm options": (lambda lib: lib.randperm(4, generator=lib.Generator().manual_seed(0), dtype=lib.int32,
                                                  layout=lib.strided, device="cpu"), (4,), I32),
    "empty": (lambda lib: lib.empty(2, 3), (2, 3), F32),
    "empty options": (lambda lib: lib.empty((2,), dtype=lib.int64, layout=lib.strided, device="cpu",
                                            pin_memory=False, memory_format=lib.contiguous_format), (2,), I64),
    "empty size=": (lambda lib: lib.empty(size=(3,)), (3,), F32),
    "zeros size=": (lambda lib: lib.zeros(size=(2, 1)), (2, 1), F32),
    "zeros options": (lambda lib: lib.zeros(2, dtype=lib.bool, layout=lib.strided, device="cpu"), (2,), BOOL),
    "ones size=": (lambda lib: lib.ones(size=[3]), (3,), F32),
    "full int": (lambda lib: lib.full((2, 2), 3), (2, 2), I64),
    "full bool": (lambda lib: lib.full((2,), True), (2,), BOOL),
    "full options": (lambda lib: lib.full((2,), 1.5, dtype=lib.float64, layout=lib.strided, device="cpu",
                                          requires_grad=True), (2,), F64),
    "arange": (lambda lib: lib.arange(5), (5,), I64),
    "arange float": (lambda lib: lib.arange(0, 1, 0.25), (4,), F32),
    "arange options": (lambda lib: lib.arange(3, dtype=lib.float64, layout=lib.strided, device="cpu"), (3,), F64),
    "linspace": (lambda lib: lib.linspace(0, 1, 5), (5,), F32),
    "linspace options": (lambda lib: lib.linspace(0, 1, steps=3, dtype=lib.float64, layout=lib.strided), (3,), F64),
    "logspace": (lambda lib: lib.logspace(0, 2, 3), (3,), F32),
    "logspace base": (lambda lib: lib.logspace(0, 3, 4, base=2.0, dtype=lib.float64), (4,), F64),
    "eye": (lambda lib: lib.eye(3), (3, 3), F32),
    "eye options": (lambda lib: lib.eye(2, 3, dtype=lib.int64, layout=lib.strided, device="cpu"), (2, 3), I64),
    "tensor": (lambda lib: lib.tensor([1, 2]), (2,), I64),
    "tensor options": (lambda lib: lib.tensor([1.0], dtype=lib.float64, device="cpu", requires_grad=True,
                                              pin_memory=False), (1,), F64),
    "as_tensor": (lambda lib: lib.as_tensor([1.5, 2.5], dtype=lib.float64, device="cpu"), (2,), F64),
}

VALUES = {  # deterministic calls: their values, from PyTorch's documentation
    "logspace": [1.0, 10.0, 100.0],
    "logspace base": [1.0, 2.0, 4.0, 8.0],
    "linspace": [0.0, 0.25, 0.5, 0.75, 1.0],
    "arange float": [0.0, 0.25, 0.5, 0.75],
    "eye options": [[1, 0, 0], [0, 1, 0]],
    "full_like": [7, 7],
}


def dtype_name(t):
    return str(t.dtype).removeprefix("torch.")


@pytest.mark.parametrize("case", list(CASES))
def test_each_call_gives_pytorchs_shape_and_dtype(lib, case):
    call, shape, dtype = CASES[case]
    t = call(lib)
    assert tuple(t.shape) == shape
    assert dtype_name(t) == dtype
    assert t.requires_grad == ("requires_grad=True" in case_source(case))
    if case in VALUES:
        np.testing.assert_allclose(np.asarray(t.tolist(), dtype=np.float64), VALUES[case], rtol=1e-6)


def case_source(case):
    import inspect
    return inspect.getsource(CASES[case][0])


@pytest.mark.parametrize("name", ["randn_like", "rand_like"])
def test_the_like_draws_follow_the_generator_and_leave_the_default_stream_alone(name):
    like = getattr(mg, name)
    x = mg.zeros(1000, dtype=mg.float64)
    a = like(x, generator=mg.Generator().manual_seed(7))
    mg.manual_seed(0)
    before = mg.randn(3)
    mg.manual_seed(0)
    b = like(x, generator=mg.Generator().manual_seed(7))
    after = mg.randn(3)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(before.numpy(), after.numpy())
    draws = a.numpy()
    if name == "randn_like":  # standard normal: mean 0, sd 1 (1000 draws: within 5 standard errors)
        assert abs(draws.mean()) < 5 / np.sqrt(1000) and abs(draws.std() - 1) < 0.15
    else:
        assert draws.min() >= 0 and draws.max() < 1 and abs(draws.mean() - 0.5) < 0.05


def test_randint_like_stays_in_its_range():
    draws = mg.randint_like(mg.zeros(2000, dtype=mg.int64), 3, 6).numpy()
    assert set(np.unique(draws)) == {3, 4, 5}
    assert set(np.unique(mg.randint_like(mg.zeros(500), 2).numpy())) == {0.0, 1.0}


@pytest.mark.parametrize("call, words", [
    (lambda lib: lib.zeros(2, out=lib.zeros(2)), "out="),
    (lambda lib: lib.ones(2, out=lib.zeros(2)), "out="),
    (lambda lib: lib.randn(2, out=lib.zeros(2)), "out="),
    (lambda lib: lib.zeros(2, layout=lib.sparse_coo), "layout"),
    (lambda lib: lib.zeros_like(lib.zeros(2, 2, 2, 2), memory_format=lib.channels_last), "memory_format"),
    (lambda lib: lib.randn(2, dtype=lib.int64), "float dtype"),
    (lambda lib: lib.rand_like(lib.zeros(2, dtype=lib.int64)), "float dtype"),
    (lambda lib: lib.randn_like([1.0, 2.0]), "expects a Tensor"),
    (lambda lib: lib.randint(0, 10, 3), "tuple of ints"),
    (lambda lib: lib.randint_like(lib.zeros(2), 5, 5), "low must be less than high"),
    (lambda lib: lib.zeros(2, size=(2,)), "given twice"),
    (lambda lib: lib.ones(2, pin_memory=True), "pin_memory"),
])
def test_what_minigrad_cannot_do_is_refused_naming_the_argument(call, words):
    with pytest.raises((TypeError, ValueError), match=words) as caught:
        call(mg)
    op = str(caught.value).split(":")[0]
    assert op in ("zeros", "ones", "randn", "zeros_like", "rand_like", "randn_like", "randint", "randint_like")
