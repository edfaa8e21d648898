"""In-place writes through views, as PyTorch does them, and no silently wrong gradient (issue 32).

A write into a view of a tensor in the graph (x[mask] = v on a reshape, out[:, 0] += h, x.view(-1)[i] = v,
masked_fill_ on a transpose) is recorded in the base's history (PyTorch's CopySlices): the written
value gets the gradient of the places it went to, the overwritten elements get none, the rest pass
through. Views taken before the write see the new values and follow the base's new history.

Each behaviour is written once as `fn(lib)` and runs with lib = minigrad and, where installed, with
lib = torch; the expected numbers are worked out by hand or checked by finite differences
(gradcheck in float64), so the tests mean the same without PyTorch.
"""
import numpy as np
import pytest

import minigrad as mg

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def values(t):
    return t.detach().numpy().tolist()


# ---- the key case: d2l.ai's masked_softmax, written here as its users write it --------------------
def sequence_mask(lib, X, valid_len, value=0.0):
    """X[i, j] = value for every j >= valid_len[i]: an in-place write through a boolean mask."""
    maxlen = X.size(1)
    mask = lib.arange(maxlen, dtype=lib.float32)[None, :] < valid_len[:, None]
    X[~mask] = value
    return X


def masked_softmax(lib, X, valid_lens):
    """Softmax over the last dim of X (batch, queries, keys), keys at or past valid_lens masked out."""
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = lib.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    # X.reshape(...) is a view of the scores, which are in the graph: the write goes through it
    X = sequence_mask(lib, X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
    return lib.nn.functional.softmax(X.reshape(shape), dim=-1)


def _attention_weights(lib, q, k, valid_lens):
    scores = lib.bmm(q, k.transpose(1, 2))  # (B, T, d) @ (B, d, S) -> (B, T, S), in the graph
    return masked_softmax(lib, scores, valid_lens)


def _masked_softmax_case(lib, dtype):
    rng = np.random.default_rng(0)
    q = lib.tensor(rng.standard_normal((2, 3, 4)), dtype=dtype, requires_grad=True)
    k = lib.tensor(rng.standard_normal((2, 5, 4)), dtype=dtype, requires_grad=True)
    upstream = lib.tensor(rng.standard_normal((2, 3, 5)), dtype=dtype)
    return q, k, upstream, lib.tensor([2, 4])


def test_d2l_masked_softmax_writes_through_a_reshaped_view_and_differentiates(lib):
    q, k, upstream, valid_lens = _masked_softmax_case(lib, lib.float64)
    w = _attention_weights(lib, q, k, valid_lens)
    # the reference, computed apart: a softmax over the first valid_len keys, zeros after
    scores = np.einsum("btd,bsd->bts", values(q), values(k))
    want = np.zeros_like(scores)
    for b, n in enumerate([2, 4]):
        e = np.exp(scores[b, :, :n] - scores[b, :, :n].max(-1, keepdims=True))
        want[b, :, :n] = e / e.sum(-1, keepdims=True)
    np.testing.assert_allclose(values(w), want, rtol=1e-12, atol=1e-15)
    (w * upstream).sum().backward()
    # masked keys receive no gradient: row 0 of k's first batch entry is used, rows 2..4 are masked out
    assert np.all(np.array(values(k.grad))[0, 2:] == 0.0)
    assert np.all(np.array(values(k.grad))[1, 4:] == 0.0)
    assert np.any(np.array(values(k.grad))[0, :2] != 0.0)


def test_d2l_masked_softmax_passes_gradcheck_and_gradgradcheck():
    q, k, _, valid_lens = _masked_softmax_case(mg, mg.float64)
    fn = lambda q, k: _attention_weights(mg, q, k, valid_lens)  # noqa: E731
    assert mg.gradcheck(fn, [q, k])
    assert mg.gradgradcheck(fn, [q, k])


@needs_torch
def test_d2l_masked_softmax_matches_pytorch_in_float32():
    results = []
    for lib in (mg, torch):
        q, k, upstream, valid_lens = _masked_softmax_case(lib, lib.float32)
        w = _attention_weights(lib, q, k, valid_lens)
        (w * upstream).sum().backward()
        results.append((values(w), values(q.grad), values(k.grad)))
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# ---- writes through views of every kind --------------------------------------------------------
def _flat_write(lib, x, v):
    y = x * 1.0
    y.view(-1)[1] = v[0] * 3  # through a flattening view
    return y


def _column_add(lib, x, v):
    out = x * 2.0
    out[:, 0] += v[:2]  # an RNN-style loop body: += on a column
    return out


def _masked_fill_on_transpose(lib, x, v):
    y = x * v[0]
    y.t().masked_fill_(lib.tensor([[True, False], [False, False], [False, True]]), 0.0)
    return y


def _chained_views(lib, x, v):
    y = x * 3.0
    y.reshape(3, 2).transpose(0, 1)[1, 1:].mul_(v[1:])  # three views deep: y.flat[3] *= v1, y.flat[5] *= v2
    return y


WRITES = {"flat": _flat_write, "column": _column_add, "masked_fill_ on t()": _masked_fill_on_transpose,
          "chained": _chained_views}
X0 = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
V0 = [2.0, -3.0, 0.5]


@pytest.mark.parametrize("case", sorted(WRITES))
def test_writes_through_views_pass_gradcheck_and_gradgradcheck(case):
    x = mg.tensor(X0, dtype=mg.float64, requires_grad=True)
    v = mg.tensor(V0, dtype=mg.float64, requires_grad=True)
    fn = lambda x, v: WRITES[case](mg, x, v)  # noqa: E731
    assert mg.gradcheck(fn, [x, v])
    assert mg.gradgradcheck(fn, [x, v])  # the recorded write is differentiable again


@pytest.mark.parametrize("case", sorted(WRITES))
def test_writes_through_views_give_pytorchs_values_and_gradients(lib, case):
    x = lib.tensor(X0, dtype=lib.float64, requires_grad=True)
    v = lib.tensor(V0, dtype=lib.float64, requires_grad=True)
    y = WRITES[case](lib, x, v)
    upstream = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=lib.float64)
    (y * upstream).sum().backward()
    want = HAND[case]
    np.testing.assert_allclose(values(y), want[0], rtol=1e-12)
    np.testing.assert_allclose(values(x.grad), want[1], rtol=1e-12)
    np.testing.assert_allclose(values(v.grad), want[2], rtol=1e-12)


