"""The habits people bring from PyTorch, on the Tensor and the ops (issue 21): f-strings of a loss,
narrow, grouped-query attention, pin_memory, and the messages of cat/stack, view and
load_state_dict, and graph node names.

Each behaviour is checked against values worked out by hand (or finite differences), and, where
PyTorch is installed, the same source also runs with lib = torch.
"""
import re

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn

try:
    import torch
except ImportError:
    torch = None


# ---- format ----------------------------------------------------------------------------------
def test_a_zero_dim_tensor_formats_as_its_number(lib):
    loss = lib.tensor(1.23456, dtype=lib.float64)
    assert f"{loss:.4f}" == "1.2346" and f"step 3: loss {loss:8.2f}" == "step 3: loss     1.23"
    assert f"{lib.tensor(7):d}" == "7" and f"{lib.tensor(7):.1f}" == "7.0"
    assert f"{loss}" == "1.23456" and format(loss, "") == "1.23456"  # its number, not str(loss)


def test_a_format_spec_on_a_tensor_with_dims_is_a_type_error(lib):
    assert f"{lib.tensor([1.5, 2.0])}" == str(lib.tensor([1.5, 2.0]))  # no spec: str(t)
    for t in (lib.tensor([1.5, 2.0]), lib.tensor([1.5])):  # one element with a dim too, as PyTorch
        with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
            f"{t:.2f}"


# ---- narrow ----------------------------------------------------------------------------------
def test_narrow_selects_a_range_along_a_dim_as_a_view(lib):
    x = lib.arange(12.0).reshape(3, 4)
    assert x.narrow(1, 1, 2).tolist() == [[1.0, 2.0], [5.0, 6.0], [9.0, 10.0]]
    assert lib.narrow(x, 0, -1, 1).tolist() == [[8.0, 9.0, 10.0, 11.0]]  # a negative start counts from the end
    assert x.narrow(0, lib.tensor(1), 2).shape == (2, 4)  # start may be a tensor
    assert tuple(x.narrow(0, 3, 0).shape) == (0, 4)
    x.narrow(1, 3, 1).mul_(-1.0)  # a view: the change reaches x
    assert x[:, 3].tolist() == [-3.0, -7.0, -11.0]


@pytest.mark.parametrize("call, error, words", [
    (lambda x: x.narrow(1, 3, 2), RuntimeError, r"start \(3\) \+ length \(2\) exceeds dimension size \(4\)"),
    (lambda x: x.narrow(2, 0, 1), IndexError, "out of range"),
    (lambda x: x.narrow(0, -4, 1), IndexError, "start out of range"),
    (lambda x: x.narrow(0, 0, -1), RuntimeError, "length must be non-negative"),
    (lambda x: x.narrow(0, 1.0, 1), TypeError, "narrow"),
    (lambda x: x[0, 0].narrow(0, 0, 1), RuntimeError, "narrow\\(\\) cannot be applied to a 0-dim tensor"),
])
def test_narrow_refuses_what_pytorch_refuses(lib, call, error, words):
    with pytest.raises(error, match=words):
        call(lib.arange(12.0).reshape(3, 4))


def test_narrow_gradient():
    x = mg.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    (x.narrow(1, 1, 2) * mg.tensor([[1.0, 2.0]], dtype=mg.float64)).sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 2.0, 0.0]] * 3
    assert mg.gradcheck(lambda t: mg.narrow(t, 0, 1, 2), [mg.randn(3, 4, dtype=mg.float64, requires_grad=True)])


# ---- grouped-query attention ------------------------------------------------------------------
def _attention_by_hand(q, k, v, causal):
    """softmax(q k^T / sqrt(d)) v per query head, query head h using kv head h // (H_q / H_kv)."""
    heads, kv_heads = q.shape[1], k.shape[1]
    out = np.zeros(q.shape[:3] + (v.shape[-1],))
    for b in range(q.shape[0]):
        for h in range(heads):
            g = h // (heads // kv_heads)
            scores = q[b, h] @ k[b, g].T / np.sqrt(q.shape[-1])
            if causal:
                scores = np.where(np.tri(*scores.shape, dtype=bool), scores, -np.inf)
            weights = np.exp(scores - scores.max(-1, keepdims=True))
            out[b, h] = weights / weights.sum(-1, keepdims=True) @ v[b, g]
    return out


