"""Known answers, worked out by hand, for ops whose mistakes only a comparison with PyTorch used to see.

Each section kills a mistake that survived the suite with PyTorch hidden (issue 21): a cast whose
backward rounds the gradient through float16; roll's backward rolling the wrong way; topk(largest=False)
returning the largest; repeat_interleave tiling instead of repeating; a weighted nll_loss/cross_entropy
mean divided by the row count instead of the targets' total weight; OneCycleLR's three phases ending a
step late. Around each, its neighbours: the other casts, the other ops that move elements and must send
the gradient back the right way, sort/argsort, repeat/expand, the other weighted losses and reductions,
and the boundary steps of the other schedules.

The expected values are literals, or come from the documented formula written out here with plain
Python and NumPy (never from the op under test); gradients are also checked with float64 central
differences (minigrad.gradcheck). None of this needs PyTorch.
"""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn, optim
from minigrad.optim import lr_scheduler


def leaf(values, dtype=np.float64):
    return mg.tensor(np.asarray(values, dtype=dtype), requires_grad=True)


def grad_of(fn, x, upstream):
    """x.grad after backward of sum(upstream * fn(x)): a non-uniform upstream gradient, so that every
    output element's gradient is told apart."""
    out = fn(x)
    out.backward(mg.tensor(np.asarray(upstream, dtype=out.detach().numpy().dtype)))
    return x.grad.numpy()


# ---- casts: the gradient of a cast is the upstream gradient, cast back exactly ------------------------
# float32 holds these exactly; float16 does not: 1 + 2^-20 rounds to 1, 70000 overflows to inf, 2^-30
# underflows to 0, and float32(0.1) is not float16(0.1).
FLOAT32_NOT_FLOAT16 = np.array([1 + 2.0 ** -20, 70000.0, 2.0 ** -30, 0.1, -3.0000002384185791], dtype=np.float32)

TO_FLOAT32 = {
    ".float()": lambda x: x.float(),
    ".to(mg.float32)": lambda x: x.to(mg.float32),
    ".to(dtype=)": lambda x: x.to(dtype=mg.float32),
    ".to('cpu', float32)": lambda x: x.to("cpu", mg.float32),
    ".to(other tensor)": lambda x: x.to(mg.zeros(1, dtype=mg.float32)),
    ".type(mg.float32)": lambda x: x.type(mg.float32),
    ".type('torch.FloatTensor')": lambda x: x.type("torch.FloatTensor"),
    ".type_as()": lambda x: x.type_as(mg.zeros(1, dtype=mg.float32)),
}


@pytest.mark.parametrize("cast", list(TO_FLOAT32))
def test_the_gradient_of_a_float32_cast_is_exact(cast):
    x = leaf(np.zeros(5))
    y = TO_FLOAT32[cast](x)
    assert y.dtype == mg.float32
    y.backward(mg.tensor(FLOAT32_NOT_FLOAT16))
    assert x.grad.dtype == mg.float64
    np.testing.assert_array_equal(x.grad.numpy(), FLOAT32_NOT_FLOAT16.astype(np.float64))


def test_the_gradient_of_a_cast_from_float16_and_of_double():
    # float16 -> float32: the float32 gradient comes back rounded to float16 (once)
    h = leaf([0.0, 0.0, 0.0], dtype=np.float16)
    h.float().backward(mg.tensor(np.array([1.0, 0.5, 2.0 ** -10], dtype=np.float32)))
    assert h.grad.dtype == mg.float16
    np.testing.assert_array_equal(h.grad.numpy(), np.array([1.0, 0.5, 2.0 ** -10], dtype=np.float16))
    # float32 -> float64: the gradient is rounded to float32 (to nearest), not through float16
    f = leaf(np.zeros(3), dtype=np.float32)
    upstream = np.array([1 + 2.0 ** -20, 1 + 2.0 ** -40, 0.1])
    f.double().backward(mg.tensor(upstream))
    assert f.grad.dtype == mg.float32
    np.testing.assert_array_equal(f.grad.numpy(), np.array([1 + 2.0 ** -20, 1.0, np.float32(0.1)], dtype=np.float32))
    # float64 -> float32 -> float64: the float64 gradient is rounded to float32 on the way back, once
    x = leaf(np.zeros(3))
    x.float().double().backward(mg.tensor(upstream))
    np.testing.assert_array_equal(x.grad.numpy(), [1 + 2.0 ** -20, 1.0, float(np.float32(0.1))])


def test_the_gradient_of_half_comes_back_in_the_inputs_dtype():
    for dtype in (np.float32, np.float64):
        x = leaf(np.zeros(3), dtype=dtype)
        y = x.half()
        assert y.dtype == mg.float16
        y.backward(mg.tensor(np.array([1.0, 2.0 ** -24, 65504.0], dtype=np.float16)))  # all exact in float16
        assert x.grad.numpy().dtype == dtype
        np.testing.assert_array_equal(x.grad.numpy(), [1.0, 2.0 ** -24, 65504.0])


