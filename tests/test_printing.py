"""Tensors, shapes and dtypes print as PyTorch prints them (issue 35: `tensor([0.048, 0.017, 0.1  ])`
where PyTorch prints `tensor([0.0480, 0.0170, 0.1000])`, and `(182625, 3)` for `torch.Size([182625, 3])`).

Where PyTorch is installed, a generated sweep (0-d to 4-d, up to past the summarizing threshold, five
dtypes, magnitudes 1e-8..1e8, negatives, inf and nan, whole numbers as floats, requires_grad and grad_fn,
and each print option) asserts identical strings. Without it, the expected strings below were written by
hand from PyTorch's rules (4 decimals, common width, `1.` for whole floats, scientific past a ratio of
1000, wrapping at 80, `...` past 1000 elements), not printed by minigrad.
"""
import numpy as np
import pytest

import minigrad as mg
from conftest import torch

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


@pytest.fixture(autouse=True)
def default_printoptions():
    yield
    mg.set_printoptions(profile="default")
    if torch is not None:
        torch.set_printoptions(profile="default")


# ---- without PyTorch: strings written by hand from PyTorch's rules --------------------------------
HAND_WRITTEN = [
    (lambda: mg.tensor([0.048, 0.017, 0.1]), "tensor([0.0480, 0.0170, 0.1000])"),
    (lambda: mg.tensor([1.0, 2.0, -3.0]), "tensor([ 1.,  2., -3.])"),
    (lambda: mg.tensor(3.5), "tensor(3.5000)"),
    (lambda: mg.tensor(2), "tensor(2)"),
    (lambda: mg.tensor([1e-8, 1.0]), "tensor([1.0000e-08, 1.0000e+00])"),
    (lambda: mg.tensor([1.0, 2000.0]), "tensor([1.0000e+00, 2.0000e+03])"),
    (lambda: mg.tensor([0.0, float("inf"), float("nan")]), "tensor([0., inf, nan])"),
    (lambda: mg.tensor([1.5, float("-inf")]), "tensor([1.5000,   -inf])"),
    (lambda: mg.tensor([[1, 2], [30, 4]]), "tensor([[ 1,  2],\n        [30,  4]])"),
    (lambda: mg.tensor([True, False]), "tensor([ True, False])"),
    (lambda: mg.tensor([1, 2], dtype=mg.int32), "tensor([1, 2], dtype=torch.int32)"),
    (lambda: mg.tensor([0.5], dtype=mg.float64), "tensor([0.5000], dtype=torch.float64)"),
    (lambda: mg.zeros(0, 3), "tensor([], size=(0, 3))"),
    (lambda: mg.zeros(0, dtype=mg.int64), "tensor([], dtype=torch.int64)"),
    (lambda: mg.ones(2, requires_grad=True), "tensor([1., 1.], requires_grad=True)"),
    (lambda: mg.ones(2, requires_grad=True) * 2, "tensor([2., 2.], grad_fn=<MulBackward0>)"),
    (lambda: mg.arange(2, dtype=mg.float32).reshape(1, 2, 1),
     "tensor([[[0.],\n         [1.]]])"),
    (lambda: mg.arange(8).reshape(2, 2, 2),
     "tensor([[[0, 1],\n         [2, 3]],\n\n        [[4, 5],\n         [6, 7]]])"),
    # 20 elements of width 7 ("0.0000", ...; 9 a line: (80 - 8) // 8), wrapped under the bracket
    (lambda: mg.arange(20, dtype=mg.float32) / 4,
     "tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000, 1.2500, 1.5000, 1.7500, 2.0000,\n"
     "        2.2500, 2.5000, 2.7500, 3.0000, 3.2500, 3.5000, 3.7500, 4.0000, 4.2500,\n"
     "        4.5000, 4.7500])"),
    # past 1000 elements: three at each end; the format is chosen from those six (ratio 1999 > 1000)
    (lambda: mg.arange(2000, dtype=mg.float32),
     "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n        1.9990e+03])"),
    (lambda: mg.arange(1001),
     "tensor([   0,    1,    2,  ...,  998,  999, 1000])"),
    (lambda: mg.zeros(1001, 2),
     "tensor([[0., 0.],\n        [0., 0.],\n        [0., 0.],\n        ...,\n"
     "        [0., 0.],\n        [0., 0.],\n        [0., 0.]])"),
    (lambda: mg.nn.Parameter(mg.ones(2)), "Parameter containing:\ntensor([1., 1.], requires_grad=True)"),
    (lambda: mg.zeros(182625, 3).shape, "torch.Size([182625, 3])"),
    (lambda: mg.zeros(2, 3).size(), "torch.Size([2, 3])"),
    (lambda: mg.zeros(()).shape, "torch.Size([])"),
]


