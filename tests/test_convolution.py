"""F.conv1d/2d/3d, F.conv_transpose1d/2d/3d, F.unfold and F.fold over their arguments: values and gradients
against PyTorch (where installed) and against plain NumPy loops, gradcheck and gradgradcheck in float64;
the layers (Conv*, ConvTranspose*, their lazy forms, Unfold, Fold) against PyTorch's, state dicts both ways."""
import itertools
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.composites import without_kernels
from minigrad.composites.convolution import conv as conv_composition
from conftest import torch

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed (the NumPy references still run)")


# The NumPy references: a loop over the output positions (or, transposed, over the input positions), each
# summing its window element by element, as the definitions read.


def test_torch_level_forms():
    x, w = mg.randn(2, 3, 5, 5, dtype=mg.float64), mg.randn(4, 3, 3, 3, dtype=mg.float64)
    np.testing.assert_array_equal(mg.conv2d(x, w, None, 1, 1).numpy(), mg.nn.functional.conv2d(x, w, padding=1).numpy())
    np.testing.assert_array_equal(mg.convolution(x, w, None, (1, 1), (1, 1), (1, 1), False, (0, 0), 1).numpy(),
                                  mg.nn.functional.conv2d(x, w, padding=1).numpy())
    wt = mg.randn(3, 2, 3, 3, dtype=mg.float64)
    np.testing.assert_array_equal(mg.convolution(x, wt, None, 2, 1, 1, True, 1, 1).numpy(),
                                  mg.nn.functional.conv_transpose2d(x, wt, None, 2, 1, 1).numpy())
    seq = mg.randn(7, 2, 3, dtype=mg.float64)  # conv_tbc: time-major (T, B, C_in), weight (k, C_in, C_out)
    wk = mg.randn(3, 3, 4, dtype=mg.float64)
    expected = mg.nn.functional.conv1d(seq.permute(1, 2, 0), wk.permute(2, 1, 0), mg.zeros(4, dtype=mg.float64),
                                       padding=1).permute(2, 0, 1)
    np.testing.assert_allclose(mg.conv_tbc(seq, wk, mg.zeros(4, dtype=mg.float64), 1).numpy(), expected.numpy())
    with pytest.raises(AssertionError, match="the batch"):
        mg._assert(False, "the batch")
    mg._assert(True, "never raised")


@needs_torch
def test_conv_tbc_matches_pytorch():
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((7, 2, 3)), rng.standard_normal((3, 3, 4)), rng.standard_normal(4)
    ours = mg.conv_tbc(mg.tensor(x), mg.tensor(w), mg.tensor(b), 1).numpy()
    np.testing.assert_allclose(ours, torch.conv_tbc(torch.tensor(x), torch.tensor(w), torch.tensor(b), 1).numpy())


@pytest.mark.parametrize("call, message", [
    (lambda: mg.nn.functional.conv2d(mg.randn(1, 3, 5, 5), mg.randn(4, 2, 3, 3)), r"conv2d: .*groups=1"),
    (lambda: mg.nn.functional.conv2d(mg.randn(1, 3, 2, 2), mg.randn(4, 3, 3, 3)), r"conv2d: .*smaller than the kernel"),
    (lambda: mg.nn.functional.conv2d(mg.randn(1, 3, 5, 5), mg.randn(4, 3, 3, 3), stride=2, padding="same"),
     r"conv2d: padding='same' is not supported for strided"),
    (lambda: mg.nn.functional.conv1d(mg.randn(1, 3, 5, 5), mg.randn(4, 3, 3)), r"conv1d: expected a 2-D .* or 3-D"),
    (lambda: mg.nn.functional.conv_transpose2d(mg.randn(1, 2, 3, 3), mg.randn(2, 2, 3, 3), stride=2, output_padding=2),
     r"conv_transpose2d: output_padding"),
    (lambda: mg.nn.functional.fold(mg.randn(1, 7, 4), (3, 3), 2), r"fold: the input's dim 1 \(7\) must be divisible"),
])
def test_bad_arguments_name_the_op_and_the_shapes(call, message):
    with pytest.raises((ValueError, mg.errors.ShapeError), match=message):
        call()


# The layers: parameter names, shapes and initialisation as PyTorch's, state dicts both ways.

