"""Property-based fuzzing: random compositions of ops on random broadcastable shapes must gradcheck,
random masks through attention must never produce NaN, and random junk (every NumPy dtype, nested lists,
dicts, bytes) given to mg.tensor, load_state_dict and mg.load gives a value or a clear minigrad error,
leaving the model bit-identical when it is refused.

CI runs a bounded number of examples; set MINIGRAD_FUZZ_EXAMPLES (e.g. 2000) for a longer run.
"""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
import minigrad.nn.functional as F
from test_nn_module import Small, _snapshot  # the model whose state dicts the junk is loaded into
from test_serialization import _index, _write_archive  # hand-made archives

EXAMPLES = int(os.environ.get("MINIGRAD_FUZZ_EXAMPLES", "40"))
fuzz_settings = settings(max_examples=EXAMPLES, deadline=None,
                         suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# Each step maps (current tensor, a fresh input of a broadcastable shape) -> a new tensor of the
# current tensor's shape, staying smooth and finite on the inputs drawn (no kinks, no poles), so
# finite differences are valid. Steps must not grow values fast when composed: exp(exp(...)) of a
# value near 5 reaches 1e25, where float64 finite differences are all rounding error.
def _steps():
    return {
        "add": lambda x, y: x + y,
        "sub": lambda x, y: x - y,
        "mul": lambda x, y: x * y,
        "div": lambda x, y: x / (1.5 + y * y),
        "pow": lambda x, y: (x * x + 0.5) ** 0.75,
        "exp": lambda x, y: (x * x * -0.5).exp(),
        "log": lambda x, y: (x * x + 1.0).log(),
        "sqrt": lambda x, y: (x * x + 1.0).sqrt(),
        "tanh": lambda x, y: x.tanh(),
        "sigmoid": lambda x, y: x.sigmoid(),
        "softmax": lambda x, y: x.softmax(dim=-1),
        "log_softmax": lambda x, y: x.log_softmax(dim=0),
        "sum_keep": lambda x, y: x.sum(dim=-1, keepdim=True) * y,
        "mean_keep": lambda x, y: x.mean(dim=0, keepdim=True) + y,
        "var_keep": lambda x, y: x.var(dim=-1, keepdim=True, correction=0) + y,  # n - 1 = 0 is a pole
        "transpose": lambda x, y: (x.transpose(0, -1) * 1.5).transpose(0, -1),
        "flip_reshape": lambda x, y: x.reshape(-1).reshape(x.shape),
        "matmul": lambda x, y: ((x @ x.transpose(-2, -1)) @ x) * 0.1 if x.ndim > 1 else x * x,
        "cat": lambda x, y: mg.cat([x, x * 2.0], dim=-1)[..., : x.shape[-1]],
        # the switch point is an odd number: steps make exact 0s (log_softmax over a size-1 dim) and 0.3s
        "where": lambda x, y: mg.where(x.detach().numpy() > 0.0123, x, -x * 0.5 + y),
        "masked_fill": lambda x, y: x.masked_fill(np.broadcast_to(np.arange(x.shape[-1]) % 2 == 0, x.shape), 0.3),
    }


STEPS = _steps()


@st.composite
def programs(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    names = draw(st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=5))
    # the fresh input of each step: the same shape with some dims turned into 1 (broadcasting)
    side_shapes = []
    for _ in names:
        ones = draw(st.lists(st.booleans(), min_size=ndim, max_size=ndim))
        drop_lead = draw(st.integers(0, ndim - 1))
        side_shapes.append(tuple(1 if o else s for o, s in zip(ones, shape))[drop_lead:])
    seed = draw(st.integers(0, 2**16))
    return shape, names, side_shapes, seed


@fuzz_settings
@given(programs())
def test_random_op_compositions_gradcheck(program):
    shape, names, side_shapes, seed = program
    rng = np.random.default_rng(seed)
    x = mg.tensor(rng.uniform(0.3, 1.2, shape) * rng.choice([-1, 1], shape), requires_grad=True)
    sides = [mg.tensor(rng.uniform(-1, 1, s), requires_grad=True) for s in side_shapes]

    def fn(x, *sides):
        out = x
        for name, side in zip(names, sides):
            out = STEPS[name](out, side)
        return out

    # "where" branches on the current values: keep its inputs off the switch point
    assert mg.gradcheck(fn, [x, *sides], eps=1e-6, atol=1e-5, rtol=1e-3)


@st.composite
def attention_cases(draw):
    B, h, T, S, d = (draw(st.integers(1, 3)) for _ in range(5))
    mask = draw(st.lists(st.booleans(), min_size=B * T * S, max_size=B * T * S))
    causal = draw(st.booleans())
    seed = draw(st.integers(0, 2**16))
    return B, h, T, S, d, np.array(mask).reshape(B, 1, T, S), causal and T == S, seed


@fuzz_settings
@given(attention_cases())
def test_random_masks_through_attention_never_give_nan(case):
    B, h, T, S, d, mask, causal, seed = case
    rng = np.random.default_rng(seed)
    q = mg.tensor(rng.normal(size=(B, h, T, d)) * 10, requires_grad=True)
    k = mg.tensor(rng.normal(size=(B, h, S, d)) * 10, requires_grad=True)
    v = mg.tensor(rng.normal(size=(B, h, S, d)), requires_grad=True)
    if causal:
        mask = mask & np.tri(T, S, dtype=bool)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mg.tensor(mask))
    (out * mg.tensor(rng.normal(size=out.shape))).sum().backward()
    for t in (out, q.grad, k.grad, v.grad):
        assert np.isfinite(t.detach().numpy()).all()
    dead = ~mask.any(axis=-1)  # (B, 1, T): queries with no allowed key
    assert np.all(np.where(dead[..., None], out.detach().numpy(), 0) == 0)
    assert np.all(np.where(dead[..., None], q.grad.numpy(), 0) == 0)


