"""The generic tests over the table of sample inputs (tests/samples/: how to add an entry is in its docstring).

For every sample of every entry:
- test_values: minigrad's result (values, dtype, shape) against PyTorch's on the same inputs where PyTorch is
  installed, and against the entry's reference (NumPy, an identity, a closed form) where it is not;
- test_forms: the entry's other names (method, function, alias) give the primary form's result; an in-place
  form returns the very tensor it was called on, changed to that result; out= (where PyTorch takes it)
  writes into the tensor given and returns it, or is refused with minigrad's message;
- test_gradcheck / test_gradgradcheck: gradients in float64 against central finite differences;
- a sample marked refused= must raise minigrad's clear error; error= must raise in both libraries.
test_every_present_name_has_an_entry fails when a present name of docs/coverage.json has no entry.
"""
import re
import warnings

import numpy as np
import pytest

import minigrad as mg
from conftest import torch
from samples import CHECKED_NAMESPACES, DT, Maker, T, all_entries, present_names

ENTRIES = all_entries()
OPS = [e for e in ENTRIES if e.kind != "check"]
CHECKS = [e for e in ENTRIES if e.kind == "check"]
SAMPLES = [(e, k, s) for e in OPS for k, s in enumerate(e.samples())]
NUMPY_ALIASES = {"axis": "dim", "keepdims": "keepdim"}
ERRORS = (RuntimeError, ValueError, TypeError, IndexError, NotImplementedError)


def _id(item):
    entry, k, sample = item
    return f"{entry.id}-{k}"


# ---- building a sample's call for one library --------------------------------------------------------
def _leaves(L, sample, float64=False, grad=False):
    """One leaf tensor per T of the sample (float64 if asked; requiring grad if asked and floating)."""
    const = sample.get("const", ())
    leaves = []
    for k, t in enumerate(sample.tensors()):
        array = t.leaf_array()
        if float64 and t.floating:
            array = array.astype(np.float64)
        leaf = L.tensor(array) if L is not np else array
        if grad and t.floating and k not in const:
            leaf.requires_grad_(True)
        leaves.append(leaf)
    return leaves


def _assemble(L, sample, leaves):
    """The sample's (args, kwargs) with each T replaced by its view of the next leaf."""
    queue = list(leaves)

    def conv(v):
        if isinstance(v, T):
            return v.view(queue.pop(0))
        if isinstance(v, DT):
            return getattr(L, v.name) if L is not np else _np_dtype(v.name)
        if isinstance(v, (list, tuple)):
            return type(v)(conv(x) for x in v)
        return v

    args = [conv(a) for a in sample.args]
    kwargs = {k: conv(v) for k, v in sample.kwargs.items()}
    return args, kwargs


def _np_dtype(name):
    try:
        return np.dtype(name)
    except TypeError:  # not a dtype (torch.preserve_format, ...): the reference gets its name
        return name


def _resolve(L, name):
    parts = name.split(".")
    obj = L
    for part in parts[1:] if parts[0] == "torch" else parts:
        obj = getattr(obj, part)
    return obj


def _call(L, entry, name, args, kwargs):
    if entry.kind == "fn":
        return entry.fn(L, *args, **kwargs)
    namespace, _, attr = name.rpartition(".")
    if namespace == "Tensor":
        return getattr(args[0], attr)(*args[1:], **kwargs)
    return _resolve(L, name)(*args, **kwargs)


def _primary(entry):
    """The name whose call the values are taken from: the first that is not an in-place form."""
    return next((n for n in entry.names if not n.endswith("_")), entry.names[0])


def _run(L, entry, sample, name=None, float64=False):
    leaves = _leaves(L, sample, float64=float64)
    args, kwargs = _assemble(L, sample, leaves)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return _call(L, entry, name or _primary(entry), args, kwargs)


# ---- comparing results -------------------------------------------------------------------------------
def _flat(result):
    """A result as a flat list of NumPy arrays and plain values (tuples, namedtuples and lists unpacked)."""
    if isinstance(result, (tuple, list)) and all(type(x) is int for x in result):
        return [tuple(result)]  # a shape (PyTorch's torch.Size)
    if isinstance(result, (tuple, list)) and not _is_size(result):
        return [x for r in result for x in _flat(r)]
    if hasattr(result, "detach") and hasattr(result, "numpy"):
        return [result.detach().numpy()]
    if _is_size(result):
        return [tuple(int(s) for s in result)]
    if isinstance(result, np.ndarray):
        return [result]
    if isinstance(result, (np.generic,)):
        return [result.item()]
    if isinstance(result, str):
        return [result.replace("torch.", "").replace("minigrad.", "")]  # a dtype's name, as either library writes it
    if result is None or isinstance(result, (bool, int, float, complex)):
        return [result]
    return [str(result).replace("torch.", "")]  # dtypes, devices, ...