LAYERS = [
    ("Conv1d", (4, 6, 3), dict(stride=2, padding=1, groups=2), (2, 4, 9)),
    ("Conv2d", (3, 8, 3), dict(padding=1), (2, 3, 7, 6)),
    ("Conv2d", (4, 4, (3, 2)), dict(padding="same", padding_mode="reflect", groups=2, bias=False), (2, 4, 6, 5)),
    ("Conv2d", (3, 2, 3), dict(padding=2, padding_mode="replicate", dilation=2), (1, 3, 6, 6)),
    ("Conv2d", (3, 2, 3), dict(padding=(1, 2), padding_mode="circular"), (1, 3, 5, 6)),
    ("Conv1d", (2, 3, 4), dict(padding="same", padding_mode="circular"), (2, 2, 7)),
    ("ConvTranspose1d", (4, 2, 3), dict(stride=2, padding=1, output_padding=1, groups=2), (2, 4, 5)),
    ("ConvTranspose2d", (3, 4, 3), dict(stride=2, padding=1, output_padding=1), (2, 3, 4, 4)),
    ("Conv3d", (2, 3, 2), dict(padding=1), (1, 2, 3, 3, 3)),
]


@pytest.mark.parametrize("name, args, kwargs, shape", LAYERS, ids=[f"{l[0]}-{i}" for i, l in enumerate(LAYERS)])
def test_layer_parameters_have_pytorchs_names_shapes_and_bounds(name, args, kwargs, shape):
    mg.manual_seed(0)
    layer = getattr(nn, name)(*args, **kwargs)
    in_channels, out_channels, kernel = args[0], args[1], args[2]
    kernel = (kernel,) * (len(shape) - 2) if isinstance(kernel, int) else kernel
    groups = kwargs.get("groups", 1)
    transposed = name.startswith("ConvTranspose")
    expected = ((in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)) + kernel
    assert tuple(layer.weight.shape) == expected
    assert list(layer.state_dict()) == (["weight", "bias"] if kwargs.get("bias", True) else ["weight"])
    bound = 1 / math.sqrt(expected[1] * int(np.prod(kernel)))  # kaiming_uniform_(a=sqrt(5)): U(-1/sqrt(fan_in), ...)
    weight = np.abs(layer.weight.detach().numpy())
    assert weight.max() <= bound and weight.max() > 0.5 * bound  # spread over the interval, not near 0
    if layer.bias is not None:
        assert tuple(layer.bias.shape) == (out_channels,) and np.abs(layer.bias.detach().numpy()).max() <= bound


@needs_torch
@pytest.mark.parametrize("name, args, kwargs, shape", LAYERS, ids=[f"{l[0]}-{i}" for i, l in enumerate(LAYERS)])
def test_layers_match_pytorch_with_state_dicts_both_ways(name, args, kwargs, shape):
    rng = np.random.default_rng(0)
    ours = getattr(nn, name)(*args, **kwargs, dtype=mg.float64)
    theirs = getattr(torch.nn, name)(*args, **kwargs, dtype=torch.float64)
    assert repr(ours) == repr(theirs)
    x = rng.standard_normal(shape)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})  # ours -> PyTorch
    np.testing.assert_allclose(ours(mg.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               atol=1e-12)
    theirs.reset_parameters()
    ours.load_state_dict({k: mg.tensor(v.numpy()) for k, v in theirs.state_dict().items()})  # PyTorch -> ours
    np.testing.assert_allclose(ours(mg.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               atol=1e-12)


@needs_torch
def test_conv_transpose_output_size_argument_matches_pytorch():
    ours, theirs = nn.ConvTranspose2d(2, 3, 3, stride=2, dtype=mg.float64), torch.nn.ConvTranspose2d(2, 3, 3, stride=2,
                                                                                                     dtype=torch.float64)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 4))
    for size in ((9, 9), (10, 10), (1, 3, 10, 9)):
        np.testing.assert_allclose(ours(mg.tensor(x), output_size=size).detach().numpy(),
                                   theirs(torch.tensor(x), output_size=size).detach().numpy(), atol=1e-12)
    with pytest.raises(ValueError, match="requested output size"):
        ours(mg.tensor(x), output_size=(12, 12))


def test_lazy_conv_reads_in_channels_and_becomes_the_plain_layer():
    layer = nn.LazyConv2d(5, 3, padding=1)
    assert isinstance(layer.weight, nn.UninitializedParameter)
    y = layer(mg.randn(2, 4, 6, 6))
    assert type(layer) is nn.Conv2d and tuple(layer.weight.shape) == (5, 4, 3, 3) and tuple(y.shape) == (2, 5, 6, 6)
    assert layer.in_channels == 4
    layer1 = nn.LazyConv1d(3, 2)
    layer1(mg.randn(4, 7))  # unbatched (C, L)
    assert tuple(layer1.weight.shape) == (3, 4, 2)
    transposed = nn.LazyConvTranspose2d(3, 2, stride=2)
    assert tuple(transposed(mg.randn(1, 4, 3, 3)).shape) == (1, 3, 6, 6)
    assert tuple(transposed.weight.shape) == (4, 3, 2, 2)