def test_mixed_precision_arithmetic_sends_back_each_inputs_dtype():
    a, b = leaf(np.zeros(3), dtype=np.float32), leaf(np.zeros(3))
    out = a + b  # promoted to float64
    assert out.dtype == mg.float64
    out.backward(mg.tensor(np.array([1 + 2.0 ** -20, 1 + 2.0 ** -40, 3.0])))
    assert a.grad.dtype == mg.float32 and b.grad.dtype == mg.float64
    np.testing.assert_array_equal(a.grad.numpy(), np.array([1 + 2.0 ** -20, 1.0, 3.0], dtype=np.float32))
    np.testing.assert_array_equal(b.grad.numpy(), [1 + 2.0 ** -20, 1 + 2.0 ** -40, 3.0])


# ---- roll, flip, permute, gather, index_select: the gradient goes back where each element came from ----
def test_roll_forward_known_values():
    x = mg.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    assert x.roll(2).tolist() == [4.0, 5.0, 1.0, 2.0, 3.0]       # each element moves 2 to the right
    assert x.roll(-1).tolist() == [2.0, 3.0, 4.0, 5.0, 1.0]
    assert x.roll(7).tolist() == [4.0, 5.0, 1.0, 2.0, 3.0]       # 7 = 2 (mod 5)
    assert x.roll(-8, 0).tolist() == [4.0, 5.0, 1.0, 2.0, 3.0]   # -8 = 2 (mod 5)
    m = mg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert m.roll(1, 1).tolist() == [[3.0, 1.0, 2.0], [6.0, 4.0, 5.0]]
    assert m.roll(-1, dims=-1).tolist() == [[2.0, 3.0, 1.0], [5.0, 6.0, 4.0]]
    assert m.roll((1, -1), (0, 1)).tolist() == [[5.0, 6.0, 4.0], [2.0, 3.0, 1.0]]
    assert m.roll(2).tolist() == [[5.0, 6.0, 1.0], [2.0, 3.0, 4.0]]  # no dims: the flattened tensor
    assert m.roll(-4).tolist() == [[5.0, 6.0, 1.0], [2.0, 3.0, 4.0]]


def test_roll_gradient_known_values():
    upstream = [10.0, 20.0, 30.0, 40.0, 50.0]
    # y = x.roll(2): y[j] = x[j - 2], so dL/dx[i] = upstream[i + 2]
    np.testing.assert_array_equal(grad_of(lambda x: x.roll(2), leaf(np.zeros(5)), upstream), [30, 40, 50, 10, 20])
    np.testing.assert_array_equal(grad_of(lambda x: x.roll(-1, 0), leaf(np.zeros(5)), upstream), [50, 10, 20, 30, 40])
    np.testing.assert_array_equal(grad_of(lambda x: x.roll(6, 0), leaf(np.zeros(5)), upstream), [20, 30, 40, 50, 10])
    g = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    # y[i, j] = x[i - 1, j + 1]: dL/dx[i, j] = g[i + 1, j - 1]
    np.testing.assert_array_equal(grad_of(lambda x: x.roll((1, -1), (0, 1)), leaf(np.zeros((2, 3))), g),
                                  [[6.0, 4.0, 5.0], [3.0, 1.0, 2.0]])
    np.testing.assert_array_equal(grad_of(lambda x: x.roll(1, 1), leaf(np.zeros((2, 3))), g),
                                  [[2.0, 3.0, 1.0], [5.0, 6.0, 4.0]])
    np.testing.assert_array_equal(grad_of(lambda x: x.roll(2), leaf(np.zeros((2, 3))), g),  # flattened
                                  [[3.0, 4.0, 5.0], [6.0, 1.0, 2.0]])


@pytest.mark.parametrize("shifts, dims", [((1, -1), (1, 2)), ((5, -7), (2, 1)), ((-2, 1, 4), (0, 1, 2)),
                                          (4, -1), (-5, None), (2, 0)])
def test_roll_matches_its_index_formula_and_finite_differences(shifts, dims):
    shape = (3, 4, 5)
    x_values = np.random.default_rng(0).standard_normal(shape)
    upstream = np.random.default_rng(1).standard_normal(shape)
    y = mg.tensor(x_values).roll(shifts, dims).numpy()
    # out[i] = x[i - shift] along each rolled dim (mod its size); no dims: along the flattened tensor
    if dims is None:
        flat = x_values.reshape(-1)
        expected = np.array([flat[(k - shifts) % flat.size] for k in range(flat.size)]).reshape(shape)
        expected_grad = np.array([upstream.reshape(-1)[(k + shifts) % flat.size] for k in range(flat.size)])
        expected_grad = expected_grad.reshape(shape)
    else:
        pairs = list(zip(*(((shifts,), (dims,)) if isinstance(dims, int) else (shifts, dims))))
        expected, expected_grad = np.empty(shape), np.empty(shape)
        for i in np.ndindex(*shape):
            source, target = list(i), list(i)
            for s, d in pairs:
                source[d] = (i[d] - s) % shape[d]
                target[d] = (i[d] + s) % shape[d]
            expected[i], expected_grad[i] = x_values[tuple(source)], upstream[tuple(target)]
    np.testing.assert_array_equal(y, expected)
    np.testing.assert_array_equal(grad_of(lambda x: x.roll(shifts, dims), leaf(x_values), upstream), expected_grad)
    assert mg.gradcheck(lambda x: x.roll(shifts, dims), [leaf(x_values)])


