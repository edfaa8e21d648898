"""torch.finfo/iinfo, PyTorch's promotion helpers, the torch-level normalization forms, the stubs of
functions PyTorch removed, typename and torch.vmap (issue 33's last torch-level names)."""
import numpy as np
import pytest

import minigrad as mg

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def test_finfo_and_iinfo_hold_the_known_limits():
    f32 = mg.finfo(mg.float32)
    assert (f32.bits, f32.eps, f32.tiny, f32.max) == (32, 2.0 ** -23, 2.0 ** -126, (2 - 2.0 ** -23) * 2.0 ** 127)
    assert f32.min == -f32.max and f32.smallest_normal == f32.tiny and f32.dtype == "float32"
    assert mg.finfo().eps == 2.0 ** -23  # the default dtype's
    bf16 = mg.finfo(mg.bfloat16)
    assert (bf16.bits, bf16.eps, bf16.tiny) == (16, 2.0 ** -7, 2.0 ** -126)
    i64 = mg.iinfo(mg.int64)
    assert (i64.bits, i64.min, i64.max) == (64, -2 ** 63, 2 ** 63 - 1)
    with pytest.raises(TypeError, match="finfo: expects a floating point dtype, got int64"):
        mg.finfo(mg.int64)
    with pytest.raises(TypeError, match="iinfo: expects an integer dtype"):
        mg.iinfo(mg.float32)


def test_a_mask_filled_with_finfo_min_softmaxes_to_zero():
    scores = mg.tensor([[1.0, 2.0, 3.0]])
    weights = scores.masked_fill(mg.tensor([[False, True, False]]), mg.finfo(scores.dtype).min).softmax(-1)
    assert weights[0, 1].item() == 0.0 and abs(weights.sum().item() - 1) < 1e-6


def test_promotion_goes_by_category_before_size():
    assert mg.promote_types(mg.float16, mg.int64) == mg.float16  # NumPy would say float64
    assert mg.promote_types(mg.uint8, mg.int8) == mg.int16
    assert mg.promote_types(mg.bool, mg.int32) == mg.int32
    assert mg.result_type(mg.tensor([1, 2]), 0.5) == mg.get_default_dtype()
    assert mg.result_type(mg.tensor([1.0], dtype=mg.float32), mg.tensor(1.0, dtype=mg.float64)) == mg.float32
    assert mg.can_cast(mg.int64, mg.float16) and mg.can_cast(mg.float64, mg.float32) and mg.can_cast(mg.bool, mg.int8)
    assert not mg.can_cast(mg.float32, mg.int64) and not mg.can_cast(mg.int8, mg.bool)


@needs_torch
def test_limits_and_promotion_as_pytorchs():
    for name in DTYPES:
        mine, theirs = getattr(mg, name), getattr(torch, name)
        if name.startswith("float"):
            a, b = mg.finfo(mine), torch.finfo(theirs)
            assert (a.bits, a.eps, a.max, a.min, a.tiny, a.resolution) == (b.bits, b.eps, b.max, b.min, b.tiny,
                                                                         b.resolution)
        elif name != "bool":
            a, b = mg.iinfo(mine), torch.iinfo(theirs)
            assert (a.bits, a.max, a.min) == (b.bits, b.max, b.min)
        for other in DTYPES:
            promoted = mg.promote_types(mine, getattr(mg, other))
            assert str(promoted) == str(torch.promote_types(theirs, getattr(torch, other))).replace("torch.", "")
            assert mg.can_cast(mine, getattr(mg, other)) == torch.can_cast(theirs, getattr(torch, other)), (name, other)
    b = torch.finfo(torch.bfloat16)
    assert (mg.finfo(mg.bfloat16).max, mg.finfo(mg.bfloat16).eps) == (b.max, b.eps)


def test_torch_level_normalizations_take_atens_argument_order():
    rng = np.random.default_rng(0)
    x = mg.tensor(rng.standard_normal((4, 3, 5)))
    w, b = mg.tensor(rng.standard_normal(3)), mg.tensor(rng.standard_normal(3))
    mean, var = mg.zeros(3, dtype=x.dtype), mg.ones(3, dtype=x.dtype)
    expected = mg.nn.functional.batch_norm(x, mean, var, w, b, False, 0.1, 1e-5)
    assert np.array_equal(mg.batch_norm(x, w, b, mean, var, False, 0.1, 1e-5, True).numpy(), expected.numpy())
    assert np.array_equal(mg.group_norm(x, 3, w, b, 1e-5, True).numpy(),
                          mg.nn.functional.group_norm(x, 3, w, b, 1e-5).numpy())
    assert np.array_equal(mg.rms_norm(x, (5,)).numpy(), mg.nn.functional.rms_norm(x, (5,)).numpy())
    assert np.array_equal(mg.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, True).numpy(),
                          mg.nn.functional.instance_norm(x, None, None, w, b, True, 0.1, 1e-5).numpy())


def test_removed_functions_say_where_they_went_and_the_rest():
    for name, home in [("solve", "linalg.solve"), ("lstsq", "linalg.lstsq"), ("symeig", "linalg.eigh"),
                       ("matrix_rank", "linalg.matrix_rank"), ("eig", "linalg.eig")]:
        with pytest.raises(RuntimeError, match=rf"torch.{name} was deprecated and has been removed.*{home}"):
            getattr(mg, name)(mg.eye(2))
    assert mg.typename(mg.zeros(2)) == "torch.FloatTensor" and mg.typename(3) == "int"
    assert mg.vmap is mg.func.vmap
    out = mg.vmap(lambda row: (row * row).sum())(mg.arange(6.0).reshape(2, 3))
    assert out.tolist() == [5.0, 50.0]
