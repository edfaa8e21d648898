"""PyTorch names that PyTorch code reached and minigrad lacked (issue 32, point 5): torch.normal in its
four forms, torch.nn.modules.linear.NonDynamicallyQuantizableLinear, nn.utils.rnn.pad_sequence,
torch.utils.checkpoint, torch.nn.modules.transformer._get_clones, torch.nn.modules.loss._Loss and
_WeightedLoss, and x.type()'s names.

Each behaviour is written against `lib` and runs on minigrad and, where installed, on PyTorch; values
that involve no randomness are compared between the two; normal's draws are checked by their
statistics, and pad_sequence's gradient by finite differences.
"""
import copy
import pickle
import warnings

import numpy as np
import pytest

import minigrad as mg

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
LIBS = [mg] + ([torch] if torch is not None else [])
by_name = pytest.mark.parametrize("lib", LIBS, ids=lambda lib: lib.__name__)


def as_array(t):
    return t.detach().numpy()


# ---- torch.normal ------------------------------------------------------------------------------------
@by_name
def test_normal_in_its_four_forms_gives_the_shapes_and_dtypes_of_pytorch(lib):
    assert tuple(lib.normal(lib.zeros(3), lib.ones(3)).shape) == (3,)
    assert tuple(lib.normal(lib.zeros(2, 1), lib.ones(1, 3)).shape) == (2, 3)  # broadcast
    assert tuple(lib.normal(0.0, lib.ones(2, 2)).shape) == (2, 2)
    assert tuple(lib.normal(lib.zeros(2, 3), 1.0).shape) == (2, 3)
    assert tuple(lib.normal(lib.zeros(4)).shape) == (4,)  # std defaults to 1
    assert tuple(lib.normal(2, 3, size=(2, 2)).shape) == (2, 2) and lib.normal(2, 3, (4,)).dtype == lib.float32
    assert lib.normal(0.0, 1.0, (2,), dtype=lib.float64).dtype == lib.float64
    assert lib.normal(lib.zeros(3, dtype=lib.float64), 1.0).dtype == lib.float64
    generator = lib.Generator().manual_seed(5)
    first = as_array(lib.normal(0.0, 1.0, (3,), generator=generator))
    generator.manual_seed(5)
    np.testing.assert_array_equal(as_array(lib.normal(0.0, 1.0, (3,), generator=generator)), first)


@by_name
def test_normal_refuses_what_pytorch_refuses(lib):
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        lib.normal(lib.zeros(3), -lib.ones(3))
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
        lib.normal(0.0, -1.0, (2,))
    with pytest.raises(RuntimeError):
        lib.normal(lib.zeros(3), lib.ones(4))  # shapes that do not broadcast
    with pytest.raises(TypeError):
        lib.normal(0.0, 1.0)  # floats need a size


@by_name
def test_normal_is_in_the_graph_with_a_zero_gradient_as_in_pytorch(lib):
    mean = lib.zeros(2, 1, requires_grad=True)
    std = lib.ones(1, 3, requires_grad=True)
    draws = lib.normal(mean, std)
    assert draws.requires_grad
    draws.sum().backward()
    np.testing.assert_array_equal(as_array(mean.grad), np.zeros((2, 1)))
    np.testing.assert_array_equal(as_array(std.grad), np.zeros((1, 3)))
    assert not lib.normal(lib.zeros(3), 1.0).requires_grad


def test_normal_draws_have_the_asked_means_and_deviations():
    mg.manual_seed(0)
    n = 100_000
    mean = mg.tensor([[-2.0], [0.0], [3.0]])
    std = mg.tensor([[0.5], [1.0], [2.0]])
    for draws in (mg.normal(mean.expand(3, n), std.expand(3, n)),  # tensor, tensor
                  mg.normal(mean.expand(3, n), std.expand(3, n).contiguous()) * 1.0):
        values = as_array(draws)
        np.testing.assert_allclose(values.mean(axis=1), [-2.0, 0.0, 3.0], atol=0.02)
        np.testing.assert_allclose(values.std(axis=1), [0.5, 1.0, 2.0], rtol=0.01)
    values = as_array(mg.normal(1.5, mg.full((n,), 0.25)))  # float, tensor
    assert abs(values.mean() - 1.5) < 0.01 and abs(values.std() - 0.25) < 0.005
    values = as_array(mg.normal(mg.full((n,), -1.0), 3.0))  # tensor, float
    assert abs(values.mean() + 1.0) < 0.05 and abs(values.std() - 3.0) < 0.05
    values = as_array(mg.normal(4.0, 0.5, (n,)))  # float, float, size
    assert abs(values.mean() - 4.0) < 0.01 and abs(values.std() - 0.5) < 0.005
    # the seeded generator repeats itself; the draws are not all equal
    mg.manual_seed(3)
    a = as_array(mg.normal(0.0, 1.0, (5,)))
    mg.manual_seed(3)
    np.testing.assert_array_equal(as_array(mg.normal(0.0, 1.0, (5,))), a)
    assert len(set(a.tolist())) == 5