def _hand():
    """The expected (y, dL/dx, dL/dv) of each case for L = sum(y * U), worked out element by element."""
    x, v = np.array(X0), np.array(V0)
    u = np.arange(1.0, 7.0).reshape(2, 3)
    flat_y = x.copy()
    flat_y[0, 1] = 3 * v[0]
    flat_gx = u.copy()
    flat_gx[0, 1] = 0.0  # overwritten: no gradient to x there
    column_y = 2 * x
    column_y[:, 0] += v[:2]
    masked_y = x * v[0]
    masked_y[0, 0] = masked_y[1, 2] = 0.0  # y.t()[0, 0] is y[0, 0], y.t()[2, 1] is y[1, 2]
    masked_gx = u * v[0]
    masked_gx[0, 0] = masked_gx[1, 2] = 0.0
    masked_gv0 = (u * x).sum() - u[0, 0] * x[0, 0] - u[1, 2] * x[1, 2]
    e = 3 * x
    chained_y = e.copy()
    chained_y[1, 0] *= v[1]  # flat index 3
    chained_y[1, 2] *= v[2]  # flat index 5
    chained_gx = 3 * u
    chained_gx[1, 0] *= v[1]
    chained_gx[1, 2] *= v[2]
    return {
        "flat": (flat_y, flat_gx, [3 * u[0, 1], 0.0, 0.0]),
        "column": (column_y, 2 * u, [u[0, 0], u[1, 0], 0.0]),
        "masked_fill_ on t()": (masked_y, masked_gx, [masked_gv0, 0.0, 0.0]),
        "chained": (chained_y, chained_gx, [0.0, u[1, 0] * e[1, 0], u[1, 2] * e[1, 2]]),
    }


HAND = _hand()