def _is_size(x):
    return type(x).__name__ == "Size"


def _tolerances(entry, sample, array):
    floating = np.asarray(array).dtype.kind == "f"
    single = np.asarray(array).dtype in (np.float32, np.float16)
    rtol = sample.get("rtol", entry.rtol if entry.rtol is not None else (1e-5 if single else 1e-9))
    atol = sample.get("atol", entry.atol if entry.atol is not None else (1e-6 if single else 1e-12))
    return (rtol, atol) if floating else (0, 0)


def _same(entry, sample, mine, theirs, what, check_dtype=True):
    a, b = _flat(mine), _flat(theirs)
    assert len(a) == len(b), f"{what}: {len(a)} outputs vs {len(b)}"
    for k, (x, y) in enumerate(zip(a, b)):
        where = f"{what}, output {k}"
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            x, y = np.asarray(x), np.asarray(y)
            assert x.shape == y.shape, f"{where}: shape {x.shape} vs {y.shape}"
            if check_dtype:
                assert x.dtype == y.dtype, f"{where}: dtype {x.dtype} vs {y.dtype}"
            rtol, atol = _tolerances(entry, sample, x)
            if x.dtype.kind in "fc" or y.dtype.kind in "fc":
                np.testing.assert_allclose(x.astype(np.float64), y.astype(np.float64), rtol=rtol, atol=atol,
                                           equal_nan=True, err_msg=where)
            else:
                np.testing.assert_array_equal(x, y, err_msg=where)
        elif isinstance(x, float) or isinstance(y, float):
            assert (np.isnan(x) and np.isnan(y)) or np.isclose(x, y, rtol=1e-9, atol=1e-12), f"{where}: {x} vs {y}"
        else:
            assert x == y, f"{where}: {x!r} vs {y!r}"


# ---- the tests ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("item", SAMPLES, ids=_id)
def test_values(item):
    entry, _, sample = item
    if sample.get("refused"):
        with pytest.raises(ERRORS, match=sample.get("refused")):
            _run(mg, entry, sample)
        return
    if sample.get("error"):
        with pytest.raises(ERRORS):
            _run(mg, entry, sample)
        if torch is not None:
            with pytest.raises(ERRORS):
                _run(torch, entry, sample)
        return
    mine = _run(mg, entry, sample)
    if torch is not None:
        _same(entry, sample, mine, _run(torch, entry, sample), f"{entry.id} vs PyTorch")
    elif entry.ref is not None and not sample.get("noref"):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            args, kwargs = _assemble(np, sample, _leaves(np, sample))
            # references take PyTorch's names: its NumPy-style aliases (axis=, keepdims=) map onto them
            kwargs = {NUMPY_ALIASES.get(k, k): v for k, v in kwargs.items()}
            expected = entry.ref(*args, **kwargs)
        _same(entry, sample, mine, expected, f"{entry.id} vs its reference", check_dtype=False)
    else:
        pytest.skip("PyTorch is not installed and the entry states no reference for this sample")


def _is_tensor(x):
    return isinstance(x, mg.Tensor)


@pytest.mark.parametrize("item", [i for i in SAMPLES if (len(i[0].names) > 1 or i[0].out)
                                  and not i[2].get("refused") and not i[2].get("error")], ids=_id)
def test_forms(item):
    """Every other name of the entry (method, function, alias, in-place) gives the primary form's result.
    (A refused or bad call is left to test_values, which checks its error.)"""
    entry, _, sample = item
    primary = _primary(entry)
    expected = _run(mg, entry, sample)
    for name in entry.names:
        if name == primary or entry.kind == "fn":
            continue
        if not name.endswith("_"):
            _same(entry, sample, _run(mg, entry, sample, name), expected, f"{name} vs {primary}")
            continue
        if not (entry.inplace_ok and sample.get("inplace", True) and _is_tensor(expected)
                and sample.args and isinstance(sample.args[0], T)):
            continue
        args, kwargs = _assemble(mg, sample, _leaves(mg, sample))
        if tuple(args[0].shape) != tuple(expected.shape) or args[0].dtype != expected.dtype:
            continue  # PyTorch refuses an in-place op that would change the shape or dtype
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = _call(mg, entry, name, args, kwargs)
        assert result is args[0], f"{name} must return the tensor it changed"
        _same(entry, sample, args[0], expected, f"{name} (in place) vs {primary}")
    if entry.out and _is_tensor(expected):
        _check_out(entry, sample, expected)


