"""Making tensors: from data, filled, ranges, *_like and new_*, and the random ones.

Deterministic constructors are compared by value and dtype (dtype=, requires_grad=, size given as a tuple
or as separate ints). Random ones are checked by properties that hold in both libraries: shape, dtype, range,
the same draw after the same manual_seed, and for the in-place fills, that they return the tensor they
changed. References: NumPy.
"""
import numpy as np

from . import DT, Check, Fn, Op, S


def _filled(value):
    def ref(*size, dtype=None, requires_grad=False, fill_value=None, **by_name):
        if "size" in by_name:
            size = (by_name["size"],)
        shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
        return np.full(shape, value, dtype or np.float32)
    return ref


def _like(value):
    def ref(x, dtype=None, requires_grad=False):
        return np.full(x.shape, value, dtype or x.dtype)
    return ref


def _seeded(L, draw):
    """draw(L) twice after the same seed: equal; its shape, dtype and range are returned for both libraries."""
    L.manual_seed(3)
    first = draw(L)
    L.manual_seed(3)
    second = draw(L)
    a, b = first.numpy(), second.numpy()
    assert np.array_equal(a, b), "the same seed must give the same draw"
    return tuple(first.shape), str(first.dtype).replace("torch.", "")


def _random_check(draw, low=None, high=None):
    def check(L):
        shape, dtype = _seeded(L, draw)
        values = draw(L).numpy()
        if low is not None:
            assert values.min() >= low, values.min()
        if high is not None:
            assert values.max() <= high, values.max()
        return shape, dtype
    return check


def _fill_check(method, *args, low=None, high=None, integral=False, **kwargs):
    """x.<method>(...) returns x itself, changed (every value drawn, in range)."""
    def check(L):
        x = L.zeros(200, dtype=L.float64)
        L.manual_seed(1)
        out = getattr(x, method)(*args, **kwargs)
        assert out is x
        values = x.numpy()
        assert np.isfinite(values).all() and len(np.unique(values)) > 1
        if low is not None:
            assert values.min() >= low
        if high is not None:
            assert values.max() <= high
        if integral:
            assert np.array_equal(values, np.round(values))
        z = L.zeros(200, requires_grad=True) * 2  # PyTorch fills a non-leaf tensor too
        assert getattr(z, method)(*args, **kwargs) is z and len(np.unique(z.detach().numpy())) > 1
        return tuple(x.shape)
    return check


