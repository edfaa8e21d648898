"""nn.LazyLinear and UninitializedParameter as PyTorch has them (minigrad/nn/lazy.py, nn/parameter.py).

Each behaviour is written once against `lib` and runs on minigrad and, where installed, on PyTorch:
the uninitialized state, the first forward (in_features inferred, Linear's initialisation, the module
becoming a plain Linear), state_dict and load_state_dict before and after, and what an optimizer and
clip_grad_norm_ do with a parameter that has no shape yet.
"""
import copy
import math

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


@by_name
def test_before_the_first_forward_the_parameters_have_no_shape(lib):
    layer = lib.nn.LazyLinear(3)
    assert type(layer) is lib.nn.LazyLinear and layer.in_features == 0 and layer.out_features == 3
    assert isinstance(layer, lib.nn.modules.lazy.LazyModuleMixin) and layer.has_uninitialized_params()
    assert lib.nn.parameter.is_lazy(layer.weight) and not lib.nn.parameter.is_lazy(lib.nn.Linear(2, 2).weight)
    assert repr(layer) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    for p in (layer.weight, layer.bias):
        assert type(p) is lib.nn.parameter.UninitializedParameter and isinstance(p, lib.nn.Parameter)
        assert repr(p) == "<UninitializedParameter>" and p.requires_grad and p.grad is None
        assert p.dtype == lib.float32
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        layer.weight.shape
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
        sum(p.numel() for p in layer.parameters())
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
        layer.weight + 1
    assert lib.nn.LazyLinear(3, bias=False).bias is None
    assert type(copy.deepcopy(layer).weight) is lib.nn.parameter.UninitializedParameter


@by_name
def test_the_first_forward_infers_in_features_and_the_module_becomes_a_linear(lib):
    layer = lib.nn.LazyLinear(3)
    weight_object = layer.weight
    x = lib.from_numpy(np.random.default_rng(0).standard_normal((2, 4, 5)).astype(np.float32))
    y = layer(x)
    assert type(layer) is lib.nn.Linear and not isinstance(layer, lib.nn.LazyLinear)
    assert layer.in_features == 5 and tuple(layer.weight.shape) == (3, 5) and tuple(layer.bias.shape) == (3,)
    assert layer.weight is weight_object and type(layer.weight) is lib.nn.Parameter  # the same object, now plain
    assert not lib.nn.parameter.is_lazy(layer.weight)
    assert repr(layer) == "Linear(in_features=5, out_features=3, bias=True)"
    expected = as_array(x) @ as_array(layer.weight).T + as_array(layer.bias)
    np.testing.assert_allclose(as_array(y), expected, rtol=1e-6, atol=1e-6)
    # initialised as Linear's reset_parameters: U(-1/sqrt(in), 1/sqrt(in)), not the empty array's leftovers
    bound = 1 / math.sqrt(5)
    for p in (layer.weight, layer.bias):
        assert np.all(np.abs(as_array(p)) <= bound) and np.std(as_array(p)) > 0.1 * bound
    layer(lib.from_numpy(np.ones((1, 5), dtype=np.float32)))  # later calls: an ordinary Linear


def test_lazy_initialisation_draws_what_linear_draws():
    """The same seed gives the same weights as a Linear made with the inferred size."""
    mg.manual_seed(7)
    eager = mg.nn.Linear(6, 4)
    mg.manual_seed(7)
    lazy = mg.nn.LazyLinear(4)
    lazy(mg.zeros(2, 6))
    np.testing.assert_array_equal(as_array(lazy.weight), as_array(eager.weight))
    np.testing.assert_array_equal(as_array(lazy.bias), as_array(eager.bias))