def test_flip_and_permute_gradient_known_values():
    g = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    np.testing.assert_array_equal(grad_of(lambda x: x.flip(1), leaf(np.zeros((2, 3))), g),
                                  [[3.0, 2.0, 1.0], [6.0, 5.0, 4.0]])
    np.testing.assert_array_equal(grad_of(lambda x: x.flip(0, 1), leaf(np.zeros((2, 3))), g),
                                  [[6.0, 5.0, 4.0], [3.0, 2.0, 1.0]])
    # a 3-cycle of dims on a cube keeps the shape, so only the values tell the permutation from its inverse
    cube = np.arange(8.0).reshape(2, 2, 2)
    y = mg.tensor(cube).permute(1, 2, 0).numpy()
    for i, j, k in np.ndindex(2, 2, 2):
        assert y[i, j, k] == cube[k, i, j]  # out[i, j, k] = x[k, i, j]
    upstream = np.arange(8.0).reshape(2, 2, 2) * 10
    grad = grad_of(lambda x: x.permute(1, 2, 0), leaf(np.zeros((2, 2, 2))), upstream)
    for i, j, k in np.ndindex(2, 2, 2):
        assert grad[k, i, j] == upstream[i, j, k]


def test_gather_and_index_select_send_the_gradient_to_their_sources():
    g = [[1.0, 2.0], [10.0, 20.0]]
    index = mg.tensor([[2, 0], [1, 1]])
    x = mg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.gather(1, index).tolist() == [[3.0, 1.0], [5.0, 5.0]]
    np.testing.assert_array_equal(grad_of(lambda t: t.gather(1, index), leaf(np.zeros((2, 3))), g),
                                  [[2.0, 0.0, 1.0], [0.0, 30.0, 0.0]])
    index0 = mg.tensor([[1, 0, 1]])
    assert x.gather(0, index0).tolist() == [[4.0, 2.0, 6.0]]
    np.testing.assert_array_equal(grad_of(lambda t: t.gather(0, index0), leaf(np.zeros((2, 3))), [[1.0, 2.0, 3.0]]),
                                  [[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]])
    ids = mg.tensor([2, 0, 2])
    assert x.index_select(1, ids).tolist() == [[3.0, 1.0, 3.0], [6.0, 4.0, 6.0]]
    np.testing.assert_array_equal(
        grad_of(lambda t: t.index_select(1, ids), leaf(np.zeros((2, 3))), [[1.0, 2.0, 4.0], [8.0, 16.0, 32.0]]),
        [[2.0, 0.0, 5.0], [16.0, 0.0, 40.0]])


# ---- topk, sort, argsort ----------------------------------------------------------------------------
X8 = [3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0]


def test_topk_known_values():
    x = mg.tensor(X8)
    largest = x.topk(3)
    assert largest.values.tolist() == [9.0, 6.0, 5.0] and largest.indices.tolist() == [5, 7, 4]
    smallest = x.topk(3, largest=False)
    assert smallest.values.tolist() == [1.0, 1.5, 2.0] and smallest.indices.tolist() == [1, 3, 6]
    smallest = mg.topk(x, 3, largest=False, sorted=False)  # some order: compare as sets
    assert sorted(smallest.values.tolist()) == [1.0, 1.5, 2.0] and sorted(smallest.indices.tolist()) == [1, 3, 6]
    assert x.topk(1, largest=False).values.tolist() == [1.0] and x.topk(8, largest=False).values.tolist() == sorted(X8)


def test_topk_along_a_dim_and_with_ties():
    m = mg.tensor([[4.0, 1.0, 7.0],
                   [2.0, 8.0, 3.0],
                   [6.0, 5.0, 0.0]])
    low = m.topk(2, dim=0, largest=False)
    assert low.values.tolist() == [[2.0, 1.0, 0.0], [4.0, 5.0, 3.0]]
    assert low.indices.tolist() == [[1, 0, 2], [0, 2, 1]]
    high = mg.topk(m, 1, dim=1)
    assert high.values.tolist() == [[7.0], [8.0], [6.0]] and high.indices.tolist() == [[2], [1], [0]]
    low_rows = m.topk(2, dim=-1, largest=False)
    assert low_rows.values.tolist() == [[1.0, 4.0], [2.0, 3.0], [0.0, 5.0]]
    assert low_rows.indices.tolist() == [[1, 0], [0, 2], [2, 1]]
    # ties: the values are known; each index must point at its value, and no index twice
    t = mg.tensor([2.0, 0.0, 2.0, 0.0, 1.0])
    for largest, values in ((False, [0.0, 0.0, 1.0]), (True, [2.0, 2.0, 1.0])):
        out = t.topk(3, largest=largest)
        assert out.values.tolist() == values
        indices = out.indices.tolist()
        assert len(set(indices)) == 3 and [t.tolist()[i] for i in indices] == values


