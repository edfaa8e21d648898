"""Where indexed dims land: PyTorch's rule, not NumPy's.

PyTorch applies an integer index first (a select, removing its dim), then the tensor indices: their
broadcast dims replace the dims they index when those tensor indices are adjacent, else they go first.
NumPy counts integers as index arrays too, so x[1, :, d] differs. The hand-derived cases below hold
without PyTorch; the generated sweep compares forward, backward and x[index] = value with PyTorch.
"""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck

from conftest import torch

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")

D = np.array([[0, 1, 2]])  # an index tensor of shape (1, 3)

# (index built from mg.tensor(D) as `d`, the shape derived by hand from PyTorch's rule) for x of shape
# (4, 5, 6, 7, 8)
HAND_CASES = [
    # the integer is selected away first, so d stays in place (NumPy: d's dims first)
    (lambda d: (1, slice(None), d), (5, 1, 3, 7, 8)),
    (lambda d: (1, slice(None), slice(3, 11, 2), d, slice(0, 2)), (5, 2, 1, 3, 2)),
    (lambda d: (slice(None), 2, d), (4, 1, 3, 7, 8)),
    (lambda d: (d, 1, d), (1, 3, 7, 8)),  # adjacent once the integer is gone: in place (at dim 0)
    (lambda d: (slice(None), d, 1, d), (4, 1, 3, 8)),  # adjacent after the select: in place at dim 1
    (lambda d: (1, slice(None), d, slice(None), 0), (5, 1, 3, 7)),
    (lambda d: (Ellipsis, d, 1), (4, 5, 6, 1, 3)),
    (lambda d: (1, Ellipsis, d), (5, 6, 7, 1, 3)),
    (lambda d: (mg.tensor(2), slice(None), d), (5, 1, 3, 7, 8)),  # a 0-d tensor selects, as an int
    # separated by a slice or None: the broadcast dims go first, in both libraries
    (lambda d: (d, slice(None), d), (1, 3, 5, 7, 8)),
    (lambda d: (d, None, d), (1, 3, 1, 6, 7, 8)),
    (lambda d: (1, d, slice(1, 3), d), (1, 3, 2, 8)),
    # a bool scalar adds a dim and indexes it as a tensor would
    (lambda d: (1, slice(None), True), (5, 1, 6, 7, 8)),
    (lambda d: (True, slice(None), d), (1, 3, 4, 6, 7, 8)),
    # no integer: NumPy's rule is PyTorch's
    (lambda d: (slice(None), d, d), (4, 1, 3, 7, 8)),
    (lambda d: (mg.tensor([True, False, True, False]), slice(None), [0, 4]), (2, 5, 7, 8)),
]


@pytest.mark.parametrize("case", range(len(HAND_CASES)))
def test_hand_derived_shapes(case):
    make, shape = HAND_CASES[case]
    x = mg.arange(4 * 5 * 6 * 7 * 8, dtype=mg.float64).reshape(4, 5, 6, 7, 8)
    assert tuple(x[make(mg.tensor(D))].shape) == shape


def test_integer_then_tensor_values():
    """x[1, :, d] holds x[1, :, d[i, j]] at [:, i, j]: checked against a loop, not against NumPy."""
    x = mg.tensor(np.random.default_rng(0).standard_normal((4, 5, 6)))
    d = np.array([[0, 5, -1], [2, 2, 3]])
    y = x[1, :, mg.tensor(d)].numpy()
    assert y.shape == (5, 2, 3)
    for i in range(2):
        for j in range(3):
            np.testing.assert_array_equal(y[:, i, j], x.numpy()[1, :, d[i, j]])