@pytest.mark.parametrize("kv_heads", [1, 2, 4])
@pytest.mark.parametrize("causal", [False, True])
def test_gqa_shares_each_key_value_head_with_its_group_of_query_heads(lib, kv_heads, causal):
    rng = np.random.default_rng(kv_heads)
    q, k, v = (rng.standard_normal(s) for s in [(2, 4, 3, 5), (2, kv_heads, 3, 5), (2, kv_heads, 3, 6)])
    out = F.scaled_dot_product_attention if lib is mg else torch.nn.functional.scaled_dot_product_attention
    got = out(lib.tensor(q), lib.tensor(k), lib.tensor(v), is_causal=causal, enable_gqa=True)
    np.testing.assert_allclose(got.numpy(), _attention_by_hand(q, k, v, causal), rtol=1e-12, atol=1e-14)


def test_gqa_gradients_by_finite_differences():
    rng = np.random.default_rng(3)
    q, k, v = (mg.tensor(rng.standard_normal(s), requires_grad=True) for s in [(1, 4, 3, 2), (1, 2, 3, 2), (1, 2, 3, 2)])
    assert mg.gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True), [q, k, v])


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
def test_gqa_gradients_match_pytorch():
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(s) for s in [(2, 6, 4, 3), (2, 3, 4, 3), (2, 3, 4, 3)]]
    upstream = rng.standard_normal((2, 6, 4, 3))
    grads = []
    for lib_, sdpa in ((mg, F.scaled_dot_product_attention), (torch, torch.nn.functional.scaled_dot_product_attention)):
        inputs = [lib_.tensor(a, requires_grad=True) for a in arrays]
        (sdpa(*inputs, is_causal=True, enable_gqa=True) * lib_.tensor(upstream)).sum().backward()
        grads.append([t.grad.numpy() for t in inputs])
    for got, want in zip(*grads):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_gqa_errors(lib):
    sdpa = F.scaled_dot_product_attention if lib is mg else torch.nn.functional.scaled_dot_product_attention
    q, kv = lib.zeros(2, 4, 3, 5), lib.zeros(2, 3, 3, 5)
    with pytest.raises(RuntimeError, match="Number of heads in key and value must divide the number of heads in"):
        sdpa(q, kv, kv, enable_gqa=True)
    with pytest.raises(RuntimeError):  # fewer kv heads without enable_gqa: the batch dims do not broadcast
        sdpa(q, lib.zeros(2, 2, 3, 5), lib.zeros(2, 2, 3, 5))


def test_without_gqa_minigrad_says_how_to_share_heads():
    q, kv = mg.zeros(2, 4, 3, 5), mg.zeros(2, 2, 3, 5)
    with pytest.raises(RuntimeError, match=re.escape("pass enable_gqa=True")):
        F.scaled_dot_product_attention(q, kv, kv)


# ---- pin_memory ------------------------------------------------------------------------------
def test_pin_memory_is_refused_as_on_a_cpu_only_pytorch(lib):
    t = lib.ones(2)
    assert t.is_pinned() is False
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
        t.pin_memory()


# ---- sequences of tensors ----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["cat", "stack"])
def test_cat_and_stack_of_one_tensor_are_type_errors(lib, name):
    x = lib.ones(2, 3)
    with pytest.raises(TypeError, match=rf"{name}\(\): argument 'tensors' \(position 1\) must be tuple of Tensors, not Tensor"):
        getattr(lib, name)(x)
    with pytest.raises(TypeError, match="must be tuple of Tensors, not list_iterator"):
        getattr(lib, name)(iter([x, x]))
    assert tuple(getattr(lib, name)((x, x)).shape) == ((4, 3) if name == "cat" else (2, 2, 3))


# ---- view and its neighbours name themselves ----------------------------------------------------
@pytest.mark.parametrize("call, name", [
    (lambda x: x.view(5), "view"), (lambda x: x.view_as(mg.ones(5)), "view_as"),
    (lambda x: x.reshape(5), "reshape"), (lambda x: x.reshape_as(mg.ones(5)), "reshape_as"),
    (lambda x: x.expand(3, 4), "expand"), (lambda x: x.permute(0, 0), "permute"),
    (lambda x: x.transpose(0, 2), "transpose"),
])
def test_shape_errors_name_the_op_that_was_called(call, name):
    with pytest.raises((RuntimeError, IndexError), match=rf"^{name}: "):  # IndexError for a dim, as PyTorch
        call(mg.ones(2, 3))


def test_view_of_a_transposed_tensor_is_refused_as_pytorch(lib):
    x = lib.arange(6.0).reshape(2, 3)
    with pytest.raises(RuntimeError, match=r"view size is not compatible with input tensor's size and stride.*\.reshape"):
        x.t().view(-1)
    assert x.t().reshape(-1).tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    assert x.t().unsqueeze(0).view(3, 2).tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]  # a real view works