def test_unfold_and_fold_layers_are_the_functions():
    x = mg.randn(2, 3, 5, 6)
    cols = nn.Unfold((2, 3), padding=1)(x)
    np.testing.assert_array_equal(cols.numpy(), mg.nn.functional.unfold(x, (2, 3), padding=1).numpy())
    # fold(unfold(x)) multiplies each pixel by how many windows hold it: with a 1x1 kernel, exactly once
    np.testing.assert_allclose(nn.Fold((5, 6), 1)(nn.Unfold(1)(x)).numpy(), x.numpy())


def test_the_composition_reads_the_input_once_and_multiplies_once():
    """conv2d is an indexed read and a matrix product: its backward graph holds those nodes, nothing fused."""
    x = mg.randn(1, 2, 5, 5, requires_grad=True)
    w = mg.randn(3, 2, 3, 3, requires_grad=True)
    with without_kernels():  # (the kernel of im2col stands in for the read otherwise: tests/test_kernels.py)
        y = conv_composition(x, w, None, 1, 1, 1, 1, 2, "conv2d")
    names, stack, seen = set(), [y.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.add(type(node).__name__)
        stack.extend(fn for fn, _ in getattr(node, "next_functions", ()))
    assert any("Index" in n for n in names) and any("Mm" in n or "MatMul" in n or "Bmm" in n for n in names), names


@pytest.mark.parametrize("padding_mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv2d_layer_gradcheck_for_each_padding_mode(padding_mode):
    mg.manual_seed(0)
    layer = nn.Conv2d(2, 3, 3, padding=1, padding_mode=padding_mode, dtype=mg.float64)
    x = mg.randn(1, 2, 4, 5, dtype=mg.float64, requires_grad=True)
    assert mg.gradcheck(lambda x, w, b: nn.functional.conv2d(
        x if padding_mode == "zeros" else nn.functional.pad(x, (1, 1, 1, 1), mode=padding_mode), w, b,
        padding=1 if padding_mode == "zeros" else 0), [x, layer.weight, layer.bias])
    # the layer's own forward is that composition
    expected = nn.functional.conv2d(x if padding_mode == "zeros" else nn.functional.pad(x, (1, 1, 1, 1), mode=padding_mode),
                                    layer.weight, layer.bias, padding=1 if padding_mode == "zeros" else 0)
    np.testing.assert_array_equal(layer(x).detach().numpy(), expected.detach().numpy())


def test_nn_modules_utils_reads_sizes_as_pytorch():
    from minigrad.nn.modules.utils import _pair, _single, _triple
    assert _pair(3) == (3, 3) and _pair((1, 2)) == (1, 2) and _single(4) == (4,) and _triple(2) == (2, 2, 2)


@needs_torch
def test_batchnorm2d_and_groupnorm_in_a_cnn_match_pytorch():
    """The image norms that already were in minigrad, in a CNN: outputs, gradients and running statistics."""
    def build(lib):
        nn_ = lib.nn
        return nn_.Sequential(nn_.Conv2d(3, 8, 3, padding=1), nn_.BatchNorm2d(8), nn_.ReLU(), nn_.MaxPool2d(2),
                              nn_.Conv2d(8, 8, 3, padding=1, groups=2), nn_.GroupNorm(4, 8), nn_.ReLU(),
                              nn_.AdaptiveAvgPool2d(1), nn_.Flatten(), nn_.Linear(8, 5)).double()
    ours, theirs = build(mg), build(torch)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, 3, 8, 8))
    outputs = []
    for lib, model in ((mg, ours), (torch, theirs)):
        y = model(lib.tensor(x))
        (y * lib.tensor(np.arange(20.0).reshape(4, 5))).sum().backward()
        outputs.append((y.detach().numpy(), [p.grad.numpy() for p in model.parameters()],
                        model[1].running_var.numpy()))
    np.testing.assert_allclose(outputs[0][0], outputs[1][0], atol=1e-10)
    for a, b in zip(outputs[0][1], outputs[1][1]):
        np.testing.assert_allclose(a, b, atol=1e-9)
    np.testing.assert_allclose(outputs[0][2], outputs[1][2], atol=1e-12)
