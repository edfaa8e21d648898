"""One table of sample inputs for every public name (issue 39; PyTorch's OpInfo is the model).

Each family module (pointwise.py, reductions.py, ...) defines a list `ENTRIES`; `ENTRIES` below joins them.
tests/test_samples.py runs every sample of every entry: values, dtypes and shapes against PyTorch where it is
installed and against the entry's stated reference where it is not; gradcheck in float64 for every
differentiable sample, gradgradcheck where the entry is twice differentiable; the function, method and
in-place forms against each other; out= where PyTorch takes it. tests/test_samples.py also fails when a
present name of docs/coverage.json (namespaces in CHECKED_NAMESPACES) has no entry.

Three kinds of entry
--------------------
Op("exp", gen, ref=np.exp)
    Calls by name. `names` defaults to every present name among torch.exp, torch.exp_, Tensor.exp and
    Tensor.exp_ (and the same for each of `aliases`); pass names=[...] to say them yourself (any namespace:
    "nn.functional.relu" is called as L.nn.functional.relu). A name ending in "_" is an in-place form: it
    is called on a copy of the first input and must return that same tensor, changed to the function's
    value. "Tensor.X" is called as args[0].X(*args[1:]), anything else as L.<name>(*args).
Fn(["torch.where", "Tensor.where"], lambda L, c, a, b: L.where(c > 0, a, b), gen, ref=...)
    Calls one expression written for `L` bound to either library (for names whose forms differ, operators,
    or calls that need glue). The sample's tensors are passed positionally, its kwargs as keywords.
Check(["torch.float32", ...], check)
    A non-op name (dtype, class, utility): `check(L)` asserts what the name must do; it runs on minigrad,
    and on PyTorch too where installed (so the check itself is known to be right). It may return a value,
    which must be equal on both libraries.

Samples
-------
A generator is `gen(r)`, `r` a Maker (seeded: the same samples on every run), returning a list of
S(*args, **kwargs). Tensor arguments are T objects made by the Maker: r.real((2, 3)), r.pos(...), r.unit(...),
r.prob(...), r.above_one(...), r.off(...),
r.ints(...), r.bools(...), r.edges(), r.ties(...), r.distinct(...), with dtype="float64" / "int64" / ...,
and layout="T" (a transposed view) or "step" (every other column of a wider tensor) for non-contiguous
inputs. Any other argument is passed as is, but dtypes are written DT("float64") (the library's own dtype
object is passed), and lists/tuples of T become lists/tuples of tensors. S's options:
    grad=False        no gradcheck for this sample (NaN/inf edges, integer outputs, kinks)
    gradgrad=True     run gradgradcheck on this sample (by default only the entry's first differentiable one)
    const=(1,)        positions of float tensors that must not require grad (targets, masks)
    refused="regex"   minigrad refuses this call on purpose: it must raise with a message matching regex
    forward="regex"   forward mode is refused for this sample: NotImplementedError matching regex (a tangent not defined)
    error=True        bad input: both libraries must raise (RuntimeError/ValueError/TypeError/IndexError)
    noref=True        the entry's reference does not cover this sample (it is compared with PyTorch only)
    rtol=, atol=      tolerances for this sample
    inplace=False     do not try the entry's in-place forms on this sample
Entry options: grad (differentiable, default True), gradgrad (twice, default = grad), ref (a function of
the same arguments with NumPy arrays in place of tensors and NumPy dtypes in place of DT; returns an array,
a number or a tuple of them), inplace_ok (default True: in-place forms tried where the result keeps the
first input's shape and dtype), out (PyTorch takes out=: the torch form is called with one), rtol/atol.

How to add a family
-------------------
1. Make tests/samples/<family>.py with `from . import Op, Fn, Check, S, DT` and a list ENTRIES. For
   nn.functional: Op("relu", gen, names=["nn.functional.relu", "nn.functional.relu_"], ref=...); for an nn
   module: Fn("nn.Linear", lambda L, x, **options: L.nn.Linear(3, 2, **options)(x), gen) after seeding, or a
   Check(["nn.Linear"], check) that builds both libraries' modules with the same weights (load_state_dict) and
   compares outputs and gradients; for linalg: Op("det", gen, names=["linalg.det"], ref=np.linalg.det).
   An Fn/Check's names are only what it says; an Op without names= covers torch.X, torch.X_, Tensor.X, Tensor.X_.
2. Add its module name to FAMILIES below.
3. To make the coverage test check a new namespace, add it to CHECKED_NAMESPACES below (one word).
4. Run `python -m pytest -q tests/test_samples.py` and `python -m pytest -q -p tools.no_torch
   tests/test_samples.py`, then `python tools/coverage.py` (docs/coverage.md shows each name's sample count).
   tests/test_samples.py::test_every_present_name_has_an_entry lists the names still without an entry.
A helper function a generator or reference uses must be defined before ENTRIES, or called through a lambda.
"""
import importlib
import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent.parent