@pytest.mark.parametrize("make, expected", HAND_WRITTEN, ids=[e[1][:40] for e in HAND_WRITTEN])
def test_prints_as_pytorchs_rules_say(make, expected):
    assert repr(make()) == expected
    assert str(make()) == expected


def test_a_long_suffix_goes_on_its_own_line():
    x = mg.arange(9, dtype=mg.float64) * 1000 + 0.5
    assert repr(x) == ("tensor([5.0000e-01, 1.0005e+03, 2.0005e+03, 3.0005e+03, 4.0005e+03, 5.0005e+03,\n"
                       "        6.0005e+03, 7.0005e+03, 8.0005e+03], dtype=torch.float64)")
    x = mg.ones(12, dtype=mg.float64, requires_grad=True) * 3
    assert repr(x) == ("tensor([3., 3., 3., 3., 3., 3., 3., 3., 3., 3., 3., 3.], dtype=torch.float64,\n"
                       "       grad_fn=<MulBackward0>)")


def test_set_printoptions_changes_every_later_print():
    x = mg.tensor([0.123456, 2.5])
    mg.set_printoptions(precision=2)
    assert repr(x) == "tensor([0.12, 2.50])"
    mg.set_printoptions(sci_mode=True)  # precision is kept, sci_mode forced
    assert repr(x) == "tensor([1.23e-01, 2.50e+00])"
    mg.set_printoptions(profile="default", sci_mode=False)
    assert repr(mg.tensor([1e-8, 1.0])) == "tensor([0.0000, 1.0000])"
    mg.set_printoptions(threshold=5, edgeitems=1)
    assert repr(mg.arange(6)) == "tensor([0,  ..., 5])"
    mg.set_printoptions(profile="short")
    assert mg.get_printoptions() == {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80,
                                     "sci_mode": None}
    mg.set_printoptions(linewidth=20, profile="default")
    assert repr(mg.arange(6)) == "tensor([0, 1, 2, 3,\n        4, 5])"
    with pytest.raises(ValueError, match="set_printoptions: profile"):
        mg.set_printoptions(profile="long")


def test_shape_is_a_size_that_is_still_a_tuple():
    shape = mg.zeros(2, 3).shape
    assert isinstance(shape, mg.Size) and shape == (2, 3) and shape[1:] == (3,)
    assert shape.numel() == 6 and mg.zeros(2, 3).size(1) == 3
    assert mg.zeros(shape).shape == (2, 3)