@by_name
def test_state_dict_before_and_after(lib):
    lazy = lib.nn.LazyLinear(3)
    state = lazy.state_dict()
    assert list(state) == ["weight", "bias"]
    assert all(type(v) is lib.nn.parameter.UninitializedParameter for v in state.values())
    # an initialized module's state dict into a lazy one: it takes the shapes and values (still lazy
    # until its forward, which keeps them)
    trained = lib.nn.Linear(5, 3)
    fresh = lib.nn.LazyLinear(3)
    result = fresh.load_state_dict(trained.state_dict())
    assert list(result.missing_keys) == [] and list(result.unexpected_keys) == []
    assert type(fresh) is lib.nn.LazyLinear and not fresh.has_uninitialized_params()
    np.testing.assert_array_equal(as_array(fresh.weight), as_array(trained.weight))
    x = lib.from_numpy(np.ones((2, 5), dtype=np.float32))
    np.testing.assert_array_equal(as_array(fresh(x)), as_array(trained(x)))
    assert type(fresh) is lib.nn.Linear and fresh.in_features == 5
    # a lazy state dict into an initialized module: PyTorch's error, and the module unchanged
    before = as_array(trained.weight).copy()
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        trained.load_state_dict(lib.nn.LazyLinear(3).state_dict())
    np.testing.assert_array_equal(as_array(trained.weight), before)
    # lazy into lazy: both stay uninitialized
    other = lib.nn.LazyLinear(3)
    other.load_state_dict(lib.nn.LazyLinear(3).state_dict())
    assert other.has_uninitialized_params()
    # a missing key is reported as for any module
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "bias"'):
        lib.nn.LazyLinear(2).load_state_dict({"weight": lib.zeros(2, 3)})


@by_name
def test_optimizer_and_clip_grad_norm_before_and_after_the_first_forward(lib):
    model = lib.nn.Sequential(lib.nn.LazyLinear(8), lib.nn.ReLU(), lib.nn.LazyLinear(2))
    optimizer = lib.optim.AdamW(model.parameters(), lr=0.1)  # built before the shapes are known
    assert len(optimizer.param_groups[0]["params"]) == 4
    # nothing has a gradient yet: the norm is 0 and the step changes nothing
    assert float(lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)) == 0.0
    optimizer.step()
    assert model[0].has_uninitialized_params()
    x = lib.from_numpy(np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32))
    loss = (model(x) ** 2).sum()
    loss.backward()
    before = as_array(model[0].weight).copy()
    norm = lib.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    assert float(norm) > 0
    optimizer.step()
    assert not np.array_equal(as_array(model[0].weight), before)  # the optimizer updated the made parameter
    assert [type(m) for m in model] == [lib.nn.Linear, lib.nn.ReLU, lib.nn.Linear]
    assert (model[0].in_features, model[2].in_features) == (3, 8)


@by_name
def test_a_double_module_makes_double_parameters(lib):
    layer = lib.nn.LazyLinear(2).double()
    assert layer.weight.dtype == lib.float64
    layer(lib.zeros(1, 4, dtype=lib.float64))
    assert layer.weight.dtype == lib.float64 and tuple(layer.weight.shape) == (2, 4)


@needs_torch
def test_a_lazy_network_gives_pytorchs_outputs_and_gradients():
    """minigrad's lazy network, initialised by its first forward, loaded into PyTorch's lazy network
    (which takes the shapes from the state dict): the same outputs and gradients."""
    ours = mg.nn.Sequential(mg.nn.LazyLinear(8), mg.nn.ReLU(), mg.nn.LazyLinear(2))
    theirs = torch.nn.Sequential(torch.nn.LazyLinear(8), torch.nn.ReLU(), torch.nn.LazyLinear(2))
    x = np.random.default_rng(2).standard_normal((4, 3)).astype(np.float32)
    ours(mg.from_numpy(x))
    theirs.load_state_dict({k: torch.from_numpy(as_array(v).copy()) for k, v in ours.state_dict().items()})
    results = []
    for lib, model in ((mg, ours), (torch, theirs)):
        out = model(lib.from_numpy(x))
        (out ** 2).sum().backward()
        results.append([as_array(out)] + [as_array(p.grad) for p in model.parameters()])
    assert type(theirs[0]) is torch.nn.Linear
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# ---- the lazy norms, nn.Buffer and UninitializedBuffer (issue 39) ------------------------------------
LAZY_NORMS = [("LazyBatchNorm1d", (4, 3)), ("LazyBatchNorm1d", (4, 3, 5)), ("LazyBatchNorm2d", (2, 3, 4, 4)),
              ("LazyBatchNorm3d", (2, 3, 2, 2, 2)), ("LazyInstanceNorm1d", (2, 3, 5)),
              ("LazyInstanceNorm2d", (2, 3, 4, 4)), ("LazyInstanceNorm3d", (2, 3, 2, 2, 2))]