def test_topk_smallest_gradient_goes_to_the_smallest():
    # values [1.0, 1.5, 2.0] come from positions 1, 3, 6: their upstream gradients land there
    np.testing.assert_array_equal(grad_of(lambda x: x.topk(3, largest=False).values, leaf(X8), [10.0, 20.0, 30.0]),
                                  [0, 10, 0, 20, 0, 0, 30, 0])
    np.testing.assert_array_equal(grad_of(lambda x: x.topk(2).values, leaf(X8), [10.0, 20.0]),
                                  [0, 0, 0, 0, 0, 10, 0, 20])
    assert mg.gradcheck(lambda x: x.topk(2, dim=0, largest=False).values, [leaf(np.array(X8).reshape(4, 2))])


def test_sort_and_argsort_known_values():
    x = mg.tensor(X8)
    assert x.sort().values.tolist() == sorted(X8) and x.sort().indices.tolist() == [1, 3, 6, 0, 2, 4, 7, 5]
    down = x.sort(descending=True)
    assert down.values.tolist() == sorted(X8, reverse=True) and down.indices.tolist() == [5, 7, 4, 2, 0, 6, 3, 1]
    assert x.argsort(descending=True).tolist() == [5, 7, 4, 2, 0, 6, 3, 1]
    assert mg.argsort(x).tolist() == [1, 3, 6, 0, 2, 4, 7, 5]
    m = mg.tensor([[3.0, 1.0], [0.0, 2.0]])
    assert m.sort(dim=0, descending=True).values.tolist() == [[3.0, 2.0], [0.0, 1.0]]
    assert m.argsort(dim=0).tolist() == [[1, 0], [0, 1]]
    # the sorted values' gradients go back to where each value came from
    upstream = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    np.testing.assert_array_equal(grad_of(lambda t: t.sort(descending=True).values, leaf(X8), upstream),
                                  [5, 8, 4, 7, 3, 1, 6, 2])
    np.testing.assert_array_equal(grad_of(lambda t: t.sort().values, leaf(X8), upstream), [4, 1, 5, 2, 6, 8, 3, 7])


# ---- repeat_interleave, repeat, expand -----------------------------------------------------------------
def test_repeat_interleave_known_values():
    v = mg.tensor([1.0, 2.0, 3.0])
    assert v.repeat_interleave(2).tolist() == [1.0, 1.0, 2.0, 2.0, 3.0, 3.0]
    assert mg.repeat_interleave(v, mg.tensor([2, 0, 3])).tolist() == [1.0, 1.0, 3.0, 3.0, 3.0]
    assert v.repeat_interleave(mg.tensor([3])).tolist() == [1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0]
    m = mg.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert m.repeat_interleave(2).tolist() == [1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0]  # no dim: flattened
    assert m.repeat_interleave(2, dim=0).tolist() == [[1.0, 2.0], [1.0, 2.0], [3.0, 4.0], [3.0, 4.0]]
    assert m.repeat_interleave(2, dim=1).tolist() == [[1.0, 1.0, 2.0, 2.0], [3.0, 3.0, 4.0, 4.0]]
    assert m.repeat_interleave(mg.tensor([1, 2]), dim=0).tolist() == [[1.0, 2.0], [3.0, 4.0], [3.0, 4.0]]
    assert m.repeat_interleave(mg.tensor([0, 3]), dim=-1).tolist() == [[2.0, 2.0, 2.0], [4.0, 4.0, 4.0]]
    assert mg.tensor([[1, 2], [3, 4]]).repeat_interleave(2, dim=0).tolist() == [[1, 2], [1, 2], [3, 4], [3, 4]]


def test_repeat_interleave_gradient_adds_up_each_elements_copies():
    upstream = [1.0, 2.0, 4.0, 8.0, 16.0]
    np.testing.assert_array_equal(
        grad_of(lambda x: x.repeat_interleave(mg.tensor([2, 0, 3])), leaf(np.zeros(3)), upstream), [3.0, 0.0, 28.0])
    np.testing.assert_array_equal(
        grad_of(lambda x: x.repeat_interleave(2), leaf(np.zeros(3)), [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]),
        [3.0, 12.0, 48.0])
    g = [[1.0, 2.0, 4.0, 8.0], [16.0, 32.0, 64.0, 128.0]]
    np.testing.assert_array_equal(grad_of(lambda x: x.repeat_interleave(2, dim=1), leaf(np.zeros((2, 2))), g),
                                  [[3.0, 12.0], [48.0, 192.0]])
    np.testing.assert_array_equal(grad_of(lambda x: x.repeat_interleave(2), leaf(np.zeros((2, 2))), np.ravel(g)),
                                  [[3.0, 12.0], [48.0, 192.0]])
    np.testing.assert_array_equal(
        grad_of(lambda x: x.repeat_interleave(mg.tensor([1, 2]), dim=0), leaf(np.zeros((2, 2))),
                [[1.0, 2.0], [4.0, 8.0], [16.0, 32.0]]),
        [[1.0, 2.0], [20.0, 40.0]])
    assert mg.gradcheck(lambda x: x.repeat_interleave(mg.tensor([3, 1, 2]), dim=1),
                        [leaf(np.random.default_rng(0).standard_normal((2, 3)))])