# ---- load_state_dict ----------------------------------------------------------------------------
def test_load_state_dict_words_its_errors_as_pytorch_and_loads_nothing(lib):
    model = lib.nn.Linear(3, 2)
    before = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    state = {"weight": lib.zeros(3, 2), "extra": lib.zeros(1)}
    with pytest.raises(RuntimeError) as error:
        model.load_state_dict(state)
    message = str(error.value)
    assert message.startswith(
        "Error(s) in loading state_dict for Linear:\n"
        '\tMissing key(s) in state_dict: "bias". \n'
        '\tUnexpected key(s) in state_dict: "extra". \n'
        "\tsize mismatch for weight: copying a param with shape "
    )
    assert "from checkpoint, the shape in current model is" in message
    assert type(error.value) is RuntimeError
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k])


def test_load_state_dict_not_strict_returns_the_keys_and_still_refuses_a_size_mismatch(lib):
    model = lib.nn.Linear(3, 2)
    result = model.load_state_dict({"weight": lib.ones(2, 3), "extra": lib.zeros(1)}, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["extra"]
    assert tuple(result) == (["bias"], ["extra"])
    assert model.weight.detach().numpy().tolist() == [[1.0] * 3] * 2
    assert repr(model.load_state_dict(model.state_dict())) == "<All keys matched successfully>"
    with pytest.raises(RuntimeError, match="size mismatch for bias"):
        model.load_state_dict({"bias": lib.ones(3)}, strict=False)


# ---- graph node names --------------------------------------------------------------------------
NODE_NAMES = {
    "exp": (lambda lib, x, w: x.exp(), "ExpBackward0"),
    "add": (lambda lib, x, w: x + w, "AddBackward0"),
    "mul": (lambda lib, x, w: x * w, "MulBackward0"),
    "mm": (lambda lib, x, w: x @ w.t(), "MmBackward0"),
    "relu": (lambda lib, x, w: x.relu(), "ReluBackward0"),
    "softmax": (lambda lib, x, w: x.softmax(-1), "SoftmaxBackward0"),
    "view": (lambda lib, x, w: x.view(-1), "ViewBackward0"),
    "transpose": (lambda lib, x, w: x.transpose(0, 1), "TransposeBackward0"),
    "cat": (lambda lib, x, w: lib.cat([x, w]), "CatBackward0"),
    "mean": (lambda lib, x, w: x.mean(), "MeanBackward0"),
    "sum": (lambda lib, x, w: x.sum(), "SumBackward0"),
    "pow": (lambda lib, x, w: x ** 2, "PowBackward0"),
    "gelu": (lambda lib, x, w: lib.nn.functional.gelu(x), "GeluBackward0"),
    "layer_norm": (lambda lib, x, w: lib.nn.functional.layer_norm(x, (3,)), "NativeLayerNormBackward0"),
    "cross_entropy": (lambda lib, x, w: lib.nn.functional.cross_entropy(x, lib.tensor([0, 2])), "NllLossBackward0"),
}


@pytest.mark.parametrize("case", sorted(NODE_NAMES))
def test_node_names_are_pytorchs(lib, case):
    fn, name = NODE_NAMES[case]
    x = lib.tensor([[1.0, -2.0, 3.0], [0.5, 1.5, -1.0]], requires_grad=True)
    w = lib.tensor([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], requires_grad=True)
    node = fn(lib, x, w).grad_fn
    assert type(node).__name__ == name and node.name() == name
    assert re.fullmatch(rf"<{name} object at 0x[0-9a-f]+>", repr(node))


class Cube:
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):  # d(x^3)/dx = 3 x^2
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * grad


def test_a_custom_functions_node_is_named_as_in_pytorch(lib):
    cube = type("Cube", (lib.autograd.Function,), dict(vars(Cube)))
    x = lib.tensor([2.0], requires_grad=True)
    y = cube.apply(x)
    assert type(y.grad_fn).__name__ == "CubeBackward" and y.grad_fn.name() == "CubeBackward"
    package = lib.__name__
    assert re.fullmatch(rf"<{package}\.autograd\.function\.CubeBackward object at 0x[0-9a-f]+>", repr(y.grad_fn))
    assert repr(y).endswith("grad_fn=<CubeBackward>)")
    y.backward()
    assert x.grad.tolist() == [12.0]