# ---- with PyTorch: a generated sweep, identical strings ----------------------------------------
def sweep():
    rng = np.random.default_rng(35)
    shapes = [(), (1,), (5,), (13,), (40,), (3, 4), (2, 3, 4), (2, 1, 3, 2), (1001,), (40, 30), (3, 400),
              (11, 11, 11), (0,), (0, 3), (2, 0, 2)]
    cases = []
    for shape in shapes:
        for scale in (1e-8, 1e-3, 1.0, 37.0, 1e5, 1e8):
            values = rng.standard_normal(shape) * scale
            cases.append((f"{shape} x{scale:g}", values.astype(np.float32)))
            cases.append((f"{shape} x{scale:g} f64", values.astype(np.float64)))
        whole = np.round(rng.standard_normal(shape) * 50)
        cases.append((f"{shape} whole", whole.astype(np.float32)))
        cases.append((f"{shape} int64", whole.astype(np.int64)))
        cases.append((f"{shape} int32", (whole * 1000).astype(np.int32)))
        cases.append((f"{shape} bool", whole > 0))
        if whole.size >= 3:
            special = whole.astype(np.float32).reshape(-1)
            special[:3] = [np.inf, -np.inf, np.nan]
            cases.append((f"{shape} inf nan", special.reshape(shape)))
            mixed = (rng.standard_normal(shape) * 10).astype(np.float32).reshape(-1)
            mixed[0] = np.nan
            cases.append((f"{shape} nan and fractions", mixed.reshape(shape)))
    cases.append(("tiny and huge", np.array([1e-30, 1.0, 3e30], dtype=np.float32)))
    cases.append(("ratio just under 1000", np.array([1.0, 999.0, 0.5], dtype=np.float32)))
    cases.append(("all zero", np.zeros((3, 3), dtype=np.float32)))
    cases.append(("negative zero", np.array([-0.0, 1.0], dtype=np.float32)))
    return [(name, np.array(values)) for name, values in cases]  # 0-d: an array, not a NumPy scalar


SWEEP = sweep()


@needs_torch
def test_the_sweep_prints_identically():
    mismatches = [(name, repr(torch.from_numpy(v.copy())), repr(mg.tensor(v)))
                  for name, v in SWEEP if repr(torch.from_numpy(v.copy())) != repr(mg.tensor(v))]
    assert not mismatches, "\n\n".join(f"{n}:\n{t}\n{m}" for n, t, m in mismatches[:3])
    assert len(SWEEP) > 250


@needs_torch
@pytest.mark.parametrize("options", [
    dict(precision=2), dict(precision=6), dict(sci_mode=True), dict(sci_mode=False), dict(threshold=10),
    dict(edgeitems=1, threshold=20), dict(linewidth=40), dict(linewidth=200), dict(profile="short"),
    dict(profile="full"), dict(profile="short", precision=5), dict(edgeitems=0, threshold=5),
])
def test_print_options_print_identically(options):
    mg.set_printoptions(**options)
    torch.set_printoptions(**options)
    assert mg.get_printoptions() == torch._tensor_str.get_printoptions()
    picked = [v for name, v in SWEEP if v.size < 2000 and "x1 " not in name][::7]
    for values in picked:
        assert repr(mg.tensor(values)) == repr(torch.from_numpy(values.copy())), values.shape


@needs_torch
@pytest.mark.parametrize("shape", [(), (3,), (2, 5), (12,), (1001,)])
def test_requires_grad_and_grad_fn_suffixes_print_identically(shape):
    values = np.random.default_rng(1).standard_normal(shape)
    for dtype in (np.float32, np.float64):
        a = mg.tensor(values.astype(dtype), requires_grad=True)
        b = torch.tensor(values.astype(dtype), requires_grad=True)
        assert repr(a) == repr(b)
        assert repr(a * 2) == repr(b * 2)
        assert repr(mg.nn.Parameter(a.detach())) == repr(torch.nn.Parameter(b.detach()))
    assert repr(mg.zeros(shape).shape) == repr(torch.zeros(shape).shape)
    assert repr(mg.zeros(shape).size()) == repr(torch.zeros(shape).size())


@needs_torch
def test_the_default_dtype_decides_which_dtype_is_printed(float64):
    torch.set_default_dtype(torch.float64)
    try:
        for values in (np.ones(2, np.float32), np.ones(2, np.float64), np.zeros(0, np.float32)):
            assert repr(mg.tensor(values)) == repr(torch.from_numpy(values))
    finally:
        torch.set_default_dtype(torch.float32)