# ---- NonDynamicallyQuantizableLinear, _get_clones, _Loss ---------------------------------------------
@by_name
def test_non_dynamically_quantizable_linear_is_a_linear_at_pytorchs_path(lib):
    from importlib import import_module

    cls = import_module(f"{lib.__name__}.nn.modules.linear").NonDynamicallyQuantizableLinear
    layer = cls(3, 2, bias=False)
    assert isinstance(layer, lib.nn.Linear) and layer.bias is None and tuple(layer.weight.shape) == (2, 3)
    assert repr(cls(3, 2)) == "NonDynamicallyQuantizableLinear(in_features=3, out_features=2, bias=True)"
    x = lib.ones(1, 3)
    np.testing.assert_allclose(as_array(layer(x)), as_array(x) @ as_array(layer.weight).T, rtol=1e-6)
    again = pickle.loads(pickle.dumps(layer))  # checkpoints that pickle whole models name the class
    assert type(again) is cls and np.array_equal(as_array(again.weight), as_array(layer.weight))


def test_non_dynamically_quantizable_linear_under_torchs_name():
    """With `torch` bound to minigrad, word_language_model's import and its safe_globals line work."""
    import subprocess
    import sys

    code = ("import sys, minigrad; sys.modules['torch'] = minigrad\n"
            "import torch\n"
            "from torch.nn.modules.linear import NonDynamicallyQuantizableLinear\n"
            "import torch.nn.modules.linear as linear_module\n"
            "assert linear_module.NonDynamicallyQuantizableLinear is NonDynamicallyQuantizableLinear\n"
            "with torch.serialization.safe_globals([torch.nn.modules.linear.NonDynamicallyQuantizableLinear]):\n"
            "    pass\n"
            "print(NonDynamicallyQuantizableLinear.__mro__[1].__name__)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Linear"


@by_name
def test_get_clones_makes_separate_equal_copies(lib):
    from importlib import import_module

    get_clones = import_module(f"{lib.__name__}.nn.modules.transformer")._get_clones
    layer = lib.nn.Linear(4, 4)
    clones = get_clones(layer, 3)
    assert type(clones) is lib.nn.ModuleList and len(clones) == 3
    assert clones[0].weight is not clones[1].weight and clones[0].weight is not layer.weight
    for clone in clones:
        np.testing.assert_array_equal(as_array(clone.weight), as_array(layer.weight))


@by_name
def test_loss_base_classes_as_pytorch_code_subclasses_them(lib):
    from importlib import import_module

    loss_module = import_module(f"{lib.__name__}.nn.modules.loss")

    class SquaredError(loss_module._Loss):  # the way libraries write their own losses on PyTorch
        def forward(self, input, target):
            error = (input - target) ** 2
            return error.mean() if self.reduction == "mean" else error.sum() if self.reduction == "sum" else error

    assert issubclass(lib.nn.MSELoss, loss_module._Loss) and issubclass(lib.nn.CrossEntropyLoss, loss_module._WeightedLoss)
    x, y = lib.tensor([1.0, 2.0, 4.0]), lib.tensor([0.0, 0.0, 0.0])
    assert SquaredError().reduction == "mean" and SquaredError()(x, y).item() == 7.0
    assert SquaredError(reduction="none")(x, y).tolist() == [1.0, 4.0, 16.0]
    # PyTorch's legacy flags: mapped to a reduction, with its deprecation warning
    for flags, reduction in (({"size_average": False}, "sum"), ({"reduce": False}, "none"),
                             ({"size_average": True, "reduce": True}, "mean")):
        with pytest.warns(UserWarning, match=f"size_average and reduce args will be deprecated.*'{reduction}'"):
            assert SquaredError(**flags).reduction == reduction
    weighted = loss_module._WeightedLoss(weight=lib.tensor([1.0, 2.0]))
    assert list(weighted.state_dict()) == ["weight"] and weighted.reduction == "mean"
    assert loss_module._WeightedLoss().weight is None


# ---- pad_sequence --------------------------------------------------------------------------------------
def sequences(lib, dtype="float32"):
    rng = np.random.default_rng(0)
    return [lib.from_numpy(rng.standard_normal((n, 3)).astype(dtype)) for n in (2, 5, 1)]


@needs_torch
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence_matches_pytorch(batch_first, side):
    results = []
    for lib in (mg, torch):
        pad_sequence = lib.nn.utils.rnn.pad_sequence
        out = pad_sequence(sequences(lib), batch_first=batch_first, padding_value=-7.0, padding_side=side)
        results.append(as_array(out))
    assert results[0].shape == ((3, 5, 3) if batch_first else (5, 3, 3))
    np.testing.assert_array_equal(*results)


@by_name
def test_pad_sequence_by_hand_and_its_errors(lib):
    from importlib import import_module

    pad_sequence = import_module(f"{lib.__name__}.nn.utils.rnn").pad_sequence
    ids = pad_sequence([lib.tensor([1, 2, 3]), lib.tensor([4])], batch_first=True, padding_value=0)
    assert ids.tolist() == [[1, 2, 3], [4, 0, 0]] and ids.dtype == lib.int64
    left = pad_sequence([lib.tensor([1, 2, 3]), lib.tensor([4])], batch_first=True, padding_side="left")
    assert left.tolist() == [[1, 2, 3], [0, 0, 4]]
    assert pad_sequence([lib.tensor([1.0]), lib.tensor([2.0, 3.0])]).tolist() == [[1.0, 2.0], [0.0, 3.0]]
    assert tuple(pad_sequence(lib.ones(2, 3)).shape) == (3, 2)  # a tensor: its rows are the sequences
    with pytest.raises(RuntimeError, match="empty list of sequences"):
        pad_sequence([])
    with pytest.raises(RuntimeError):
        pad_sequence([lib.ones(2, 3), lib.ones(2, 4)])
    with pytest.raises((RuntimeError, ValueError), match="padding_side to be one of left or right"):
        pad_sequence([lib.ones(2)], padding_side="middle")


def test_pad_sequence_gradient_by_finite_differences():
    a, b = (mg.tensor(np.random.default_rng(s).standard_normal(shape), requires_grad=True)
            for s, shape in ((0, (2, 3)), (1, (4, 3))))
    weights = mg.tensor(np.random.default_rng(2).standard_normal((4, 2, 3)))  # a random upstream gradient
    assert mg.gradcheck(lambda x, y: mg.nn.utils.rnn.pad_sequence([x, y], padding_value=0.5) * weights, [a, b])
    assert mg.gradcheck(lambda x, y: mg.nn.utils.rnn.pad_sequence([x, y], True, 0.0, "left").sum(dim=1), [a, b])


# ---- torch.utils.checkpoint ----------------------------------------------------------------------------
@by_name
def test_checkpoint_gives_the_values_and_gradients_of_the_plain_call(lib):
    from importlib import import_module

    ckpt = import_module(f"{lib.__name__}.utils.checkpoint")
    lib.manual_seed(0)
    block = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.GELU(), lib.nn.Linear(4, 3))
    x_values = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    runs = []
    for how in ("plain", "reentrant", "non-reentrant", "sequential"):
        block.zero_grad()
        x = lib.from_numpy(x_values.copy()).requires_grad_()
        if how == "plain":
            y = block(x)
        elif how == "sequential":
            y = ckpt.checkpoint_sequential(block, 2, x, use_reentrant=False)
        else:
            y = ckpt.checkpoint(block, x, use_reentrant=how == "reentrant")
        (y * y).sum().backward()
        runs.append([as_array(y), as_array(x.grad)] + [as_array(p.grad) for p in block.parameters()])
    for run in runs[1:]:
        for a, b in zip(runs[0], run):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    # keywords reach the function in the non-reentrant form only, as in PyTorch
    scale = lambda t, factor=1.0: t * factor  # noqa: E731
    assert ckpt.checkpoint(scale, lib.ones(2), use_reentrant=False, factor=3.0).tolist() == [3.0, 3.0]
    with pytest.raises(ValueError, match="Unexpected keyword arguments: factor"):
        ckpt.checkpoint(scale, lib.ones(2), use_reentrant=True, factor=3.0)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        ckpt.checkpoint(scale, lib.ones(2, requires_grad=True))  # (an input without grad: PyTorch warns again)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ckpt.checkpoint(scale, lib.ones(2), use_reentrant=False)