def test_integer_then_tensor_backward_and_setitem():
    """The gradient lands where the value was read (repeated indices add up), and writes land there too."""
    x = mg.zeros(3, 4, 5, dtype=mg.float64, requires_grad=True)
    d = mg.tensor([1, 1, 4])
    y = x[2, :, d]  # (4, 3)
    g = mg.arange(12, dtype=mg.float64).reshape(4, 3)
    y.backward(g)
    expected = np.zeros((3, 4, 5))
    for j, k in enumerate([1, 1, 4]):
        expected[2, :, k] += np.arange(12.0).reshape(4, 3)[:, j]
    np.testing.assert_array_equal(x.grad.numpy(), expected)

    z = mg.zeros(3, 4, 5)
    z[2, :, mg.tensor([0, 3])] = mg.tensor([[1.0, 2.0]] * 4)  # a value of PyTorch's shape (4, 2)
    assert z[2, :, 0].tolist() == [1.0] * 4 and z[2, :, 3].tolist() == [2.0] * 4
    assert z.sum().item() == 12.0


def test_split_index_gradients_every_order():
    x = mg.tensor(np.random.default_rng(1).standard_normal((3, 4, 5)), requires_grad=True)
    d = mg.tensor([[0, 2], [3, 1]])  # no place twice: a repeated write keeps one value
    assert gradcheck(lambda t: x_index(t, d) ** 2, (x,))
    assert gradgradcheck(lambda t: x_index(t, d) ** 2, (x,))
    v = mg.tensor(np.random.default_rng(2).standard_normal((2, 2, 4)), requires_grad=True)

    def write(t, value):
        out = t * 1.0
        out[1, :, d] = value.permute(2, 0, 1)  # the written place has PyTorch's shape (4, 2, 2)
        return out * out

    assert gradcheck(write, (x, v))
    assert gradgradcheck(write, (x, v))


def x_index(t, d):
    return t[1, d, 2:]


# ----------------------------------------------------------------------------------------------- sweep
SHAPE = (4, 5, 6, 4, 5)
TENSOR_SHAPES = [(), (3,), (2, 1), (2, 3), (1, 3)]  # broadcast together to (2, 3)


def _random_index(rng):
    """A random valid PyTorch index into SHAPE: (parts, where each part's tensors are NumPy arrays)."""
    n_consuming = int(rng.integers(1, len(SHAPE) + 1))
    kinds = []
    dims_left = n_consuming
    while dims_left > 0:
        kind = rng.choice(["int", "negint", "slice", "stepslice", "negslice", "tensor", "tensor", "list",
                           "tuple", "list2d", "mask", "mask2", "int0d"])
        if kind == "mask2" and dims_left < 2:
            continue
        kinds.append(kind)
        dims_left -= 2 if kind == "mask2" else 1
    fillers = int(rng.integers(0, 3))
    for _ in range(fillers):  # None and Python bools consume no dim
        kinds.insert(int(rng.integers(0, len(kinds) + 1)), rng.choice([None, "true"]))
    use_ellipsis = rng.random() < 0.3
    if use_ellipsis:
        kinds.insert(int(rng.integers(0, len(kinds) + 1)), "ellipsis")
    # which dim each consuming part indexes
    parts, dim = [], 0
    after_ellipsis = False
    consumed_after = 0
    for k in kinds:
        if k == "ellipsis":
            after_ellipsis = True
        elif after_ellipsis and k not in (None, "true"):
            consumed_after += 2 if k == "mask2" else 1
    dim = 0
    for k in kinds:
        if k == "ellipsis":
            parts.append(Ellipsis)
            dim = len(SHAPE) - consumed_after
            continue
        if k is None:
            parts.append(None)
            continue
        if k == "true":
            parts.append(True)
            continue
        size = SHAPE[dim]
        if k == "int":
            parts.append(int(rng.integers(0, size)))
        elif k == "negint":
            parts.append(-int(rng.integers(1, size + 1)))
        elif k == "int0d":
            parts.append(("int0d", np.array(int(rng.integers(-size, size)))))
        elif k == "slice":
            parts.append(slice(None))
        elif k == "stepslice":
            parts.append(slice(int(rng.integers(0, 2)), int(rng.integers(2, 2 * size)), int(rng.integers(1, 3))))
        elif k == "negslice":
            parts.append(slice(-int(rng.integers(2, size + 1)), -int(rng.integers(0, 2)) or None))
        elif k == "tensor":
            shape = TENSOR_SHAPES[int(rng.integers(0, len(TENSOR_SHAPES)))]
            if shape == ():
                shape = (1,)  # a 0-d integer tensor is an int in PyTorch (the "int0d" kind)
            parts.append(("tensor", rng.integers(-size, size, size=shape)))
        elif k == "list":
            parts.append(("list", [int(v) for v in rng.integers(-size, size, size=3)]))
        elif k == "tuple":  # a tuple inside the index is a sequence index, as a list (issue 39)
            parts.append(("tuple", tuple(int(v) for v in rng.integers(-size, size, size=3))))
        elif k == "list2d":  # nested lists: an index of shape (2, 3) or (1, 3)
            rows = int(rng.integers(1, 3))
            parts.append(("list2d", [[int(v) for v in row] for row in rng.integers(-size, size, size=(rows, 3))]))
        elif k == "mask":
            mask = np.zeros(size, dtype=bool)
            mask[rng.choice(size, 3, replace=False)] = True
            parts.append(("tensor", mask))
        elif k == "mask2":
            mask = np.zeros((size, SHAPE[dim + 1]), dtype=bool)
            mask.reshape(-1)[rng.choice(mask.size, 3, replace=False)] = True
            parts.append(("tensor", mask))
        dim += 2 if k == "mask2" else 1
    return parts