def test_repeat_tiles_and_expand_broadcasts():
    v = mg.tensor([1.0, 2.0, 3.0])
    assert v.repeat(2).tolist() == [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]
    assert v.repeat(2, 1).tolist() == [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
    m = mg.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert m.repeat(1, 2).tolist() == [[1.0, 2.0, 1.0, 2.0], [3.0, 4.0, 3.0, 4.0]]
    assert m.repeat(2, 1).tolist() == [[1.0, 2.0], [3.0, 4.0], [1.0, 2.0], [3.0, 4.0]]
    # the gradient of each element: the sum over its copies
    np.testing.assert_array_equal(
        grad_of(lambda x: x.repeat(2), leaf(np.zeros(3)), [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]), [9.0, 18.0, 36.0])
    np.testing.assert_array_equal(
        grad_of(lambda x: x.repeat(1, 2), leaf(np.zeros((2, 2))), [[1.0, 2.0, 4.0, 8.0], [16.0, 32.0, 64.0, 128.0]]),
        [[5.0, 10.0], [80.0, 160.0]])
    np.testing.assert_array_equal(
        grad_of(lambda x: x.repeat(2, 1, 1), leaf(np.zeros((1, 2))), [[[1.0, 2.0]], [[4.0, 8.0]]]), [[5.0, 10.0]])
    np.testing.assert_array_equal(
        grad_of(lambda x: x.expand(2, 3), leaf(np.zeros((2, 1))), [[1.0, 2.0, 4.0], [8.0, 16.0, 32.0]]),
        [[7.0], [56.0]])
    np.testing.assert_array_equal(
        grad_of(lambda x: x.expand(2, 3), leaf(np.zeros(3)), [[1.0, 2.0, 4.0], [8.0, 16.0, 32.0]]), [9.0, 18.0, 36.0])


# ---- weighted losses: "mean" divides by the targets' total weight --------------------------------------
LOGITS = np.array([[0.5, -1.0, 2.0],
                   [1.5, 0.3, -0.7],
                   [-0.2, 0.8, 0.1],
                   [2.2, -1.3, 0.4]])
TARGET = np.array([0, 2, 1, 2])
WEIGHT = np.array([0.2, 1.0, 3.0])


def log_softmax_rows(z):
    return np.array([[v - math.log(sum(math.exp(u) for u in row)) for v in row] for row in z])


def expected_cross_entropy(logits, target, weight, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
    """PyTorch's documented definition, one row at a time: row n with class y = target[n] and C classes
    loses (1 - e) w_y (-log p_ny) + (e / C) sum_c w_c (-log p_nc); rows whose target is ignore_index
    lose 0 and weigh 0. "mean" divides the sum by the total weight sum_n w_{y_n} of the rows that count."""
    logp = log_softmax_rows(logits)
    n_classes = logits.shape[1]
    losses, total_weight = [], 0.0
    for n, y in enumerate(target):
        if y == ignore_index:
            losses.append(0.0)
            continue
        total_weight += weight[y]
        smooth = sum(weight[c] * -logp[n, c] for c in range(n_classes))
        losses.append((1 - label_smoothing) * weight[y] * -logp[n, y] + label_smoothing / n_classes * smooth)
    if reduction == "none":
        return np.array(losses)
    return sum(losses) / total_weight if reduction == "mean" else sum(losses)


def test_weighted_nll_loss_known_values():
    logp = mg.tensor(LOGITS)  # any numbers serve as log-probabilities for nll_loss
    w = mg.tensor(WEIGHT)
    # rows pick -0.5*0.2, 0.7*3.0, -0.8*1.0, -0.4*3.0 ; their weights add up to 0.2 + 3 + 1 + 3 = 7.2
    picked = 0.2 * -0.5 + 3.0 * 0.7 + 1.0 * -0.8 + 3.0 * -0.4
    assert F.nll_loss(logp, mg.tensor(TARGET), weight=w).item() == pytest.approx(picked / 7.2, rel=1e-14)
    assert F.nll_loss(logp, mg.tensor(TARGET), weight=w, reduction="sum").item() == pytest.approx(picked, rel=1e-14)
    np.testing.assert_allclose(F.nll_loss(logp, mg.tensor(TARGET), weight=w, reduction="none").numpy(),
                               [0.2 * -0.5, 3.0 * 0.7, 1.0 * -0.8, 3.0 * -0.4], rtol=1e-14)
    # ignore_index: the row with target 1 adds neither its loss nor its weight
    kept = 0.2 * -0.5 + 3.0 * 0.7 + 3.0 * -0.4
    assert F.nll_loss(logp, mg.tensor(TARGET), weight=w, ignore_index=1).item() == pytest.approx(kept / 6.2, rel=1e-14)
    assert nn.NLLLoss(weight=w, ignore_index=1)(logp, mg.tensor(TARGET)).item() == pytest.approx(kept / 6.2, rel=1e-14)
    # (N, C, d) input: the same rows, laid out along a trailing dim
    spatial = mg.tensor(LOGITS.reshape(2, 2, 3).transpose(0, 2, 1))  # (2, 3, 2): sample n, class c, position d
    spatial_loss = F.nll_loss(spatial, mg.tensor(TARGET.reshape(2, 2)), weight=w)
    assert spatial_loss.item() == pytest.approx(picked / 7.2, rel=1e-14)


def test_weighted_nll_loss_gradient_known_values():
    # d mean / d logp[n, y_n] = -w[y_n] / total weight; 0 elsewhere (and for ignored rows)
    expected = np.zeros((4, 3))
    for n, y in enumerate(TARGET):
        expected[n, y] = -WEIGHT[y] / 7.2
    x = leaf(LOGITS)
    F.nll_loss(x, mg.tensor(TARGET), weight=mg.tensor(WEIGHT)).backward()
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-14)
    expected_ignored = np.where(np.arange(4)[:, None] == 2, 0.0, expected * 7.2 / 6.2)
    x = leaf(LOGITS)
    F.nll_loss(x, mg.tensor(TARGET), weight=mg.tensor(WEIGHT), ignore_index=1).backward()
    np.testing.assert_allclose(x.grad.numpy(), expected_ignored, rtol=1e-14)
    assert mg.gradcheck(lambda t: F.nll_loss(t, mg.tensor(TARGET), weight=mg.tensor(WEIGHT), ignore_index=1),
                        [leaf(LOGITS)])


@pytest.mark.parametrize("ignore_index", [-100, 1, 2])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.3])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_weighted_cross_entropy_matches_its_definition(ignore_index, label_smoothing, reduction):
    kw = dict(weight=mg.tensor(WEIGHT), ignore_index=ignore_index, label_smoothing=label_smoothing, reduction=reduction)
    ours = F.cross_entropy(mg.tensor(LOGITS), mg.tensor(TARGET), **kw).numpy()
    expected = expected_cross_entropy(LOGITS, TARGET, WEIGHT, ignore_index, label_smoothing, reduction)
    np.testing.assert_allclose(ours, expected, rtol=1e-13)
    module = nn.CrossEntropyLoss(**kw)(mg.tensor(LOGITS), mg.tensor(TARGET)).numpy()
    np.testing.assert_allclose(module, expected, rtol=1e-13)
    # and its gradient, against finite differences of the definition itself and of minigrad's op
    x = leaf(LOGITS)
    loss = F.cross_entropy(x, mg.tensor(TARGET), **kw)
    upstream = np.linspace(0.5, 2.0, 4) if reduction == "none" else 1.0
    (loss * mg.tensor(upstream)).sum().backward()
    numeric, h = np.zeros_like(LOGITS), 1e-6
    for i in np.ndindex(*LOGITS.shape):
        plus, minus = LOGITS.copy(), LOGITS.copy()
        plus[i] += h
        minus[i] -= h
        numeric[i] = np.sum(upstream * (expected_cross_entropy(plus, TARGET, WEIGHT, ignore_index, label_smoothing,
                                                               reduction)
                                        - expected_cross_entropy(minus, TARGET, WEIGHT, ignore_index, label_smoothing,
                                                                 reduction))) / (2 * h)
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-6, atol=1e-8)
    assert mg.gradcheck(lambda t: F.cross_entropy(t, mg.tensor(TARGET), **kw), [leaf(LOGITS)])