# ---- x.type() -----------------------------------------------------------------------------------------
@by_name
def test_type_names_and_conversions_are_pytorchs(lib):
    names = {lib.float32: "torch.FloatTensor", lib.float64: "torch.DoubleTensor", lib.float16: "torch.HalfTensor",
             lib.int64: "torch.LongTensor", lib.int32: "torch.IntTensor", lib.uint8: "torch.ByteTensor",
             lib.bool: "torch.BoolTensor"}
    for dtype, name in names.items():
        assert lib.zeros(2, dtype=dtype).type() == name
    x = lib.tensor([1.5, 2.5])
    assert x.type(lib.float64).dtype == lib.float64
    assert x.type(lib.DoubleTensor).dtype == lib.float64
    assert x.type("torch.LongTensor").dtype == lib.int64 and x.type("torch.LongTensor").tolist() == [1, 2]
    assert x.type(lib.FloatTensor) is x  # already that type: the tensor itself


def test_deepcopy_of_a_module_made_of_the_new_names():
    model = mg.nn.Sequential(mg.nn.modules.linear.NonDynamicallyQuantizableLinear(2, 2), mg.nn.LazyLinear(3))
    twin = copy.deepcopy(model)
    assert type(twin[0]).__name__ == "NonDynamicallyQuantizableLinear"
    assert twin[0].weight is not model[0].weight
