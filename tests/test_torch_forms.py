"""The torch.* forms of ops minigrad keeps elsewhere (minigrad/torch_compat/torch_forms.py), and the
torch.* names that must be what PyTorch's are (issue 39).

- torch.layer_norm is the function (a submodule of the same name once shadowed it), torch.dtype the
  class of the dtypes (`isinstance(d, torch.dtype)`), and no other torch.* function is a module.
- The torch-level losses called without `reduction` return what PyTorch 2.13 returns: the unreduced loss
  (ATen's schemas say Mean, PyTorch's Python binding gives none); 1 and 2 are mean and sum.

Each check is written once against `lib` (minigrad, then PyTorch where installed); the values are
compared with PyTorch where it is installed and with a NumPy reference written here without it.
"""
import types
import warnings

import numpy as np
import pytest

import minigrad as mg

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")

# minigrad's public torch.* names that are modules; each is a module in PyTorch as well (torch.nn,
# torch.linalg, ...), except dtype: a module that answers isinstance as PyTorch's class (below). A new
# module bound at the top level (as kernels/layer_norm.py once was) fails this test.
MODULES = {
    "allocator", "amp", "autograd", "backends", "compiler", "composites", "cpu", "creation", "cuda", "determinism",
    "distributed", "dtype", "engine", "errors", "func", "function", "grad_mode", "import_alias", "jit", "kernels",
    "linalg", "nn", "onnx", "ops", "optim", "random", "serialization", "size", "tensor_methods", "torch_compat",
    "utils", "views", "viz",
}


def test_no_torch_function_is_shadowed_by_a_module():
    modules = {name for name in dir(mg) if not name.startswith("_") and isinstance(getattr(mg, name), types.ModuleType)}
    assert modules <= MODULES, sorted(modules - MODULES)
    assert callable(mg.layer_norm) and not isinstance(mg.layer_norm, types.ModuleType)
    if torch is not None:
        shadowing = sorted(name for name in modules if hasattr(torch, name)
                           and not isinstance(getattr(torch, name), types.ModuleType))
        assert shadowing == ["dtype"], shadowing


def test_dtype_is_the_class_of_the_dtypes(lib):
    assert isinstance(lib.float32, lib.dtype) and isinstance(lib.int64, lib.dtype)
    assert isinstance(lib.zeros(2).dtype, lib.dtype) and isinstance(lib.bfloat16, lib.dtype)
    assert not isinstance("float32", lib.dtype) and not isinstance(3, lib.dtype)


def test_torch_layer_norm_is_the_function(lib):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4))
    w, b = rng.standard_normal(4), rng.standard_normal(4)
    got = lib.layer_norm(lib.tensor(x), [4], lib.tensor(w), lib.tensor(b), 1e-5, False).numpy()
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(got, (x - mean) / np.sqrt(var + 1e-5) * w + b, rtol=1e-12, atol=1e-12)
    assert tuple(lib.layer_norm(lib.tensor(x), (3, 4)).shape) == (2, 3, 4)


def test_torch_layer_norm_gradcheck():
    rng = np.random.default_rng(1)
    x, w, b = (mg.tensor(rng.standard_normal(s), dtype=mg.float64, requires_grad=True) for s in ((2, 3, 4), 4, 4))
    assert mg.gradcheck(lambda x, w, b: mg.layer_norm(x, (4,), w, b), (x, w, b))


# ---- the torch-level losses: reduction 0 (none) when left out, as PyTorch 2.13 -----------------------
def _loss_cases():
    rng = np.random.default_rng(2)
    a, b, c = (rng.standard_normal((3, 4)) for _ in range(3))
    p = 1 / (1 + np.exp(-rng.standard_normal((3, 4))))
    sign = np.where(rng.standard_normal((3, 4)) > 0, 1.0, -1.0)
    row_sign = sign[:, 0]
    softplus = np.logaddexp(0, -a)
    cos = (a * b).sum(1) / np.sqrt((a * a).sum(1) * (b * b).sum(1))
    dist = lambda u, v: np.sqrt((np.abs(u - v + 1e-6) ** 2).sum(-1))  # noqa: E731  (pairwise_distance)
    # name, arguments (arrays become tensors), the unreduced loss in NumPy
    return [
        ("kl_div", (a, p), p * (np.log(p) - a)),
        ("binary_cross_entropy_with_logits", (a, p), (1 - p) * a + softplus),
        ("hinge_embedding_loss", (a, sign), np.where(sign == 1, a, np.maximum(0, 1.0 - a))),
        ("margin_ranking_loss", (a, b, sign), np.maximum(0, -sign * (a - b))),
        ("cosine_embedding_loss", (a, b, row_sign), np.where(row_sign == 1, 1 - cos, np.maximum(0, cos))),
        ("triplet_margin_loss", (a, b, c), np.maximum(dist(a, b) - dist(a, c) + 1.0, 0)),
    ]