def test_weighted_mean_is_not_the_row_mean():
    """The two readings of "mean" differ by total weight / row count = 7.2 / 4 here: a guard on the guard."""
    by_weight = expected_cross_entropy(LOGITS, TARGET, WEIGHT)
    by_rows = expected_cross_entropy(LOGITS, TARGET, WEIGHT, reduction="sum") / 4
    assert by_weight == pytest.approx(by_rows * 4 / 7.2) and abs(by_weight - by_rows) > 0.1
    assert F.cross_entropy(mg.tensor(LOGITS), mg.tensor(TARGET), weight=mg.tensor(WEIGHT)).item() == \
        pytest.approx(by_weight, rel=1e-13)


def test_binary_cross_entropy_with_logits_weights_and_mean():
    # at logit 0, sigmoid = 1/2: each unweighted term is log 2; "mean" divides by the element count
    x, y = leaf([0.0, 0.0]), mg.tensor([1.0, 0.0], dtype=mg.float64)
    w = mg.tensor([2.0, 0.5], dtype=mg.float64)
    log2 = math.log(2.0)
    assert F.binary_cross_entropy_with_logits(x, y, weight=w).item() == pytest.approx(1.25 * log2, rel=1e-14)
    assert F.binary_cross_entropy_with_logits(x, y, weight=w, reduction="sum").item() == pytest.approx(2.5 * log2)
    loss = F.binary_cross_entropy_with_logits(x, y, weight=w, pos_weight=mg.tensor([3.0, 3.0], dtype=mg.float64))
    assert loss.item() == pytest.approx((2.0 * 3.0 * log2 + 0.5 * log2) / 2, rel=1e-14)
    # d/dx of w (-(p y log s + (1 - y) log(1 - s))) = w ((p y + 1 - y) s - p y), at s = 1/2, halved by the mean
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0 * (3.0 * 0.5 - 3.0) / 2, 0.5 * 0.5 / 2], rtol=1e-14)
    module = nn.BCEWithLogitsLoss(weight=w, pos_weight=mg.tensor([3.0, 3.0], dtype=mg.float64))
    assert module(mg.tensor([0.0, 0.0], dtype=mg.float64), y).item() == pytest.approx(loss.item(), rel=1e-14)