def test_the_tensor_repr_names_its_node_as_pytorch():
    x = mg.tensor([0.0], requires_grad=True)
    assert repr(x.exp()) == "tensor([1.], grad_fn=<ExpBackward0>)"


def test_minigrads_own_pictures_keep_the_short_op_names():
    pytest.importorskip("graphviz")  # the Python package (the `test` extra); the program dot is not needed
    from minigrad import viz

    x = mg.randn(2, 3, requires_grad=True)
    y = (x.exp() @ mg.randn(3, 2)).relu()
    assert [y.grad_fn.op_name, y.grad_fn.name()] == ["ReLU", "ReluBackward0"]
    source = viz.draw_graph(y).source
    assert "ReLU" in source and "MatMul" in source and "Exp" in source and "Backward0" not in source


def test_in_place_augmented_assignment_in_a_module_training_loop():
    """A hand-written SGD step as PyTorch code writes it, over a module's parameters."""
    mg.manual_seed(0)
    model = nn.Linear(3, 1)
    params = list(model.parameters())
    x, target = mg.randn(8, 3), mg.randn(8, 1)
    first = None
    for _ in range(50):
        loss = F.mse_loss(model(x), target)
        first = loss.item() if first is None else first
        model.zero_grad()
        loss.backward()
        with mg.no_grad():
            for p in model.parameters():
                p -= 0.1 * p.grad
    assert [p is q for p, q in zip(model.parameters(), params)] == [True, True]
    assert all(p.is_leaf and p.requires_grad for p in params)
    assert loss.item() < first


def test_size_builds_and_compares_shapes_as_torch_size():
    x = mg.zeros(2, 3)
    assert x.shape == mg.Size([2, 3]) and x.size() == mg.Size((2, 3)) and x.shape != mg.Size([3, 2])
    assert mg.Size([2, 3, 4]).numel() == 24 and mg.Size([]).numel() == 1
    assert isinstance(mg.Size([1]), tuple) and repr(mg.Size([2, 3])) == "torch.Size([2, 3])"
    with pytest.raises(TypeError, match="Size: every size must be an int, got 2.5"):
        mg.Size([2.5])


def test_dim_moving_names_by_hand_and_their_gradient():
    x = mg.arange(24.0).reshape(2, 3, 4)
    assert x.movedim(0, -1).shape == (3, 4, 2) and x.movedim([0, 1], [2, 0]).shape == (3, 4, 2)
    assert x.movedim(-1, 0)[1, 1, 0].item() == x[1, 0, 1].item() == 13.0
    assert x.swapaxes(0, 2).shape == (4, 3, 2) and x.swapdims(1, 2)[0, 3, 1].item() == 7.0
    assert x.select(1, 2).tolist() == x[:, 2].tolist() and x.select(-1, 0).tolist() == [[0, 4, 8], [12, 16, 20]]
    assert x.unflatten(2, (2, -1)).shape == (2, 3, 2, 2) and x.unflatten(-1, (2, 2))[1, 2, 1, 0].item() == 22.0
    with pytest.raises(ValueError, match="movedim: repeated dim"):
        x.movedim([0, 0], [1, 2])
    w = mg.tensor(np.random.default_rng(0).standard_normal((2, 3, 4)), requires_grad=True)
    assert mg.gradcheck(lambda t: t.movedim([0, 2], [2, 0]).select(1, 1).unflatten(0, (2, 2)), (w,))


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed (the comparison needs it)")
def test_dim_moving_names_as_pytorch():
    data = np.arange(24.0).reshape(2, 3, 4)
    for call in (lambda t: t.movedim([0, 1], [2, 0]), lambda t: t.moveaxis(-1, 0), lambda t: t.swapaxes(0, 2),
                 lambda t: t.select(-2, 1), lambda t: t.unflatten(1, (3, 1))):
        assert np.array_equal(call(mg.tensor(data)).numpy(), call(torch.tensor(data)).numpy())


def test_variable_is_a_detached_tensor_as_in_old_pytorch_code():
    from minigrad.autograd import Variable
    x = mg.ones(2)
    v = Variable(x, requires_grad=True)
    assert v is not x and v.requires_grad and not x.requires_grad and v.is_leaf
    assert isinstance(x, Variable) and isinstance(v, mg.Tensor) and not isinstance(3, Variable)
    v.data.add_(1)  # the same storage, as PyTorch's
    assert x.tolist() == [2.0, 2.0]
    with pytest.raises(TypeError, match="Variable: data must be a Tensor"):
        Variable([1.0])