LOSS_CASES = _loss_cases()
DEFAULTS_BEFORE_REDUCTION = {  # the arguments between the tensors and `reduction` in PyTorch's signatures
    "binary_cross_entropy_with_logits": [None, None], "hinge_embedding_loss": [1.0], "margin_ranking_loss": [0.0],
    "cosine_embedding_loss": [0.0], "triplet_margin_loss": [1.0, 2.0, 1e-6, False],
}


@pytest.mark.parametrize("name, args, expected", LOSS_CASES, ids=[case[0] for case in LOSS_CASES])
def test_torch_level_losses_without_reduction_give_the_unreduced_loss(lib, name, args, expected):
    function = getattr(lib, name)
    tensors = [lib.tensor(arg) for arg in args]
    np.testing.assert_allclose(function(*tensors).numpy(), expected, rtol=1e-10, atol=1e-12)
    # the reduction as ATen's integer, in its place after the other arguments (at their defaults): 1 mean, 2 sum
    positional = tensors + DEFAULTS_BEFORE_REDUCTION.get(name, [])
    np.testing.assert_allclose(function(*positional, 1).item(), expected.mean(), rtol=1e-10)
    np.testing.assert_allclose(function(*positional, 2).item(), expected.sum(), rtol=1e-10)
    np.testing.assert_allclose(function(*tensors, reduction=0).numpy(), expected, rtol=1e-10, atol=1e-12)


def _ctc_case(lib):
    rng = np.random.default_rng(3)
    log_probs = lib.tensor(rng.standard_normal((6, 2, 4))).log_softmax(-1)
    targets = lib.tensor(np.array([[1, 2, 3], [2, 2, 0]]))
    return log_probs, targets


def test_torch_ctc_loss_without_reduction_is_per_sequence(lib):
    log_probs, targets = _ctc_case(lib)
    per_sequence = lib.ctc_loss(log_probs, targets, [6, 6], [3, 2])
    assert tuple(per_sequence.shape) == (2,)
    lengths = lib.tensor([6, 6]), lib.tensor([3, 2])
    np.testing.assert_allclose(lib.ctc_loss(log_probs, targets, *lengths).numpy(), per_sequence.numpy())
    # mean: each sequence's loss over its target length, then the batch mean (F.ctc_loss's "mean")
    np.testing.assert_allclose(lib.ctc_loss(log_probs, targets, [6, 6], [3, 2], 0, 1).item(),
                               (per_sequence.numpy() / [3, 2]).mean(), rtol=1e-12)
    np.testing.assert_allclose(lib.ctc_loss(log_probs, targets, [6, 6], [3, 2], 0, 2).item(),
                               per_sequence.numpy().sum(), rtol=1e-12)


@needs_torch
def test_torch_level_losses_match_pytorch_without_reduction():
    for name, args, _ in LOSS_CASES:
        got = getattr(mg, name)(*[mg.tensor(arg) for arg in args]).numpy()
        want = getattr(torch, name)(*[torch.tensor(arg) for arg in args]).numpy()
        assert got.shape == want.shape, name
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=name)
    ours, theirs = (lib.ctc_loss(*_ctc_case(lib), [6, 6], [3, 2]).numpy() for lib in (mg, torch))
    np.testing.assert_allclose(ours, theirs, rtol=1e-10)


@pytest.mark.parametrize("name, args, expected", LOSS_CASES[:4], ids=[case[0] for case in LOSS_CASES[:4]])
def test_torch_level_losses_gradcheck(name, args, expected):
    inputs = [mg.tensor(arg, dtype=mg.float64, requires_grad=i == 0) for i, arg in enumerate(args)]
    assert mg.gradcheck(lambda *xs: getattr(mg, name)(*xs), inputs)


# ---- names old code still uses --------------------------------------------------------------------
INIT_OLD_NAMES = [("uniform", (0.0, 1.0)), ("normal", (0.0, 1.0)), ("constant", (0.5,)), ("xavier_uniform", ()),
                  ("xavier_normal", ()), ("kaiming_uniform", ()), ("kaiming_normal", ()), ("orthogonal", ()),
                  ("eye", ()), ("sparse", (0.5,))]