def test_kl_div_reductions_known_values():
    p = mg.tensor([[0.5, 0.5], [0.25, 0.75]], dtype=mg.float64)
    log_q = mg.tensor(np.log([[0.25, 0.75], [0.5, 0.5]]))
    terms = [[0.5 * math.log(0.5 / 0.25), 0.5 * math.log(0.5 / 0.75)],
             [0.25 * math.log(0.25 / 0.5), 0.75 * math.log(0.75 / 0.5)]]
    total = sum(map(sum, terms))
    assert F.kl_div(log_q, p, reduction="batchmean").item() == pytest.approx(total / 2, rel=1e-14)
    assert F.kl_div(log_q, p, reduction="mean").item() == pytest.approx(total / 4, rel=1e-14)
    assert F.kl_div(log_q, p, reduction="sum").item() == pytest.approx(total, rel=1e-14)


# ---- learning-rate schedules: whole sequences, worked out by hand ---------------------------------------
def lrs_and_momenta(make_scheduler, steps, optimizer="sgd"):
    p = nn.Parameter(mg.zeros(1))
    opt = optim.SGD([p], lr=0.1, momentum=0.9) if optimizer == "sgd" else optim.Adam([p], lr=0.1)
    scheduler = make_scheduler(opt)
    group = opt.param_groups[0]
    momentum = (lambda: group["momentum"]) if optimizer == "sgd" else (lambda: group["betas"][0])
    lrs, momenta = [group["lr"]], [momentum()]
    for _ in range(steps):
        opt.step()
        scheduler.step()
        lrs.append(group["lr"])
        momenta.append(momentum())
    return lrs, momenta


def cos_anneal(start, end, pct):
    return end + (start - end) / 2 * (math.cos(math.pi * pct) + 1)


def test_one_cycle_three_phase_linear_known_values():
    # total_steps 10, pct_start 0.3: the phases end at steps 0.3*10 - 1 = 2, 2*0.3*10 - 2 = 4 and 9.
    # lr: 0.1 (max_lr / div_factor) up to 1.0, back down to 0.1, then down to 0.1 / 1e4 = 1e-5.
    lrs, momenta = lrs_and_momenta(lambda opt: lr_scheduler.OneCycleLR(
        opt, max_lr=1.0, total_steps=10, pct_start=0.3, anneal_strategy="linear", three_phase=True, div_factor=10.0,
        final_div_factor=1e4), 9)
    step = (1e-5 - 0.1) / 5  # phase 3: five steps from 0.1 to 1e-5
    np.testing.assert_allclose(lrs, [0.1, 0.55, 1.0, 0.55, 0.1] + [0.1 + k * step for k in range(1, 6)], rtol=1e-12)
    # momentum: 0.95 down to 0.85 (phase 1), back up to 0.95 (phase 2), then stays at 0.95
    np.testing.assert_allclose(momenta, [0.95, 0.90, 0.85, 0.90, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95], rtol=1e-12)


def test_one_cycle_three_phase_cos_known_values():
    lrs, momenta = lrs_and_momenta(lambda opt: lr_scheduler.OneCycleLR(
        opt, max_lr=1.0, total_steps=10, pct_start=0.3, three_phase=True, div_factor=10.0), 9, optimizer="adam")
    # halfway through a phase the cosine is at the midpoint; at its ends, at the end points
    expected = [0.1, 0.55, 1.0, 0.55, 0.1] + [cos_anneal(0.1, 1e-5, k / 5) for k in range(1, 6)]
    np.testing.assert_allclose(lrs, expected, rtol=1e-12)
    assert lrs[-1] == pytest.approx(1e-5, rel=1e-12)
    np.testing.assert_allclose(momenta, [0.95, 0.90, 0.85, 0.90, 0.95] + [0.95] * 5, rtol=1e-12)  # Adam's beta1