# The families, one module each.
FAMILIES = ("pointwise", "binary", "reductions", "shape_ops", "indexing", "matmul", "creation", "torch_nn_ops",
            "tensor_attrs", "misc", "linalg", "nn_functional", "convolution", "pooling", "resampling",
            "nn_modules", "vision_modules")

# Namespaces of docs/coverage.json whose every present name must have an entry (one line per namespace).
CHECKED_NAMESPACES = ("torch", "Tensor", "linalg", "nn.functional", "nn")

# Differences the table found and left, written down where they would be checked (tests/samples/misc.py):
# minigrad.dtype is its dtype module, not the class of its dtypes, which have no is_floating_point /
# is_signed; torch.Tensor(2, 3) (a shape) and torch.Tensor([[1, 2]]) (float32 from integers) differ from
# PyTorch's legacy constructor. Every sample of the table runs.


# ---- sample values ---------------------------------------------------------------------------------
class T:
    """A tensor argument: a NumPy array (the leaf's values), its dtype, and how the argument is made from
    the leaf: as is, "T" (transposed view of a leaf stored transposed) or "step" (every other element of
    the last dimension of a leaf twice as wide)."""

    def __init__(self, array, dtype, layout=None):
        self.array, self.dtype, self.layout = np.asarray(array), dtype, layout

    def leaf_array(self):
        a = self.array.astype(self.dtype)
        if self.layout == "T":
            return np.ascontiguousarray(np.swapaxes(a, -1, -2))
        if self.layout == "step":
            wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
            wide[..., ::2] = a
            return wide
        return a

    def view(self, leaf):
        """The argument from the leaf (tensor of either library, or a NumPy array)."""
        if self.layout == "T":
            return leaf.transpose(-1, -2) if hasattr(leaf, "transpose") and not isinstance(leaf, np.ndarray) \
                else np.swapaxes(leaf, -1, -2)
        if self.layout == "step":
            return leaf[..., ::2]
        return leaf

    @property
    def floating(self):
        return np.dtype(self.dtype).kind == "f"

    def __repr__(self):
        return f"T{self.array.shape}:{self.dtype}" + (f":{self.layout}" if self.layout else "")


class DT:
    """A dtype argument, by name: each library gets its own dtype object."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"DT({self.name})"


class S:
    """One call: positional and keyword arguments, and the options listed in the module docstring."""

    OPTIONS = ("grad", "gradgrad", "const", "refused", "error", "noref", "rtol", "atol", "inplace", "forward")

    def __init__(self, *args, **kwargs):
        self.options = {k: kwargs.pop(k) for k in self.OPTIONS if k in kwargs}
        self.args, self.kwargs = list(args), kwargs

    def get(self, key, default=None):
        return self.options.get(key, default)

    def tensors(self):
        return [a for a in _walk(self.args) + _walk(list(self.kwargs.values())) if isinstance(a, T)]

    def __repr__(self):
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        text = ", ".join(parts)
        return text if len(text) < 80 else text[:77] + "..."


def _walk(values):
    out = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out += _walk(v)
        else:
            out.append(v)
    return out


EDGE_VALUES = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-300, 1e300, np.inf, -np.inf, np.nan])


class Maker:
    """Draws the arrays of samples: a seeded generator, so every run sees the same samples."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)

    def _t(self, values, dtype, layout):
        return T(values, dtype, layout)

    def real(self, shape=(2, 3), dtype="float32", layout=None, scale=1.0):
        return self._t(self.rng.standard_normal(shape) * scale, dtype, layout)

    def pos(self, shape=(2, 3), dtype="float32", layout=None, low=0.3, high=2.0):
        return self._t(self.rng.uniform(low, high, shape), dtype, layout)

    def above_one(self, shape=(2, 3), dtype="float32", layout=None):
        return self._t(self.rng.uniform(1.2, 3.0, shape), dtype, layout)

    def prob(self, shape=(2, 3), dtype="float32", layout=None):
        return self._t(self.rng.uniform(0.05, 0.95, shape), dtype, layout)

    def unit(self, shape=(2, 3), dtype="float32", layout=None):
        return self._t(self.rng.uniform(-0.9, 0.9, shape), dtype, layout)

    def off(self, shape=(2, 3), dtype="float32", layout=None):
        """|x| in [0.2, 2.5], away from 0 and the integers' and halves' neighbourhoods (kinks)."""
        x = self.rng.choice([-1.0, 1.0], shape) * self.rng.uniform(0.2, 2.5, shape)
        frac = np.abs(x) * 2 - np.floor(np.abs(x) * 2)
        x = np.where((frac < 0.1) | (frac > 0.9), x + 0.2 * np.sign(x), x)
        return self._t(x, dtype, layout)

    def distinct(self, shape=(2, 3), dtype="float32", layout=None):
        """Values 0.3 apart in a random order: no ties."""
        n = int(np.prod(shape))
        return self._t(((self.rng.permutation(n) - n / 2 + 0.5) * 0.3).reshape(shape), dtype, layout)

    def ties(self, shape=(2, 3), dtype="float32", layout=None):
        return self._t(self.rng.integers(-2, 3, shape) * 0.5, dtype, layout)

    def ints(self, shape=(2, 3), dtype="int64", low=-5, high=6, layout=None):
        return self._t(self.rng.integers(low, high, shape), dtype, layout)

    def bools(self, shape=(2, 3), layout=None):
        return self._t(self.rng.random(shape) < 0.5, "bool", layout)

    def edges(self, dtype="float64", shape=(3, 4)):
        """0, -0, ±1, 0.5, -2.5, 3, tiny, huge, ±inf, NaN: no gradcheck (S(..., grad=False))."""
        return self._t(EDGE_VALUES.reshape(shape), dtype, None)

    def value(self, array, dtype="float32", layout=None):
        return self._t(np.asarray(array), dtype, layout)

    def empty(self, shape=(0, 3), dtype="float32"):
        return self._t(np.zeros(shape), dtype, None)