@pytest.mark.parametrize("name, args", INIT_OLD_NAMES, ids=[n for n, _ in INIT_OLD_NAMES])
def test_nn_init_spellings_without_the_underscore_warn_and_fill_as_the_new_ones(lib, name, args):
    old, new = lib.empty(4, 3), lib.empty(4, 3)
    lib.manual_seed(3)
    with pytest.warns(FutureWarning, match=f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`"):
        returned = getattr(lib.nn.init, name)(old, *args)
    lib.manual_seed(3)
    getattr(lib.nn.init, name + "_")(new, *args)
    assert returned is old
    np.testing.assert_array_equal(old.numpy(), new.numpy())  # the same draws from the same seed


def test_tensor_h_and_mh_transpose_real_tensors(lib):
    x = lib.tensor(np.arange(24.0).reshape(2, 3, 4))
    np.testing.assert_array_equal(x.mH.numpy(), np.arange(24.0).reshape(2, 3, 4).transpose(0, 2, 1))
    np.testing.assert_array_equal(x[0].H.numpy(), np.arange(12.0).reshape(3, 4).T)
    with pytest.raises(RuntimeError, match="tensor.H is only supported on matrices"):
        x.H
    with pytest.raises(RuntimeError, match="tensor.mH is only supported on matrices or batches of matrices"):
        lib.ones(3).mH


def test_tensor_h_and_mh_gradients():
    x = mg.tensor(np.random.default_rng(4).standard_normal((2, 3, 4)), requires_grad=True)
    w = mg.tensor(np.random.default_rng(5).standard_normal((2, 4, 3)))
    assert mg.gradcheck(lambda x: x.mH * w, (x,))
    assert mg.gradcheck(lambda x: x[1].H * w[0], (x,))


def test_deterministic_debug_mode_sets_and_reads_use_deterministic_algorithms(lib):
    assert lib.get_deterministic_debug_mode() == 0
    try:
        for mode, (enabled, warn_only) in (("warn", (True, True)), (2, (True, False)), ("default", (False, False))):
            lib.set_deterministic_debug_mode(mode)
            assert lib.get_deterministic_debug_mode() == {"warn": 1, 2: 2, "default": 0}[mode]
            assert lib.are_deterministic_algorithms_enabled() == enabled
            assert lib.is_deterministic_algorithms_warn_only_enabled() == warn_only
        with pytest.raises(RuntimeError, match="expected 0, 1, or 2, but got 3"):
            lib.set_deterministic_debug_mode(3)
        with pytest.raises(RuntimeError, match="expected one of `default`, `warn`, `error`, but got x"):
            lib.set_deterministic_debug_mode("x")
        with pytest.raises(TypeError, match="debug_mode must be str or int"):
            lib.set_deterministic_debug_mode(1.0)
    finally:
        lib.set_deterministic_debug_mode(0)


def test_warn_always_flag(lib):
    assert lib.is_warn_always_enabled() is False
    try:
        lib.set_warn_always(True)
        assert lib.is_warn_always_enabled() is True
    finally:
        lib.set_warn_always(False)


def test_set_flush_denormal_returns_a_bool_and_minigrad_keeps_subnormals():
    assert mg.set_flush_denormal(False) is False
    assert mg.set_flush_denormal(True) is False  # NumPy cannot flush: said so by the result, as PyTorch does
    tiny = mg.tensor([1e-310], dtype=mg.float64)
    assert (tiny * 1.0).item() == 1e-310


def test_set_default_tensor_type_sets_the_default_float_dtype(lib):
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.set_default_tensor_type(lib.DoubleTensor)
            assert lib.get_default_dtype() == lib.float64 and lib.zeros(1).dtype == lib.float64
            lib.set_default_tensor_type("torch.FloatTensor")
            assert lib.get_default_dtype() == lib.float32
            with pytest.raises(TypeError, match="only floating-point types"):
                lib.set_default_tensor_type(lib.LongTensor)
        if lib is mg:  # (PyTorch warns once a process, so whether it warns here depends on the tests before)
            assert "set_default_tensor_type() is deprecated" in str(caught[0].message)
    finally:
        lib.set_default_dtype(lib.float32)


def test_anomaly_check_nan_flag(lib):
    assert lib.is_anomaly_check_nan_enabled() is True and not lib.is_anomaly_enabled()
    with pytest.warns(UserWarning) if lib is not mg else _nothing():
        with lib.autograd.detect_anomaly(check_nan=False):
            assert lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled() is False
            x = lib.tensor([-1.0], requires_grad=True)
            x.sqrt().sum().backward()  # NaN, and no error: the values are not checked
    assert lib.is_anomaly_check_nan_enabled() is True and not lib.is_anomaly_enabled()
    lib.set_anomaly_enabled(True, False)
    try:
        assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
    finally:
        lib.set_anomaly_enabled(False)
    assert lib.is_anomaly_check_nan_enabled() is True


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return False


def test_nn_init_eye_dirac_and_sparse(lib):
    w = lib.nn.init.eye_(lib.empty(3, 5))
    np.testing.assert_array_equal(w.numpy(), np.eye(3, 5))
    conv = lib.nn.init.dirac_(lib.empty(4, 2, 3, 3), groups=2)
    expected = np.zeros((4, 2, 3, 3))
    for out, inp in ((0, 0), (1, 1), (2, 0), (3, 1)):  # two groups of two output channels
        expected[out, inp, 1, 1] = 1
    np.testing.assert_array_equal(conv.numpy(), expected)
    lib.manual_seed(0)
    sparse = lib.nn.init.sparse_(lib.empty(10, 6), sparsity=0.3, std=0.5).numpy()
    assert ((sparse == 0).sum(0) == 3).all()  # ceil(0.3 * 10) zeros in every column
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        lib.nn.init.eye_(lib.empty(2, 2, 2))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        lib.nn.init.dirac_(lib.empty(3, 2, 3), groups=2)