@by_name
@pytest.mark.parametrize("name, shape", LAZY_NORMS)
def test_a_lazy_norm_reads_its_channels_from_the_first_input_and_becomes_the_norm(lib, name, shape):
    layer = getattr(lib.nn, name)()
    assert layer.affine and layer.track_running_stats  # PyTorch's defaults for every lazy norm
    assert isinstance(layer.running_mean, lib.nn.parameter.UninitializedBuffer)
    assert isinstance(layer.weight, lib.nn.parameter.UninitializedParameter)
    assert lib.nn.parameter.is_lazy(layer.running_var)
    assert repr(layer).startswith(f"{name}(0, eps=1e-05, momentum=0.1, affine=True")
    assert list(layer.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    lib.manual_seed(0)
    x = lib.tensor(np.random.default_rng(0).standard_normal(shape))
    layer.double()
    y = layer(x)
    assert type(layer).__name__ == name.replace("Lazy", "") and layer.num_features == 3
    assert tuple(layer.weight.shape) == (3,) and tuple(layer.running_mean.shape) == (3,)
    # the reference: the plain norm, made with the channel count, on the same input
    plain = getattr(lib.nn, name.replace("Lazy", ""))(3, affine=True, track_running_stats=True).double()
    np.testing.assert_allclose(as_array(y), as_array(plain(x)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(as_array(layer.running_mean), as_array(plain.running_mean), rtol=1e-12, atol=1e-15)
    assert int(layer.num_batches_tracked) == int(plain.num_batches_tracked)


@by_name
def test_a_lazy_norm_without_affine_or_running_stats(lib):
    layer = lib.nn.LazyBatchNorm1d(affine=False, track_running_stats=False)
    assert layer.weight is None and layer.running_mean is None and list(layer.state_dict()) == []
    y = layer(lib.randn(4, 6))
    assert type(layer) is lib.nn.BatchNorm1d and tuple(y.shape) == (4, 6)


@by_name
def test_a_lazy_norm_loads_a_checkpoint_before_its_first_forward(lib):
    source = lib.nn.BatchNorm1d(5)
    with lib.no_grad():
        source.running_mean.copy_(lib.arange(5.0))
        source.weight.mul_(2.0)
    layer = lib.nn.LazyBatchNorm1d()
    layer.load_state_dict(source.state_dict())
    np.testing.assert_array_equal(as_array(layer.running_mean), np.arange(5.0))
    layer.eval()
    x = lib.randn(3, 5)
    np.testing.assert_allclose(as_array(layer(x)), as_array(source.eval()(x)), rtol=1e-6)


@by_name
def test_buffer_assigned_to_a_module_is_registered(lib):
    module = lib.nn.Module()
    module.mask = lib.nn.Buffer(lib.ones(2))
    module.scratch = lib.nn.Buffer(lib.zeros(3), persistent=False)
    assert isinstance(module.mask, lib.nn.Buffer) and not isinstance(lib.ones(2), lib.nn.Buffer)
    assert [name for name, _ in module.named_buffers()] == ["mask", "scratch"]
    assert list(module.state_dict()) == ["mask"]  # a non-persistent buffer stays out
    assert not module.mask.requires_grad and list(module.parameters()) == []
    assert tuple(lib.nn.Buffer().shape) == (0,)
    assert lib.nn.Buffer(lib.ones(2, requires_grad=True)).requires_grad  # as its tensor
    source = lib.ones(2)
    shared = lib.nn.Buffer(source)
    source.add_(1)  # the buffer shares its tensor's data
    np.testing.assert_array_equal(as_array(shared), [2.0, 2.0])


@by_name
def test_uninitialized_buffer_has_no_shape_until_materialized(lib):
    buffer = lib.nn.parameter.UninitializedBuffer(dtype=lib.float64)
    assert repr(buffer) == "<UninitializedBuffer>" and buffer.dtype == lib.float64
    with pytest.raises(RuntimeError, match="uninitialized parameter or buffer"):
        buffer.shape
    buffer.materialize((2, 3))
    assert tuple(buffer.shape) == (2, 3) and not lib.nn.parameter.is_lazy(buffer)
    if lib is mg:  # (PyTorch's UninitializedBuffer cannot be deep-copied: "Attempted to use an uninitialized ...")
        assert lib.nn.parameter.is_lazy(copy.deepcopy(lib.nn.parameter.UninitializedBuffer()))