def _build(parts, lib):
    out = []
    for p in parts:
        if isinstance(p, tuple):
            kind, value = p
            out.append(value if kind in ("list", "tuple", "list2d") else lib.tensor(value))
        else:
            out.append(p)
    return tuple(out)


N_SWEEP = 400


@needs_torch
def test_sweep_against_pytorch():
    """N_SWEEP random index combinations: x[index]'s values, its gradient, and x[index] = value."""
    rng = np.random.default_rng(33)
    data = rng.standard_normal(SHAPE)
    checked = numpy_differs = sequences = 0
    for case in range(N_SWEEP):
        parts = _random_index(rng)
        it, im = _build(parts, torch), _build(parts, mg)
        xt = torch.tensor(data, requires_grad=True)
        try:
            yt = xt[it]
        except (IndexError, RuntimeError) as error:  # e.g. broadcasting failures: minigrad must refuse too
            with pytest.raises((IndexError, ValueError, mg.errors.ShapeError)):
                mg.tensor(data)[im]
            continue
        xm = mg.tensor(data, requires_grad=True)
        ym = xm[im]
        where = f"case {case}: index {parts!r}"
        numpy_parts = tuple(np.asarray(p[1]) if isinstance(p, tuple) else p for p in parts)
        if all(not isinstance(p, tuple) or p[0] != "tensor" or p[1].dtype != bool for p in parts) \
                and True not in [p for p in parts if isinstance(p, bool)]:  # the loop reference has no masks
            np.testing.assert_array_equal(reference_index(data, parts), yt.detach().numpy(), err_msg=where)
            sequences += any(isinstance(p, tuple) and p[0] in ("tuple", "list2d") for p in parts)
        try:
            numpy_differs += data[numpy_parts].shape != tuple(yt.shape)
        except IndexError:
            numpy_differs += 1
        assert tuple(ym.shape) == tuple(yt.shape), where
        np.testing.assert_array_equal(ym.detach().numpy(), yt.detach().numpy(), err_msg=where)
        r = rng.standard_normal(tuple(yt.shape))
        (yt * torch.tensor(r)).sum().backward()
        (ym * mg.tensor(r)).sum().backward()
        np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12, err_msg=where)

        # x[index] = value, through a graph: a value of the indexed shape where no place is written twice
        # (PyTorch leaves the order of repeated writes unspecified), else a broadcast scalar
        positions = torch.arange(data.size).reshape(SHAPE)[it]
        unique = positions.numel() == torch.unique(positions).numel()
        value = rng.standard_normal(tuple(yt.shape)) if unique else np.array(rng.standard_normal())
        xt2, xm2 = torch.tensor(data, requires_grad=True), mg.tensor(data, requires_grad=True)
        vt, vm = torch.tensor(value, requires_grad=True), mg.tensor(value, requires_grad=True)
        wt, wm = xt2 * 1.0, xm2 * 1.0
        wt[it] = vt
        wm[im] = vm
        np.testing.assert_array_equal(wm.detach().numpy(), wt.detach().numpy(), err_msg=where)
        r2 = rng.standard_normal(SHAPE)
        (wt * torch.tensor(r2)).sum().backward()
        (wm * mg.tensor(r2)).sum().backward()
        np.testing.assert_allclose(xm2.grad.numpy(), xt2.grad.numpy(), rtol=1e-12, atol=1e-12, err_msg=where)
        np.testing.assert_allclose(vm.grad.numpy(), vt.grad.numpy(), rtol=1e-12, atol=1e-12, err_msg=where)

        # and the same write on a plain tensor, outside any graph
        pt, pm = torch.tensor(data), mg.tensor(data)
        pt[it] = torch.tensor(value)
        pm[im] = mg.tensor(value)
        np.testing.assert_array_equal(pm.numpy(), pt.numpy(), err_msg=where)
        checked += 1
    assert checked > N_SWEEP * 0.8  # most draws are valid indices, so the sweep checks what it says
    assert numpy_differs >= 20  # and enough of them place dims where NumPy's rule would not
    assert sequences >= 40  # tuples and nested lists as indices, checked against the loop reference too