def _check_out(entry, sample, expected):
    name = next(n for n in entry.names if n.startswith("torch.") and not n.endswith("_"))
    args, kwargs = _assemble(mg, sample, _leaves(mg, sample))
    buffer = mg.empty(tuple(expected.shape), dtype=expected.dtype)
    try:
        with np.errstate(all="ignore"):
            result = _resolve(mg, name)(*args, out=buffer, **kwargs)
    except ERRORS as error:  # refused: it must say so in minigrad's words
        assert re.search(r"out=", str(error)), f"{name}(out=...) refused without minigrad's message: {error}"
        return
    assert result is buffer, f"{name}(out=) must return the tensor given"
    _same(entry, sample, buffer, expected, f"{name}(out=)")


def _differentiable(entry, sample):
    return (entry.grad and sample.get("grad", True) and not sample.get("refused") and not sample.get("error")
            and any(t.floating for k, t in enumerate(sample.tensors()) if k not in sample.get("const", ())))


def _graded(entry, sample):
    """fn(*leaves) for gradcheck: the call's floating outputs that require grad."""
    def fn(*leaves):
        args, kwargs = _assemble(mg, sample, leaves)
        result = _call(mg, entry, _primary(entry), args, kwargs)
        outs = [r for r in (result if isinstance(result, (tuple, list)) else [result])
                if _is_tensor(r) and r.requires_grad]
        return outs[0] if len(outs) == 1 else tuple(outs)
    return fn


GRAD_SAMPLES = [i for i in SAMPLES if _differentiable(i[0], i[2])]


def _gradgrad_samples():
    chosen, seen = [], set()
    for entry, k, sample in GRAD_SAMPLES:
        if entry.gradgrad and (sample.get("gradgrad") or entry.id not in seen):
            chosen.append((entry, k, sample))
            seen.add(entry.id)
    return chosen


@pytest.mark.parametrize("item", GRAD_SAMPLES, ids=_id)
def test_gradcheck(item):
    entry, _, sample = item
    leaves = _leaves(mg, sample, float64=True, grad=True)
    assert mg.gradcheck(_graded(entry, sample), leaves)


@pytest.mark.parametrize("item", GRAD_SAMPLES, ids=_id)
def test_forward_mode(item):
    """Forward mode on every differentiable sample: J u from the tangent rules against central differences,
    and <w, J u> against reverse mode's <J^T w, u> (gradcheck's check_forward_ad)."""
    entry, _, sample = item
    leaves = _leaves(mg, sample, float64=True, grad=True)
    if sample.get("forward"):  # a tangent minigrad does not define (full U of a non-square svd, ...): a clear error
        with pytest.raises(NotImplementedError, match=sample.get("forward")):
            mg.gradcheck(_graded(entry, sample), leaves, check_forward_ad=True, check_backward_ad=False)
        return
    assert mg.gradcheck(_graded(entry, sample), leaves, check_forward_ad=True, check_backward_ad=False)


@pytest.mark.parametrize("item", _gradgrad_samples(), ids=_id)
def test_gradgradcheck(item):
    entry, _, sample = item
    leaves = _leaves(mg, sample, float64=True, grad=True)
    assert mg.gradgradcheck(_graded(entry, sample), leaves)


@pytest.mark.parametrize("entry", CHECKS, ids=repr)
def test_checks(entry):
    mine = entry.check(mg)
    if torch is not None:
        theirs = entry.check(torch)
        if mine is not None or theirs is not None:
            assert _flat(mine) == _flat(theirs), f"{entry.id}: {mine} vs {theirs}"


# ---- the table and the coverage page cannot drift apart ---------------------------------------------
def test_every_present_name_has_an_entry():
    covered = {name for entry in ENTRIES for name in entry.names}
    for namespace, names in present_names(CHECKED_NAMESPACES).items():
        missing = sorted(n for n in names if f"{namespace}.{n}" not in covered)
        assert not missing, f"present in {namespace} without an entry in tests/samples/: {missing}"


def test_every_entry_names_something_minigrad_has():
    tensor = mg.zeros(2)
    for entry in ENTRIES:
        assert entry.names, f"an entry with no names in {entry.family}"
        for name in entry.names:
            if name.startswith("Tensor."):
                assert hasattr(mg.Tensor, name[7:]) or hasattr(tensor, name[7:]), name
            else:
                _resolve(mg, name)


def test_every_op_entry_has_samples():
    empty = [e.id for e in OPS if not e.gen(Maker())]
    assert not empty, f"entries without samples: {empty}"