# ---- property-based junk -----------------------------------------------------------------------
junk_settings = settings(max_examples=int(os.environ.get("MINIGRAD_FUZZ_EXAMPLES", "60")), deadline=None,
                         suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

ALL_DTYPES = hnp.boolean_dtypes() | hnp.integer_dtypes() | hnp.unsigned_integer_dtypes() | hnp.floating_dtypes() \
    | hnp.complex_number_dtypes() | hnp.unicode_string_dtypes() | hnp.byte_string_dtypes() \
    | hnp.datetime64_dtypes() | hnp.timedelta64_dtypes()
arrays = hnp.arrays(ALL_DTYPES, hnp.array_shapes(min_dims=0, max_dims=3, max_side=3))
scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.complex_numbers() | st.text(max_size=3) \
    | st.binary(max_size=3)
junk = st.recursive(scalars | arrays, lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
                    | st.dictionaries(st.text(max_size=2), inner, max_size=2), max_leaves=8)

# what minigrad raises for bad input: its own errors, and the Python types its messages use
MINIGRAD_ERRORS = (TypeError, ValueError, OverflowError, mg.ShapeError, mg.CheckpointError)
LOAD_ERRORS = MINIGRAD_ERRORS + (RuntimeError,)  # load_state_dict raises PyTorch's RuntimeError


def _clear(error):
    """A minigrad message: it names the op that refused, so it is not NumPy's or Python's own."""
    text = str(error)
    return (text.split(":")[0] in {"tensor", "dtype", "load_state_dict of Small", "load",
                                   "Error(s) in loading state_dict for Small"} or text.startswith("'"))


@junk_settings
@given(data=junk, dtype=st.none() | st.sampled_from([mg.float32, mg.float64, mg.int64, mg.bool]))
def test_tensor_of_random_junk_gives_a_tensor_or_a_clear_error(data, dtype):
    try:
        t = mg.tensor(data, dtype=dtype)
    except MINIGRAD_ERRORS as error:
        assert _clear(error), repr(error)
    else:
        assert t.dtype.kind in "biuf"  # whatever was accepted is a dtype a tensor may hold


@junk_settings
@given(entries=st.dictionaries(st.sampled_from(["linear.weight", "linear.bias", "norm.weight", "norm.bias", "count",
                                                "other"]), junk | arrays, max_size=6),
       strict=st.booleans())
def test_load_state_dict_of_random_junk_loads_or_leaves_the_model_bit_identical(entries, strict):
    model = Small()
    before = _snapshot(model)
    try:
        model.load_state_dict(entries, strict=strict)
    except LOAD_ERRORS as error:
        assert _clear(error), repr(error)
        assert _snapshot(model) == before


@junk_settings
@given(content=st.binary(max_size=300) | st.builds(lambda b, cut: b[:cut], st.just(b""), st.integers(0, 10)),
       prefix=st.sampled_from([b"", b"PK\x03\x04", b"\x93NUMPY"]))
def test_load_of_random_bytes_is_a_checkpoint_error(tmp_path, content, prefix):
    path = tmp_path / "junk.npz"
    path.write_bytes(prefix + content)
    with pytest.raises(mg.CheckpointError, match="junk.npz"):
        mg.load(path)


@junk_settings
@given(tree=st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
                         lambda inner: st.lists(inner, max_size=3)
                         | st.dictionaries(st.sampled_from(["dict", "list", "tuple", "tensor", "ndarray", "scalar",
                                                            "w", ""]), inner, max_size=2), max_leaves=10))
def test_load_of_a_random_index_gives_a_value_or_a_checkpoint_error(tmp_path, tree):
    path = _write_archive(tmp_path / "index.npz", _index(tree), {"w": np.arange(3.0)})
    try:
        mg.load(path)
    except mg.CheckpointError as error:
        assert "index.npz" in str(error)


@junk_settings
@given(cut=st.integers(0, 10_000), flip=st.integers(0, 10_000))
def test_a_truncated_or_damaged_real_checkpoint_is_a_checkpoint_error(tmp_path, cut, flip):
    path = tmp_path / "real.npz"
    mg.save({"model": Small().state_dict(), "step": 3, "names": ["a", "b"]}, path)
    raw = bytearray(path.read_bytes())
    damaged = tmp_path / "damaged.npz"
    if cut < len(raw):
        damaged.write_bytes(bytes(raw[:cut]))
    else:
        raw[flip % len(raw)] ^= 0xFF
        damaged.write_bytes(bytes(raw))
    try:
        mg.load(damaged)  # a flipped byte in a part nobody reads (a zip comment, padding) may go unnoticed
    except mg.CheckpointError as error:
        assert "damaged.npz" in str(error)