# ---- the same sweep without PyTorch: a reference written from PyTorch's rule, by loops ---------------
def reference_index(data, parts):
    """data[index] by PyTorch's rule, computed without NumPy's advanced indexing: integers select their dim
    away first; the sequence indices (tensors, lists, tuples) broadcast together to B; each position m of B
    takes data at the sequences' entries m (the other parts applied as they are), and B's dims go where
    the first sequence was when the sequences are adjacent (once the integers are gone), else first.
    Handles integers, slices, None, ... and integer sequences (the sweep's draws without bool masks)."""
    parts = [np.asarray(p[1]) if isinstance(p, tuple) else p for p in parts]
    parts = [int(p) if isinstance(p, np.ndarray) and p.ndim == 0 else p for p in parts]
    if Ellipsis in [p for p in parts if not isinstance(p, np.ndarray)]:
        at = next(k for k, p in enumerate(parts) if p is Ellipsis)
        consumed = sum(1 for p in parts if p is not None and p is not Ellipsis)
        parts = parts[:at] + [slice(None)] * (data.ndim - consumed) + parts[at + 1:]
    parts += [slice(None)] * (data.ndim - sum(1 for p in parts if p is not None))
    # 1. the integers, selected away (from the last, so the earlier dims keep their numbers)
    dims, dim = [], 0
    for p in parts:
        dims.append(dim)
        dim += p is not None
    for p, d in reversed(list(zip(parts, dims))):
        if isinstance(p, int):
            data = np.take(data, p, axis=d)
    parts = [p for p in parts if not isinstance(p, int)]
    sequence_at = [k for k, p in enumerate(parts) if isinstance(p, np.ndarray)]
    if not sequence_at:
        return data[tuple(parts)]
    broadcast = np.broadcast_arrays(*[parts[k] for k in sequence_at])
    adjacent = sequence_at == list(range(sequence_at[0], sequence_at[-1] + 1))
    # 2. one slice of the result per position of B: the sequences' entries there, as integers
    pieces = []
    for m in np.ndindex(*broadcast[0].shape):
        entry = list(parts)
        for k, array in zip(sequence_at, broadcast):
            entry[k] = int(array[m])
        pieces.append(reference_index(data, [("int0d", np.array(e)) if isinstance(e, int) else e for e in entry]))
    rest = pieces[0].shape if pieces else reference_index(
        data, [0 if isinstance(p, np.ndarray) else p for p in parts]).shape
    out = np.array(pieces).reshape(broadcast[0].shape + rest)
    if adjacent:  # B's dims where the first sequence was: after the dims of the parts before it
        before = sum(1 for p in parts[:sequence_at[0]])  # each slice or None before it gives one dim
        out = np.moveaxis(out, list(range(len(broadcast[0].shape))),
                          list(range(before, before + len(broadcast[0].shape))))
    return out


