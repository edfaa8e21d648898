"""nn.Module: registration by assignment, the parameter tree and its names, modes, state dicts.

The expected names, orders and behaviours are PyTorch's (written out by hand here, so the suite
needs no torch); a last test checks the names against torch.nn itself when it is installed.
"""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn


class Block(nn.Module):
    """A small module with a parameter, a persistent and a non-persistent buffer, and sub-modules."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(mg.ones(3))
        self.register_buffer("running", mg.zeros(3))
        self.register_buffer("scratch", mg.zeros(2), persistent=False)
        self.fc = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.head = nn.Sequential(nn.Linear(4, 2), nn.ReLU(), nn.Linear(2, 1))

    def forward(self, x):
        return self.head(self.act(self.fc(x * self.scale)))


class Tied(nn.Module):
    """An embedding and an output projection sharing one weight (weight tying)."""

    def __init__(self, vocab=5, d=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.proj = nn.Linear(d, vocab)
        self.proj.weight = self.embed.weight

    def forward(self, ids):
        return self.proj(self.embed(ids))


def arrays(module):
    """A deep copy of every array in the state dict (to compare before and after)."""
    return {k: v.detach().numpy().copy() for k, v in module.state_dict().items()}


# ---- registration ---------------------------------------------------------------------------------
def test_assignment_registers_parameters_buffers_and_submodules():
    m = Block()
    assert list(m._parameters) == ["scale"]
    assert list(m._buffers) == ["running", "scratch"]
    assert list(m._modules) == ["fc", "act", "head"]
    assert isinstance(m.scale, nn.Parameter) and m.scale.requires_grad
    assert m.fc.weight.shape == (4, 3)  # (out_features, in_features)
    # a plain tensor or number is an ordinary attribute, not state
    m.note = mg.zeros(2)
    m.count = 3
    assert "note" not in m._parameters and "note" not in m._buffers and "note" not in dict(m.named_parameters())
    assert "count" not in m.state_dict()


def test_reassignment_moves_between_registries_and_none_keeps_the_slot():
    m = nn.Linear(2, 2)
    m.bias = None  # PyTorch: the name stays registered with None, and is skipped everywhere
    assert "bias" in m._parameters and m.bias is None
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    assert list(m.state_dict()) == ["weight"]
    m.weight = nn.Parameter(mg.zeros(2, 2))
    assert np.all(m.weight.detach().numpy() == 0)
    m.extra = nn.ReLU()
    assert "extra" in m._modules
    del m.extra
    assert "extra" not in m._modules
    with pytest.raises(AttributeError):
        m.extra


def test_assigning_a_plain_value_over_registered_state_is_an_error():
    """As PyTorch: silently turning a parameter into a plain attribute would drop it from training."""
    m = Block()
    with pytest.raises(TypeError, match="Parameter"):
        m.scale = mg.ones(3)
    with pytest.raises(TypeError, match="Module"):
        m.fc = mg.ones(3)
    with pytest.raises(TypeError, match="Tensor"):
        m.running = 3.0
    assert [n for n, _ in m.named_parameters()][:3] == ["scale", "fc.weight", "fc.bias"]
    m.running = mg.ones(3)  # a buffer takes any tensor
    assert "running" in m.state_dict() and np.all(m.state_dict()["running"].detach().numpy() == 1)
    m.running = nn.Parameter(mg.zeros(3))  # a buffer turned parameter moves registry, as PyTorch
    assert "running" in m._parameters and "running" not in m._buffers
    assert [n for n, _ in m.named_buffers()] == ["scratch"]
    m.fc = None  # None keeps the slot, as PyTorch
    assert "fc" in m._modules and m.fc is None and "fc.weight" not in m.state_dict()


def test_assignment_before_super_init_is_a_clear_error():
    class Broken(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(mg.zeros(1))

    with pytest.raises(AttributeError, match="super"):
        Broken()


def test_named_parameters_have_pytorch_dotted_names_in_definition_order():
    m = Block()
    assert [n for n, _ in m.named_parameters()] == [
        "scale", "fc.weight", "fc.bias",
        "head.0.weight", "head.0.bias", "head.2.weight", "head.2.bias",
    ]
    assert [p.shape for p in m.parameters()] == [(3,), (4, 3), (4,), (2, 4), (2,), (1, 2), (1,)]
    assert [n for n, _ in m.named_parameters(prefix="model")][:2] == ["model.scale", "model.fc.weight"]
    assert [n for n, _ in m.named_parameters(recurse=False)] == ["scale"]
    assert [n for n, _ in m.named_buffers()] == ["running", "scratch"]


def test_modules_and_children():
    m = Block()
    assert [n for n, _ in m.named_children()] == ["fc", "act", "head"]
    assert list(m.children()) == [m.fc, m.act, m.head]
    names = [n for n, _ in m.named_modules()]
    assert names == ["", "fc", "act", "head", "head.0", "head.1", "head.2"]  # pre-order, self first
    assert list(m.modules())[0] is m


def test_a_shared_submodule_is_listed_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(seq.modules())) == 3
    assert len(list(seq.parameters())) == 2
    # ... but saved under each of its names, as PyTorch does, so a torch checkpoint of it loads
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert [n for n, _ in seq.named_parameters(remove_duplicate=False)] == list(seq.state_dict())
    other = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2))
    other.load_state_dict(seq.state_dict())
    np.testing.assert_array_equal(other[2].weight.detach().numpy(), lin.weight.detach().numpy())


# ---- weight tying -----------------------------------------------------------------------------------
def test_tied_weight_is_one_parameter_listed_once_but_saved_under_both_names():
    m = Tied()
    assert m.proj.weight is m.embed.weight
    names = [n for n, _ in m.named_parameters()]
    assert names == ["embed.weight", "proj.bias"]
    assert len(list(m.parameters())) == 2
    state = m.state_dict()
    assert list(state) == ["embed.weight", "proj.weight", "proj.bias"]
    assert np.shares_memory(state["embed.weight"].detach().numpy(), state["proj.weight"].detach().numpy())


def test_tied_weight_receives_the_sum_of_both_gradients():
    m = Tied().double()
    ids = mg.tensor([[0, 3, 3, 1]])
    m(ids).sum().backward()
    # by hand: out = E[ids] W^T + b with W = E, loss = sum(out)
    E = m.embed.weight.detach().numpy()
    onehot = np.eye(5)[ids.detach().numpy()[0]]  # (4, 5)
    grad_via_proj = np.ones((4, 5)).T @ (onehot @ E)  # dL/dW = g^T x
    grad_via_embed = onehot.T @ (np.ones((4, 5)) @ E)  # dL/dE[ids] = g W
    np.testing.assert_allclose(m.embed.weight.grad.numpy(), grad_via_proj + grad_via_embed, rtol=1e-12)


def test_tied_state_dict_round_trip():
    a, b = Tied(), Tied()
    b.load_state_dict(a.state_dict())
    assert b.proj.weight is b.embed.weight
    np.testing.assert_array_equal(b.embed.weight.detach().numpy(), a.embed.weight.detach().numpy())


# ---- modes and gradients ------------------------------------------------------------------------------
def test_train_and_eval_propagate_to_every_submodule():
    m = Block()
    assert all(sub.training for sub in m.modules())
    assert m.eval() is m
    assert not any(sub.training for sub in m.modules())
    m.train()
    assert all(sub.training for sub in m.modules())
    m.head.train(False)
    assert m.training and m.fc.training and not m.head.training and not m.head[0].training


def test_zero_grad_sets_grads_to_none():
    m = Block()
    m(mg.randn(5, 3)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())


def test_gradients_accumulate_until_zero_grad():
    m = nn.Linear(3, 2).double()
    x = mg.randn(4, 3, dtype=mg.float64)
    m(x).sum().backward()
    first = m.weight.grad.numpy().copy()
    m(x).sum().backward()
    np.testing.assert_allclose(m.weight.grad.numpy(), 2 * first)


# ---- state dicts ------------------------------------------------------------------------------------
def test_state_dict_holds_parameters_and_persistent_buffers_only():
    m = Block()
    state = m.state_dict()
    assert list(state) == [
        "scale", "running", "fc.weight", "fc.bias",
        "head.0.weight", "head.0.bias", "head.2.weight", "head.2.bias",
    ]
    assert "scratch" not in state  # persistent=False
    assert not any(v.requires_grad for v in state.values())  # detached, as in PyTorch
    assert np.shares_memory(state["fc.weight"].detach().numpy(), m.fc.weight.detach().numpy())


def test_load_state_dict_copies_values_in_place():
    a, b = Block(), Block()
    a.running.data[...] = [1.0, 2.0, 3.0]
    weight = b.fc.weight
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert b.fc.weight is weight  # the same Parameter object, new values
    for key, value in a.state_dict().items():
        np.testing.assert_array_equal(b.state_dict()[key].detach().numpy(), value.detach().numpy())
    # a copy, not shared memory: changing a afterwards does not change b
    a.fc.weight.data[...] = 7
    assert not np.any(b.fc.weight.detach().numpy() == 7)


def test_load_state_dict_accepts_numpy_arrays():
    m = nn.Linear(2, 3)
    m.load_state_dict({"weight": np.arange(6.0).reshape(3, 2), "bias": np.zeros(3)})
    np.testing.assert_array_equal(m.weight.detach().numpy(), np.arange(6.0).reshape(3, 2))
    assert m.weight.dtype == np.float32  # cast to the model's dtype


def test_strict_load_lists_every_problem_in_one_error_and_changes_nothing():
    m = Block()
    before = arrays(m)
    state = {k: v.detach().numpy().copy() + 1 for k, v in m.state_dict().items()}
    del state["fc.bias"]  # missing
    state["head.1.weight"] = np.zeros(2)  # unexpected
    state["head.0.weight"] = np.zeros((4, 2))  # wrong shape (model has (2, 4))
    with pytest.raises(Exception) as info:
        m.load_state_dict(state)
    message = str(info.value)
    assert "fc.bias" in message and "missing" in message
    assert "head.1.weight" in message and "unexpected" in message
    assert "head.0.weight" in message and "(4, 2)" in message and "(2, 4)" in message
    after = arrays(m)
    assert list(after) == list(before)
    for key in before:  # nothing was loaded, not even the entries that were fine
        np.testing.assert_array_equal(after[key], before[key])


def test_wrong_shape_fails_even_when_not_strict_and_changes_nothing():
    m = nn.Linear(2, 3)
    before = arrays(m)
    with pytest.raises(Exception, match="weight"):
        m.load_state_dict({"weight": np.zeros((2, 3)), "bias": np.ones(3)}, strict=False)
    for key, value in arrays(m).items():
        np.testing.assert_array_equal(value, before[key])


def test_non_strict_load_returns_missing_and_unexpected_keys():
    m = Block()
    state = {"fc.weight": np.full((4, 3), 0.5), "not.a.key": np.zeros(1)}
    before = arrays(m)
    missing, unexpected = m.load_state_dict(state, strict=False)
    assert unexpected == ["not.a.key"]
    assert sorted(missing) == sorted(k for k in before if k != "fc.weight")
    np.testing.assert_array_equal(m.fc.weight.detach().numpy(), 0.5)
    np.testing.assert_array_equal(m.fc.bias.detach().numpy(), before["fc.bias"])


# ---- printing, containers, dtype ------------------------------------------------------------------------
def test_repr_is_readable_and_nested():
    text = repr(Block())
    assert text.startswith("Block(")
    assert "(fc): Linear(in_features=3, out_features=4, bias=True)" in text
    assert "(act): ReLU()" in text
    assert "(head): Sequential(" in text and "(0): Linear(in_features=4, out_features=2, bias=True)" in text
    assert "\n    (2): Linear(in_features=2, out_features=1, bias=True)" in text  # nested indentation
    assert repr(nn.Embedding(10, 3, padding_idx=0)) == "Embedding(10, 3, padding_idx=0)"
    assert repr(nn.Dropout(0.25)) == "Dropout(p=0.25, inplace=False)"  # as PyTorch prints it


def test_sequential_calls_in_order_and_indexes():
    first, second = nn.Linear(3, 4), nn.Linear(4, 2)
    seq = nn.Sequential(first, nn.ReLU(), second)
    x = mg.randn(5, 3)
    expected = second(first(x).relu())
    np.testing.assert_allclose(seq(x).detach().numpy(), expected.detach().numpy(), rtol=1e-6)
    assert len(seq) == 3 and seq[0] is first and seq[-1] is second
    assert list(seq) == [first, seq[1], second]
    tail = seq[1:]
    assert isinstance(tail, nn.Sequential) and len(tail) == 2 and tail[1] is second
    seq.append(nn.ReLU())
    assert len(seq) == 4 and [n for n, _ in seq.named_children()] == ["0", "1", "2", "3"]


def test_module_list_registers_its_modules():
    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(nn.Linear(2, 2) for _ in range(3))

    m = Stack()
    assert len(m.layers) == 3
    assert [n for n, _ in m.named_parameters()][:3] == ["layers.0.weight", "layers.0.bias", "layers.1.weight"]
    assert len(list(m.parameters())) == 6
    m.layers.append(nn.Linear(2, 1))
    m.layers.extend([nn.ReLU()])
    assert len(m.layers) == 5 and isinstance(m.layers[-1], nn.ReLU)
    assert "layers.3.weight" in m.state_dict()
    # a plain Python list would register nothing: the reason ModuleList exists
    class Plain(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = [nn.Linear(2, 2)]

    assert list(Plain().parameters()) == []


def test_double_and_float_cast_parameters_buffers_and_grads():
    m = Block()
    m(mg.randn(2, 3)).sum().backward()
    assert m.double() is m
    for t in list(m.parameters()) + list(m.buffers()):
        assert t.dtype == np.float64
    assert all(p.grad.dtype == np.float64 for p in m.parameters())
    out = m(mg.randn(2, 3, dtype=mg.float64))
    assert out.dtype == np.float64
    m.float()
    assert all(p.dtype == np.float32 for p in m.parameters())


def test_double_keeps_weight_tying():
    m = Tied().double()
    assert m.proj.weight is m.embed.weight and m.embed.weight.dtype == np.float64


def test_requires_grad_false_freezes():
    m = nn.Linear(2, 2)
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    assert not m(mg.randn(1, 2)).requires_grad


def test_names_match_torch():
    torch = pytest.importorskip("torch")

    ours = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.LayerNorm(4), nn.Embedding(5, 4))
    tnn = torch.nn
    theirs = tnn.Sequential(tnn.Linear(3, 4), tnn.ReLU(), tnn.LayerNorm(4), tnn.Embedding(5, 4))
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    shapes = [tuple(v.shape) for v in theirs.state_dict().values()]
    assert [v.shape for v in ours.state_dict().values()] == shapes
    # a state dict moves across: torch's arrays load into minigrad's modules
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    ours_out = ours[:3](mg.tensor(x)).detach().numpy()
    theirs_out = theirs[:3](torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(ours_out, theirs_out, rtol=1e-5, atol=1e-6)


# ---- load_state_dict changes nothing when it fails ----------------------------------------------
class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 2)
        self.norm = nn.LayerNorm(2)
        self.register_buffer("count", mg.tensor([7]))


def _snapshot(model):
    return {k: (v.dtype, v.numpy().tobytes()) for k, v in model.state_dict().items()}


def _bad_state(change):
    good = {k: v.numpy() + 1 for k, v in Small().state_dict().items()}  # valid values, all different
    change(good)
    return good


@pytest.mark.parametrize("change, expected", [
    (lambda s: s.__setitem__("linear.bias", "not numbers"), "'linear.bias': expected a tensor or an array, got str"),
    (lambda s: s.__setitem__("linear.bias", np.array(["a", "b"])), "'linear.bias': the checkpoint holds <U1"),
    (lambda s: s.__setitem__("linear.bias", None), "'linear.bias': expected a tensor or an array, got NoneType"),
    (lambda s: s.__setitem__("linear.bias", {"a": 1}), "'linear.bias': expected a tensor or an array, got dict"),
    (lambda s: s.__setitem__("linear.bias", [[1.0], [2.0, 3.0]]), "'linear.bias': the value is not a rectangular"),
    (lambda s: s.__setitem__("linear.bias", np.array([1j, 2j])), "'linear.bias': the checkpoint holds complex128"),
    (lambda s: s.__setitem__("linear.bias", np.zeros(3)), "size mismatch for linear.bias: copying a param with shape (3,) from checkpoint, the shape in current model is (2,)."),
    (lambda s: s.__setitem__("count", np.array([7.5])), "'count': checkpoint has dtype float64, which would be truncated"),
    (lambda s: s.pop("norm.weight"), 'Missing key(s) in state_dict: "norm.weight". '),
    (lambda s: s.__setitem__("extra", np.zeros(1)), 'Unexpected key(s) in state_dict: "extra". '),
])
def test_a_failed_load_state_dict_leaves_every_parameter_and_buffer_bit_identical(change, expected):
    model = Small()
    before = _snapshot(model)
    versions = [t._version for t in model.state_dict(keep_vars=True).values()]
    with pytest.raises(RuntimeError, match=r"^Error\(s\) in loading state_dict for Small:\n\t") as error:
        model.load_state_dict(_bad_state(change))
    assert expected in str(error.value) and "nothing was loaded" in str(error.value)
    assert _snapshot(model) == before
    assert [t._version for t in model.state_dict(keep_vars=True).values()] == versions


def test_load_state_dict_lists_every_problem_and_refuses_a_non_mapping():
    model = Small()
    bad = _bad_state(lambda s: (s.__setitem__("linear.bias", "x"), s.__setitem__("norm.bias", np.zeros(5))))
    with pytest.raises(RuntimeError, match=r"'linear.bias': expected a tensor.*\n\tsize mismatch for norm.bias"):
        model.load_state_dict(bad)
    with pytest.raises(TypeError, match="load_state_dict of Small: expects a mapping of names to tensors, got list"):
        model.load_state_dict([1, 2])


def test_load_state_dict_still_widens_and_loads_lists():
    model = Small()
    state = {k: v.numpy().astype(np.float64) if v.dtype.kind == "f" else v.numpy().astype(np.int32)
             for k, v in Small().state_dict().items()}
    state["linear.bias"] = [0.25, 0.5]
    model.load_state_dict(state)
    assert model.linear.bias.dtype == mg.float32 and model.linear.bias.tolist() == [0.25, 0.5]

def test_checkpoint_of_another_configuration_is_refused_and_the_model_kept(tmp_path):
    from minigrad_models.transformer import Seq2SeqTransformer, TransformerConfig

    small = Seq2SeqTransformer(TransformerConfig(10, 10, d_model=8, num_heads=2, d_ff=16))
    other = Seq2SeqTransformer(TransformerConfig(10, 12, d_model=8, num_heads=2, d_ff=32, num_decoder_layers=3))
    mg.save(small.state_dict(), tmp_path / "small.npz")
    before = {k: v.detach().numpy().copy() for k, v in other.state_dict().items()}
    with pytest.raises(RuntimeError) as error:  # PyTorch's type and wording
        other.load_state_dict(mg.load(tmp_path / "small.npz"))
    message = str(error.value)
    assert 'Missing key(s) in state_dict: "decoder.layers.2' in message
    assert ("size mismatch for generator.weight: copying a param with shape (10, 8) from checkpoint, "
            "the shape in current model is (12, 8).") in message
    assert ("size mismatch for encoder.layers.0.linear1.weight: copying a param with shape (16, 8) from "
            "checkpoint, the shape in current model is (32, 8).") in message
    assert all(np.array_equal(before[k], v.detach().numpy()) for k, v in other.state_dict().items())