ENTRIES = [
    Op("tensor", lambda r: [S([[1.0, 2.0], [3.0, 4.0]]), S([1, 2, 3]), S([True, False]), S(2.5), S([]),
                            S([[1, 2]], dtype=DT("float64")), S([1.5, 2.0], requires_grad=True, grad=False),
                            S(np.arange(3.0)), S([[1, 2], [3]], error=True)],
       names=["torch.tensor"], ref=lambda data, dtype=None, requires_grad=False: np.asarray(
           data, dtype if dtype is not None else (np.float32 if np.asarray(data).dtype.kind == "f" or np.asarray(
               data).size == 0 else None)), grad=False),
    Op("as_tensor", lambda r: [S([1.0, 2.0]), S(np.arange(4)), S([1, 2], dtype=DT("float64")), S(r.real())],
       aliases=("asarray",), names=["torch.as_tensor", "torch.asarray"],
       ref=lambda d, dtype=None: np.asarray(d, dtype if dtype is not None else (
           np.float32 if isinstance(d, list) and np.asarray(d).dtype.kind == "f" else None)), grad=False),
    Op("from_numpy", lambda r: [S(np.arange(6.0).reshape(2, 3)), S(np.arange(4, dtype=np.int32)),
                                S(np.array([True, False]))], ref=lambda a: a, grad=False),
    Op("scalar_tensor", lambda r: [S(2.5), S(3, dtype=DT("float64")), S(True)],
       ref=lambda v, dtype=None: np.asarray(v, dtype or np.float32), grad=False),
    Op("zeros", lambda r: [S(2, 3), S((2, 3)), S([4], dtype=DT("int64")), S(size=(1, 2)), S(0), S(())],
       ref=_filled(0), grad=False),
    Op("ones", lambda r: [S(2, 3), S((2, 3), dtype=DT("float64")), S([4], dtype=DT("bool")), S(())],
       ref=_filled(1), grad=False),
    Fn("torch.empty", lambda L, *s, **k: L.empty(*s, **k).shape,
       lambda r: [S(2, 3), S((2, 3), dtype=DT("float64")), S(0)], ref=lambda *s, **k: np.empty(
           s[0] if len(s) == 1 and isinstance(s[0], tuple) else s).shape, grad=False),
    Op("full", lambda r: [S((2, 3), 1.5), S((2,), 7), S((2,), True), S([3], 2.0, dtype=DT("float64"))],
       ref=lambda s, v, dtype=None: np.full(s, v, dtype or (np.float32 if isinstance(v, float) else None)),
       grad=False),
    Op("zeros_like", lambda r: [S(r.real()), S(r.ints(), dtype=DT("float64")), S(r.bools())], ref=_like(0), grad=False),
    Op("ones_like", lambda r: [S(r.real()), S(r.ints(), dtype=DT("float64")), S(r.bools())], ref=_like(1), grad=False),
    Fn("torch.empty_like", lambda L, x, **k: (L.empty_like(x, **k).shape, L.empty_like(x, **k).dtype),
       lambda r: [S(r.real()), S(r.ints(), dtype=DT("float64"))],
       ref=lambda x, dtype=None: (x.shape, str(dtype or x.dtype)), grad=False),
    Op("full_like", lambda r: [S(r.real(), 2.5), S(r.ints(), 3), S(r.ints(), 1.5, dtype=DT("float64"))],
       ref=lambda x, v, dtype=None: np.full(x.shape, v, dtype or x.dtype), grad=False),
    Op("arange", lambda r: [S(5), S(1, 4), S(0.0, 1.0, 0.25), S(5, dtype=DT("float64")), S(3, 0, -1),
                            S(0, 1, 0.3), S(1.0, 3), S(start=1, end=5, step=2)],
       ref=lambda *a, dtype=None, **k: np.arange(*a, **{"start": k.get("start", 0), "stop": k["end"],
                                                         "step": k.get("step", 1)} if k else {}).astype(
           dtype or (np.float32 if any(isinstance(v, float) for v in a) else np.int64)), grad=False, out=False),
    Op("range", lambda r: [S(1, 4), S(0.0, 1.0, 0.25), S(0, 4, 2, dtype=DT("float64"))],
       ref=lambda s, e, step=1, dtype=None: np.arange(s, e + step / 2, step).astype(dtype or np.float32),
       grad=False),
    Op("linspace", lambda r: [S(0, 1, 5), S(-1.0, 2.0, 4, dtype=DT("float64")), S(0, 1, 1), S(2, 2, 3)],
       ref=lambda a, b, n, dtype=None: np.linspace(a, b, n).astype(dtype or np.float32), grad=False),
    Op("logspace", lambda r: [S(0, 2, 3), S(-1.0, 1.0, 4, base=2.0), S(0, 1, 3, dtype=DT("float64"))],
       ref=lambda a, b, n, base=10.0, dtype=None: np.logspace(a, b, n, base=base).astype(dtype or np.float32),
       grad=False),
    Op("eye", lambda r: [S(3), S(2, 3), S(3, dtype=DT("int64")), S(n=2, m=1)],
       ref=lambda n, m=None, dtype=None: np.eye(n, m, dtype=dtype or np.float32), grad=False),
    Op("vander", lambda r: [S(r.real((3,))), S(r.real((3,), "float64"), 4), S(r.real((3,), "float64"), N=2,
                                                                             increasing=True),
                            S(r.ints((3,)))],
       ref=lambda x, N=None, increasing=False: np.vander(x, N, increasing), grad=False),
    Op("fill", lambda r: [S(r.real(), 2.5), S(r.ints(), 3)], names=["torch.fill"],
       ref=lambda x, v: np.full_like(x, v), grad=False),
    Op("fill_", lambda r: [S(r.real(), 2.5), S(r.ints(), 3), S(r.real((2, 3), "float64"), r.value(1.5, "float64"))],
       names=["torch.fill_", "Tensor.fill_"], ref=lambda x, v: np.full_like(x, v), grad=False),
    Op("zero_", lambda r: [S(r.real()), S(r.ints())], names=["torch.zero_", "Tensor.zero_"],
       ref=np.zeros_like, grad=False),
    Op("new_zeros", lambda r: [S(r.real(), (2,)), S(r.ints(), 3, 2), S(r.real(), (2,), dtype=DT("float64"))],
       ref=lambda x, *s, dtype=None: np.zeros(s[0] if len(s) == 1 else s, dtype or x.dtype), grad=False),
    Op("new_ones", lambda r: [S(r.real(), (2,)), S(r.ints(), 3, 2), S(r.real(), (2,), dtype=DT("int64"))],
       ref=lambda x, *s, dtype=None: np.ones(s[0] if len(s) == 1 else s, dtype or x.dtype), grad=False),
    Op("new_full", lambda r: [S(r.real(), (2,), 3.5), S(r.ints(), (2, 2), 4)],
       ref=lambda x, s, v: np.full(s, v, x.dtype), grad=False),
    Fn("Tensor.new_empty", lambda L, x, *s, **k: (x.new_empty(*s, **k).shape, x.new_empty(*s, **k).dtype),
       lambda r: [S(r.real(), (2,)), S(r.ints(), 3, 2)],
       ref=lambda x, *s: (s[0] if len(s) == 1 else s, str(x.dtype)), grad=False),
    Op("new_tensor", lambda r: [S(r.real(), [1, 2]), S(r.ints(), [1.5, 2.0]), S(r.real(), [1], dtype=DT("int64"))],
       ref=lambda x, d, dtype=None: np.asarray(d, dtype or x.dtype), grad=False),
    Check("Tensor.new", lambda L: (tuple(L.ones(2).new(2, 3).shape), str(L.ones(2).new(2, 3).dtype))),
    # random draws
    Check(["torch.manual_seed", "torch.seed", "torch.initial_seed", "torch.get_rng_state", "torch.set_rng_state",
           "torch.default_generator"], lambda L: _rng_state(L)),
    Check("torch.Generator", lambda L: _generator(L)),
    Check("torch.rand", _random_check(lambda L: L.rand(3, 4), 0, 1)),
    Check("torch.randn", _random_check(lambda L: L.randn((3, 4), dtype=L.float64))),
    Check("torch.rand_like", _random_check(lambda L: L.rand_like(L.zeros(2, 3, dtype=L.float64)), 0, 1)),
    Check("torch.randn_like", _random_check(lambda L: L.randn_like(L.zeros(2, 3)))),
    Check("torch.randint", _random_check(lambda L: L.randint(2, 6, (50,)), 2, 5)),
    Check("torch.randint_like", _random_check(lambda L: L.randint_like(L.zeros(50), 3), 0, 2)),
    Check("torch.randperm", lambda L: _perm(L)),
    Check(["torch.normal"], _random_check(lambda L: L.normal(L.zeros(50, dtype=L.float64) + 5.0, 0.01), 4.9, 5.1)),
    Check(["torch.bernoulli", "Tensor.bernoulli"],
          _random_check(lambda L: L.bernoulli(L.full((50,), 0.5)) + L.full((50,), 0.5).bernoulli(), 0, 2)),
    Check(["torch.multinomial", "Tensor.multinomial"],
          _random_check(lambda L: L.cat([L.multinomial(L.tensor([0.0, 1.0, 3.0]), 20, replacement=True),
                                         L.tensor([0.0, 1.0, 3.0]).multinomial(2)]), 1, 2)),
    Check("torch.poisson", _random_check(lambda L: L.poisson(L.full((50,), 3.0)), 0)),
    Check("torch.binomial", _random_check(lambda L: L.binomial(L.full((50,), 5.0), L.full((50,), 0.5)), 0, 5)),
    Check("Tensor.normal_", _fill_check("normal_", 2.0, 0.5)),
    Check("Tensor.uniform_", _fill_check("uniform_", -1.0, 2.0, low=-1.0, high=2.0)),
    Check("Tensor.bernoulli_", lambda L: _bernoulli_(L)),
    Check("Tensor.cauchy_", _fill_check("cauchy_", 0.0, 1.0)),
    Check("Tensor.exponential_", _fill_check("exponential_", 2.0, low=0.0)),
    Check("Tensor.geometric_", _fill_check("geometric_", 0.3, low=1.0, integral=True)),
    Check("Tensor.log_normal_", _fill_check("log_normal_", 0.0, 0.5, low=0.0)),
    Check("Tensor.random_", _fill_check("random_", 0, 10, low=0, high=9, integral=True)),
]


def _rng_state(L):
    L.manual_seed(5)
    state = L.get_rng_state()
    a = L.rand(3).numpy()
    L.set_rng_state(state)
    assert np.array_equal(a, L.rand(3).numpy())
    L.manual_seed(7)
    assert L.initial_seed() == 7
    assert isinstance(L.seed(), int)
    assert isinstance(L.default_generator, L.Generator)
    return None


def _generator(L):
    g = L.Generator().manual_seed(4)
    a = L.rand(3, generator=g).numpy()
    g.manual_seed(4)
    assert np.array_equal(a, L.rand(3, generator=g).numpy())
    return g.initial_seed()


def _perm(L):
    L.manual_seed(2)
    p = L.randperm(6)
    assert sorted(p.tolist()) == list(range(6))
    return str(p.dtype).replace("torch.", ""), tuple(L.randperm(4, dtype=L.float64).shape)


def _bernoulli_(L):
    x = L.zeros(100)
    assert x.bernoulli_(0.5) is x
    assert set(np.unique(x.numpy())) <= {0.0, 1.0}
    assert x.bernoulli_(L.full((100,), 1.0)).sum().item() == 100
    return None