def test_the_issue_index_with_sequences_split_by_none_and_slices():
    """x[1, (2, 1, 0), None, c, (2, 1, 0), e] (issue 39): sequences split by None and a tensor, after an
    integer: their broadcast dims go first (not adjacent), as PyTorch places them."""
    data = np.arange(4 * 5 * 6 * 4 * 5, dtype=np.float64).reshape(4, 5, 6, 4, 5)
    c, e = np.array([[0, 1, 2]]), np.array([[0], [1]])
    x = mg.tensor(data, requires_grad=True)
    y = x[1, (2, 1, 0), None, mg.tensor(c), (2, 1, 0), mg.tensor(e)]
    assert tuple(y.shape) == (2, 3, 1)
    for i in range(2):
        for j in range(3):
            assert y[i, j, 0].item() == data[1, (2, 1, 0)[j], c[0, j], (2, 1, 0)[j], e[i, 0]]
    assert tuple(x[(2, 1, 0), None, :, slice(1, 3), [2, 1, 0]].shape) == (3, 1, 5, 2, 5)
    assert tuple(x[:, (2, 1, 0), [[0], [1]]].shape) == (4, 2, 3, 4, 5)  # adjacent: in place
    assert tuple(x[(1, 2)].shape) == (6, 4, 5)  # the whole index a tuple: x[1, 2], as in Python
    y.sum().backward()
    expected = np.zeros_like(data)
    np.add.at(expected, (1, np.array([2, 1, 0])[None, :], c, np.array([2, 1, 0])[None, :], e), 1.0)
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_sweep_without_pytorch_against_the_loop_reference():
    """The sweep's draws without bool masks, each compared with reference_index: values, and the gradient
    (the upstream gradient added at the places read, found by indexing the positions with the reference)."""
    rng = np.random.default_rng(39)
    data = rng.standard_normal(SHAPE)
    positions = np.arange(data.size).reshape(SHAPE)
    checked = sequences = 0
    for case in range(250):
        parts = _random_index(rng)
        if any(isinstance(p, bool) or (isinstance(p, tuple) and p[0] == "tensor" and p[1].dtype == bool)
               for p in parts):
            continue
        try:
            expected = reference_index(data, parts)
        except (IndexError, ValueError):  # sequences that do not broadcast: minigrad must refuse as well
            with pytest.raises((IndexError, ValueError, mg.errors.ShapeError)):
                mg.tensor(data)[_build(parts, mg)]
            continue
        where = f"case {case}: index {parts!r}"
        x = mg.tensor(data, requires_grad=True)
        y = x[_build(parts, mg)]
        assert tuple(y.shape) == expected.shape, where
        np.testing.assert_array_equal(y.detach().numpy(), expected, err_msg=where)
        r = rng.standard_normal(expected.shape)
        (y * mg.tensor(r)).sum().backward()
        grad = np.zeros(data.size)
        np.add.at(grad, reference_index(positions, parts).ravel(), r.ravel())
        np.testing.assert_allclose(x.grad.numpy(), grad.reshape(SHAPE), rtol=1e-12, atol=1e-12, err_msg=where)
        checked += 1
        sequences += any(isinstance(p, tuple) and p[0] in ("tuple", "list2d", "list") for p in parts)
    assert checked >= 100 and sequences >= 30


def test_tuple_index_gradcheck():
    x = mg.tensor(np.random.default_rng(3).standard_normal((3, 4, 5)), requires_grad=True)
    assert gradcheck(lambda t: t[1, (0, 3), None, (4, 1)] ** 2, (x,))
    assert gradgradcheck(lambda t: t[(2, 0), :, [[1], [3]]] ** 2, (x,))