def test_a_buffer_filled_through_a_view_takes_the_history(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    buf = lib.zeros(2, 3)  # outside the graph until the write
    buf.view(-1)[3:] = x * x
    assert buf.requires_grad and not buf.is_leaf
    (buf * lib.tensor([[1.0, 1.0, 1.0], [1.0, 10.0, 100.0]])).sum().backward()
    assert values(x.grad) == [2.0, 40.0, 600.0]


# ---- views taken before a write: their values and their history follow the base ----------------------
def test_a_view_taken_before_a_write_into_another_view_follows_the_new_history(lib):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 2
    row, flat = y[0], y.view(-1)
    old_node = flat.grad_fn
    y[1] += 5.0  # through another view
    row.mul_(3.0)  # and through this one
    assert values(flat) == [6.0, 12.0, 11.0, 13.0]
    assert flat.grad_fn is not old_node and type(y.grad_fn).__name__ == "CopySlices"
    flat.sum().backward()  # PyTorch: AsStridedBackward0 over the base's CopySlices
    assert values(x.grad) == [[6.0, 6.0], [2.0, 2.0]]


def test_a_node_recorded_before_the_write_keeps_the_old_history(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1.0
    v = y[:2]
    s = (v * 5.0).sum()  # recorded before the write, from the old values (Mul saves nothing of v here)
    y.add_(1.0)
    t = v.sum()  # recorded after: through the new history
    (s + t).backward()
    assert values(x.grad) == [6.0, 6.0, 0.0]


def test_backward_through_a_saved_view_of_a_changed_base_raises_pytorchs_error(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    v = y[0:2]
    w = v * v  # saves v
    y.add_(1.0)
    with pytest.raises(RuntimeError, match=r"one of the variables needed for gradient computation has been modified "
                                           r"by an inplace operation: \[torch.FloatTensor \[2\]\], which is output 0 "
                                           r"of \w+, is at version 1; expected version 0 instead"):
        w.sum().backward()
    assert x.grad is None


# ---- what PyTorch refuses, minigrad refuses ------------------------------------------------------
def test_a_view_made_under_no_grad_cannot_change_in_place_in_the_graph(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    with lib.no_grad():
        v = y[0:2]
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being modified inplace with "
                                           "grad mode enabled"):
        v.add_(1.0)
    with lib.no_grad():
        v.add_(1.0)  # inside no_grad both: allowed
    assert values(y) == [3.0, 5.0, 6.0]


@pytest.mark.parametrize("pieces", ["split", "chunk", "unbind"])
def test_the_views_of_split_chunk_and_unbind_cannot_change_in_place_in_the_graph(lib, pieces):
    x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    make = {"split": lambda t: t.split(2), "chunk": lambda t: t.chunk(2), "unbind": lambda t: t.unbind(0)}[pieces]
    first = make(x * 2)[0]
    with pytest.raises(RuntimeError, match="is a view and is being modified inplace. This view is the output of a "
                                           "function that returns multiple views"):
        first.mul_(2.0)
    plain = lib.zeros(4)
    make(plain)[0].add_(1.0)  # outside the graph: allowed
    assert values(plain)[0] == 1.0
    y = x * 2
    first = make(y)[0]
    y.mul_(2.0)  # its base changed: its history cannot be derived again
    with pytest.raises(RuntimeError, match="its base or another view of its base has been modified inplace"):
        first.sum()


def test_a_view_of_a_leaf_still_cannot_change_outside_no_grad_and_an_optimizer_write_records_nothing(lib):
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place"):
        w[0:2].add_(1.0)
    with lib.no_grad():
        w[0:2].sub_(0.5)  # an optimizer's kind of write: no history, w stays a leaf
        w.view(3, 1)[2] *= 2.0
    assert values(w) == [0.5, 1.5, 6.0] and w.is_leaf and w.grad_fn is None


# ---- point 2: every saved mask, index and operand is watched --------------------------------------
def _plant(lib, case):
    """(the loss, a function that changes in place what the loss's backward needs)."""
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    mask = lib.tensor([True, False, True])
    index = lib.tensor([0, 2])
    if case == "where":
        return lib.where(mask, x, 0.0).sum(), lambda: mask.__setitem__(0, False)
    if case == "masked_fill":
        return x.masked_fill(mask, 0.0).sum(), lambda: mask.__setitem__(0, False)
    if case == "masked_fill_":
        y = x * 1.0
        y.masked_fill_(mask, 0.0)
        return y.sum(), lambda: mask.__setitem__(0, False)
    if case == "gather":
        return x.gather(0, index).sum(), lambda: index.__setitem__(0, 1)
    if case == "index_select":
        return x.index_select(0, index).sum(), lambda: index.__setitem__(0, 1)
    if case == "getitem with an index tensor":
        return x[index].sum(), lambda: index.__setitem__(0, 1)
    if case == "getitem with a mask":
        return x[mask].sum(), lambda: mask.__setitem__(0, False)
    if case == "setitem with a mask":
        y = x * 1.0
        y[mask] = 0.0
        return y.sum(), lambda: mask.__setitem__(0, False)
    if case == "scatter":
        src = lib.tensor([5.0, 6.0], requires_grad=True)
        return (x * 1.0).scatter(0, index, src).sum(), lambda: index.__setitem__(0, 1)
    if case == "embedding":
        weight = lib.tensor([[1.0], [2.0], [3.0]], requires_grad=True)
        return lib.nn.functional.embedding(index, weight).sum(), lambda: index.__setitem__(0, 1)
    if case == "mul saves its other operand":
        y = x * 1.0
        z = x * 2.0
        return (y * z).sum(), lambda: y.add_(1.0)
    if case == "matmul saves its other operand":
        c = lib.tensor([1.0, 2.0, 3.0])
        return x @ c, lambda: c.__setitem__(0, 4.0)
    if case == "exp saves its output":
        y = x.exp()
        return y.sum(), lambda: y.add_(1.0)
    raise KeyError(case)


PLANTED = ["where", "masked_fill", "masked_fill_", "gather", "index_select", "getitem with an index tensor",
           "getitem with a mask", "setitem with a mask", "scatter", "embedding", "mul saves its other operand",
           "matmul saves its other operand", "exp saves its output"]


@pytest.mark.parametrize("case", PLANTED)
def test_a_changed_mask_index_or_operand_raises_pytorchs_error_not_a_wrong_gradient(lib, case):
    loss, change = _plant(lib, case)
    change()
    with pytest.raises(RuntimeError, match=r"one of the variables needed for gradient computation has been modified "
                                           r"by an inplace operation: \[(torch\.\w+|CPUBoolType) \[\d+\]\]"
                                           r"(, which is output 0 of \w+,)? is at version 1; expected version 0 instead"):
        loss.backward()


@pytest.mark.parametrize("case", PLANTED)
def test_unchanged_the_planted_cases_backpropagate(lib, case):
    loss, _ = _plant(lib, case)
    loss.backward()  # the same graphs, nothing changed: no error


@pytest.mark.parametrize("form", ["y * 3", "3 * y", "y / 3", "y @ constant"])
def test_an_operand_the_formula_does_not_need_may_change_before_backward(lib, form):
    # d(y * 3)/dy = 3 and d(y / 3)/dy = 1/3 do not read y, so y is not saved (as PyTorch)
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1.0
    c = lib.tensor([[1.0], [2.0], [4.0]])
    out = {"y * 3": lambda: y * 3, "3 * y": lambda: 3 * y, "y / 3": lambda: y / 4,
           "y @ constant": lambda: y @ c}[form]()
    y.add_(1.0)
    out.sum().backward()
    want = {"y * 3": [3.0] * 3, "3 * y": [3.0] * 3, "y / 3": [0.25] * 3, "y @ constant": [1.0, 2.0, 4.0]}[form]
    assert values(x.grad) == want


# ---- the in-place view ops: t_, transpose_, unsqueeze_, squeeze_ ---------------------------------
def test_in_place_view_ops_change_the_shape_and_continue_the_history(lib):
    x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    u = lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    y = x * 2
    before = (y * 1.0).sum()  # recorded before: through y's old shape
    assert y.t_() is y and tuple(y.shape) == (3, 2) and y._version == 1
    ((y * u).sum() + before).backward()
    assert values(x.grad) == [[4.0, 8.0, 12.0], [6.0, 10.0, 14.0]]  # 2 * u^T + 2
    x.grad = None
    y = x * 2
    y.unsqueeze_(0)
    assert tuple(y.shape) == (1, 2, 3)
    y.squeeze_(0)
    y.transpose_(0, 1)
    (y * u).sum().backward()
    assert values(x.grad) == [[2.0, 6.0, 10.0], [4.0, 8.0, 12.0]]


def test_an_in_place_view_op_on_a_view_keeps_it_a_view_of_the_same_base(lib):
    x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = x * 2
    row = y[0:1]
    row.t_()
    assert tuple(row.shape) == (3, 1) and row._base is y
    row.mul_(10.0)  # written through the transposed view into y
    assert values(y) == [[20.0, 40.0, 60.0], [8.0, 10.0, 12.0]]
    y.sum().backward()
    assert values(x.grad) == [[20.0, 20.0, 20.0], [2.0, 2.0, 2.0]]


def test_in_place_view_ops_on_a_leaf_follow_the_leaf_rules(lib):
    w = lib.randn(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        w.t_()
    with lib.no_grad():
        w.t_()
    assert tuple(w.shape) == (3, 2) and w.is_leaf


def test_a_view_whose_base_was_reshaped_in_place_raises_rather_than_guess():
    # PyTorch re-reads such a view by its strides (AsStridedBackward0); minigrad replays the view ops,
    # which no longer read the same elements: it says so instead of sending the gradient elsewhere
    x = mg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = x * 2
    v = y.view(3, 2)
    y.t_()
    with pytest.raises(RuntimeError, match=r"a view of shape \(3, 2\) can no longer be read from its base .*t_"):
        v.sum()


# ---- random programs of views and in-place writes, run by both libraries -----------------------------
_VIEWS = [
    lambda t: t[1:] if t.ndim and t.shape[0] > 1 else None,
    lambda t: t[:, 1] if t.ndim >= 2 and t.shape[1] > 1 else None,
    lambda t: t.transpose(0, 1) if t.ndim >= 2 else None,
    lambda t: t.view(-1) if t.is_contiguous() else None,
    lambda t: t.unsqueeze(0),
    lambda t: t[::2] if t.ndim else None,
    lambda t: t.permute(*reversed(range(t.ndim))) if t.ndim >= 2 else None,
]
_WRITES = [
    lambda v, w: v.add_(w.sum() * 0.5),
    lambda v, w: v.mul_(w.mean() + 2.0),
    lambda v, w: v.fill_(3.0),
    lambda v, w: v.__setitem__(0, w.sum()) if v.ndim else v.fill_(w.sum()),
    lambda v, w: v.__iadd__(1.5),
    lambda v, w: v.masked_fill_(v > 0.3, -1.0),
    lambda v, w: v.copy_(v * w.mean()),
    lambda v, w: v.mul_(w[0]),
]


def _random_program(lib, seed, x, w):
    """Views of views of y, written in place, some used before the write (saved or not), some after."""
    rng = np.random.default_rng(seed)
    y = x * 1.5 + 0.25
    kept, earlier = [], []
    for _ in range(rng.integers(1, 5)):
        v = y
        for _ in range(rng.integers(1, 4)):
            view = _VIEWS[rng.integers(len(_VIEWS))](v)
            v = v if view is None else view
        if v is y:
            v = y[0:1]
        if rng.random() < 0.5:
            kept.append(v)  # read after the write: through the base's new history
        if rng.random() < 0.3:
            earlier.append((v * 2.0).sum())  # recorded before the write, v not saved
        if rng.random() < 0.15:
            earlier.append((v * v).sum())  # v saved: backward must raise after the write
        _WRITES[rng.integers(len(_WRITES))](v, w)
    total = (y * lib.tensor(np.arange(1.0, 13.0).reshape(3, 4))).sum()
    for t in kept:
        total = total + (t * 0.5).sum()
    return sum(earlier, total)


def _outcome(lib, seed):
    data = np.random.default_rng(1000 + seed)
    x = lib.tensor(data.standard_normal((3, 4)), dtype=lib.float64, requires_grad=True)
    w = lib.tensor(data.standard_normal(3), dtype=lib.float64, requires_grad=True)
    try:
        loss = _random_program(lib, seed, x, w)
        loss.backward()
    except RuntimeError as error:
        return "raises", "modified by an inplace operation" in str(error)
    grad_w = np.zeros(3) if w.grad is None else w.grad.detach().numpy()
    return "runs", [loss.item(), *x.grad.detach().numpy().ravel(), *grad_w]


@needs_torch
def test_random_programs_of_views_and_in_place_writes_behave_as_in_pytorch():
    outcomes = {"raises": 0, "runs": 0}
    for seed in range(80):
        got, want = _outcome(mg, seed), _outcome(torch, seed)
        assert got[0] == want[0], (seed, got, want)
        outcomes[got[0]] += 1
        if got[0] == "runs":
            np.testing.assert_allclose(got[1], want[1], rtol=1e-10, atol=1e-12, err_msg=f"seed {seed}")
        else:
            assert got[1] and want[1], (seed, "both raise PyTorch's modified-by-an-inplace-operation error")
    assert outcomes["raises"] > 10 and outcomes["runs"] > 30  # both kinds are exercised


# ---- an RNN loop that fills an output buffer through views, reading what it wrote -------------------
def _rnn_outputs(lib, W, x):
    out = lib.zeros(*x.shape, dtype=x.dtype)
    h = lib.zeros(x.shape[0], x.shape[2], dtype=x.dtype)
    for t in range(x.shape[1]):
        h = lib.tanh(x[:, t] + h @ W)
        out[:, t] = h
        if t > 0:
            out[:, t] += 0.5 * out[:, t - 1]  # a write through a view, from another view of the same buffer
    return out


def _rnn_case(lib, dtype):
    rng = np.random.default_rng(0)
    W = lib.tensor(rng.standard_normal((4, 4)) * 0.5, dtype=dtype, requires_grad=True)
    return W, lib.tensor(rng.standard_normal((2, 5, 4)), dtype=dtype)


def test_an_rnn_loop_writing_its_outputs_in_place_passes_gradcheck():
    W, x = _rnn_case(mg, mg.float64)
    assert mg.gradcheck(lambda W: _rnn_outputs(mg, W, x), [W])


@needs_torch
def test_an_rnn_loop_writing_its_outputs_in_place_matches_pytorch():
    results = []
    for lib in (mg, torch):
        W, x = _rnn_case(lib, lib.float32)
        out = _rnn_outputs(lib, W, x)
        (out * out).sum().backward()
        results.append((values(out), values(W.grad)))
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# ---- a fused kernel watches what its own backward reads; a recorded backward needs every input ------
def test_softmax_reads_only_its_output_so_its_input_may_change(lib):
    x = lib.tensor([[1.0, 2.0, 3.0]], dtype=lib.float64, requires_grad=True)
    y = x * 1.0
    p = lib.nn.functional.softmax(y, dim=-1)
    y.add_(1.0)  # PyTorch's softmax saves its output only: no error
    (p * lib.tensor([[1.0, 0.0, 0.0]], dtype=lib.float64)).sum().backward()
    s = np.exp([1.0, 2.0, 3.0]) / np.exp([1.0, 2.0, 3.0]).sum()
    np.testing.assert_allclose(values(x.grad)[0], s[0] * (np.eye(3)[0] - s), rtol=1e-12)


def test_gelu_reads_its_input_and_a_recorded_softmax_replays_its_input():
    x = mg.tensor([0.5, -1.0, 2.0], dtype=mg.float64, requires_grad=True)
    y = x * 1.0
    g = mg.nn.functional.gelu(y)
    y.add_(1.0)
    with pytest.raises(RuntimeError, match="GELU.*is at version 1; expected version 0 instead"):
        g.sum().backward()
    y = x * 1.0
    p = mg.nn.functional.softmax(y, dim=-1)
    y.add_(1.0)
    # create_graph=True differentiates the composition again, on the input that has changed since
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
        mg.autograd.grad(p[0], x, create_graph=True)