def test_one_cycle_three_phase_longer_schedule():
    # total_steps 20, pct_start 0.25: phases end at 4, 8 and 19
    lrs, momenta = lrs_and_momenta(lambda opt: lr_scheduler.OneCycleLR(
        opt, max_lr=2.0, total_steps=20, pct_start=0.25, anneal_strategy="linear", three_phase=True,
        base_momentum=0.8, max_momentum=0.9), 19)
    start, top, low = 2.0 / 25, 2.0, 2.0 / 25 / 1e4
    expected = ([start + (top - start) * k / 4 for k in range(5)] + [top + (start - top) * k / 4 for k in range(1, 5)]
                + [start + (low - start) * k / 11 for k in range(1, 12)])
    np.testing.assert_allclose(lrs, expected, rtol=1e-12)
    assert lrs.index(max(lrs)) == 4 and lrs[8] == pytest.approx(start, rel=1e-12)
    expected_m = ([0.9 - 0.1 * k / 4 for k in range(5)] + [0.8 + 0.1 * k / 4 for k in range(1, 5)] + [0.9] * 11)
    np.testing.assert_allclose(momenta, expected_m, rtol=1e-12)


@pytest.mark.parametrize("strategy", ["cos", "linear"])
def test_one_cycle_two_phase_known_values(strategy):
    # total_steps 10, pct_start 0.25: the warm-up ends at 0.25*10 - 1 = 1.5 (between steps), the rest at 9
    anneal = cos_anneal if strategy == "cos" else (lambda a, b, pct: a + (b - a) * pct)
    lrs, momenta = lrs_and_momenta(lambda opt: lr_scheduler.OneCycleLR(
        opt, max_lr=1.0, total_steps=10, pct_start=0.25, anneal_strategy=strategy), 9)
    start, low = 1.0 / 25, 1.0 / 25 / 1e4
    expected = [start, anneal(start, 1.0, 1 / 1.5)] + [anneal(1.0, low, (t - 1.5) / 7.5) for t in range(2, 10)]
    np.testing.assert_allclose(lrs, expected, rtol=1e-12)
    assert lrs[-1] == pytest.approx(low, rel=1e-12)
    expected_m = [0.95, anneal(0.95, 0.85, 1 / 1.5)] + [anneal(0.85, 0.95, (t - 1.5) / 7.5) for t in range(2, 10)]
    np.testing.assert_allclose(momenta, expected_m, rtol=1e-12)
    # epochs * steps_per_epoch is the same schedule
    same, _ = lrs_and_momenta(lambda opt: lr_scheduler.OneCycleLR(
        opt, max_lr=1.0, epochs=5, steps_per_epoch=2, pct_start=0.25, anneal_strategy=strategy), 9)
    assert same == lrs


def test_other_schedules_at_their_boundary_steps():
    def lrs(make, steps):
        return lrs_and_momenta(make, steps)[0]

    np.testing.assert_allclose(lrs(lambda o: lr_scheduler.StepLR(o, step_size=3, gamma=0.5), 7),
                               [0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025], rtol=1e-12)
    np.testing.assert_allclose(lrs(lambda o: lr_scheduler.MultiStepLR(o, milestones=[2, 3, 3], gamma=0.1), 4),
                               [0.1, 0.1, 0.01, 0.0001, 0.0001], rtol=1e-12)
    np.testing.assert_allclose(lrs(lambda o: lr_scheduler.LinearLR(o, start_factor=0.25, total_iters=3), 5),
                               [0.025, 0.05, 0.075, 0.1, 0.1, 0.1], rtol=1e-12)
    np.testing.assert_allclose(lrs(lambda o: lr_scheduler.LinearLR(o, start_factor=1.0, end_factor=0.5,
                                                                    total_iters=2), 3),
                               [0.1, 0.075, 0.05, 0.05], rtol=1e-12)
    # half a cosine over T_max = 2 steps, then back up (PyTorch's recursive form keeps going)
    np.testing.assert_allclose(lrs(lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=2, eta_min=0.02), 4),
                               [0.1, 0.06, 0.02, 0.06, 0.1], rtol=1e-12)
    np.testing.assert_allclose(lrs(lambda o: lr_scheduler.ExponentialLR(o, gamma=0.5), 3),
                               [0.1, 0.05, 0.025, 0.0125], rtol=1e-12)
    # warm-up: LinearLR for 2 steps, then StepLR from its own step 0
    def warm_up_then_steps(o):
        return lr_scheduler.SequentialLR(o, [lr_scheduler.LinearLR(o, start_factor=0.5, total_iters=2),
                                             lr_scheduler.StepLR(o, step_size=2, gamma=0.1)], milestones=[2])

    np.testing.assert_allclose(lrs(warm_up_then_steps, 5), [0.05, 0.075, 0.1, 0.1, 0.01, 0.01], rtol=1e-12)