# ---- entries ---------------------------------------------------------------------------------------
def present_names(namespaces=None):
    """{namespace: set of present names} from docs/coverage.json."""
    table = json.loads((ROOT / "docs" / "coverage.json").read_text())["namespaces"]
    return {ns: {n for n, v in marks.items() if v == "present"} for ns, marks in table.items()
            if namespaces is None or ns in namespaces}


_PRESENT = None


def _present():
    global _PRESENT
    if _PRESENT is None:
        _PRESENT = present_names()
    return _PRESENT


def _is_present(full):
    ns, _, name = full.rpartition(".")
    return name in _present().get(ns, ())


class Entry:
    kind = "entry"

    def __init__(self, names, gen=None, *, ref=None, grad=True, gradgrad=None, inplace_ok=True, out=False,
                 rtol=None, atol=None, note=""):
        self.names = list(names)
        self.gen, self.ref = gen, ref
        self.grad = grad
        self.gradgrad = grad if gradgrad is None else gradgrad
        self.inplace_ok, self.out = inplace_ok, out
        self.rtol, self.atol, self.note = rtol, atol, note
        self._samples = None

    @property
    def id(self):
        return self.names[0] if self.names else "?"

    def samples(self):
        """The entry's samples (made once, from a generator seeded by the entry's name)."""
        if self._samples is None:
            self._samples = self.gen(Maker(_seed(self.id))) if self.gen else []
        return self._samples

    def __repr__(self):
        return self.id


def _seed(text):
    return sum(ord(c) * (k + 1) for k, c in enumerate(text)) % 100_000


class Op(Entry):
    """Called by name (see the module docstring)."""

    kind = "op"

    def __init__(self, op, gen, *, names=None, aliases=(), **options):
        self.op = op
        if names is None:
            names = [f"{ns}.{base}{suffix}" for base in (op, *aliases) for ns in ("torch", "Tensor")
                     for suffix in ("", "_")]
            names = [n for n in names if _is_present(n)]
        super().__init__(names, gen, **options)


class Fn(Entry):
    """One expression fn(L, *args, **kwargs) written for either library."""

    kind = "fn"

    def __init__(self, names, fn, gen, **options):
        self.fn = fn
        super().__init__([names] if isinstance(names, str) else names, gen, **options)


class Check(Entry):
    """A non-op name: check(L) asserts its behaviour (returning a value both libraries must agree on)."""

    kind = "check"

    def __init__(self, names, check, **options):
        self.check = check
        options.setdefault("grad", False)
        super().__init__([names] if isinstance(names, str) else names, None, **options)

    def samples(self):
        return []


def all_entries():
    entries = []
    for family in FAMILIES:
        module = importlib.import_module(f"{__name__}.{family}")
        for entry in module.ENTRIES:
            entry.family = family
            entries.append(entry)
    return entries


def sample_counts(entries=None):
    """{"namespace.name": number of samples that test it} (a Check counts as one)."""
    counts = {}
    for entry in entries if entries is not None else all_entries():
        n = 1 if entry.kind == "check" else len(entry.samples())
        for name in entry.names:
            counts[name] = counts.get(name, 0) + n
    return counts
