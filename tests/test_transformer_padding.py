"""nn.TransformerEncoder at padded positions: PyTorch's nested-tensor path, and when it is taken.

In inference PyTorch runs a padded batch as a nested tensor and returns exactly 0 at the padded
positions, before the encoder's final norm. minigrad does the same in exactly the cases where PyTorch
takes that path, and returns the layers' output there otherwise. The checks without PyTorch use
literal values (0, the norm's bias) and the layers applied one by one; the rest compare with PyTorch.
"""
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")

B, S, E = 3, 5, 8
X = np.random.default_rng(0).standard_normal((B, S, E))
LEFT = np.array([[0, 0, 0, 1, 1],   # 3 tokens, then padding
                 [0, 0, 0, 0, 0],   # no padding
                 [0, 1, 1, 1, 1]], dtype=bool)
RAGGED = np.array([[0, 1, 0, 1, 1],  # padding between tokens: not left-aligned
                   [0, 0, 0, 0, 0],
                   [0, 0, 1, 1, 1]], dtype=bool)
ALL_PADDED = np.array([[1, 1, 1, 1, 1], [0, 0, 0, 0, 0], [0, 0, 1, 1, 1]], dtype=bool)


def encoder(lib=mg, nhead=2, norm=True, layer_kw=None, **encoder_kw):
    """A 2-layer float64 encoder in eval mode, no dropout; the norm's bias is non-zero so that it shows."""
    layer_kw = dict(dict(dropout=0.0, batch_first=True), **(layer_kw or {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's notes on why it will not use its fast path
        lib.manual_seed(0)
        layer = lib.nn.TransformerEncoderLayer(E, nhead, 16, **layer_kw)
        model = lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(E) if norm else None, **encoder_kw)
    model = model.double().eval()
    if norm:
        with lib.no_grad():
            model.norm.bias.copy_(lib.tensor(np.linspace(-0.4, 0.3, E)))
            model.norm.weight.copy_(lib.tensor(np.linspace(0.5, 1.5, E)))
    return model


def layers_one_by_one(model, x, padding):
    """The encoder's layers applied in turn with the given padding mask, without its final norm."""
    out = mg.tensor(x)
    for layer in model.layers:
        out = layer(out, src_key_padding_mask=mg.tensor(padding))
    return out.detach().numpy()


def run(model, padding, x=X, **kw):
    with mg.no_grad():
        return model(mg.tensor(x), src_key_padding_mask=mg.tensor(padding), **kw).numpy()


# ---- without PyTorch: the values the nested path gives -------------------------------------------------
def test_padded_positions_are_zero_and_the_rest_unchanged():
    model = encoder(norm=False)
    out = run(model, LEFT)
    np.testing.assert_array_equal(out[LEFT], 0.0)  # every padded token vector is exactly 0
    assert np.all(out[~LEFT] != 0.0)
    np.testing.assert_allclose(out[~LEFT], layers_one_by_one(model, X, LEFT)[~LEFT], rtol=1e-13, atol=1e-13)


def test_the_final_norm_comes_after_the_zeros():
    model = encoder(norm=True)
    out = run(model, LEFT)
    # LayerNorm of a zero vector: (0 - 0) / sqrt(0 + eps) * weight + bias = bias, exactly
    bias = np.linspace(-0.4, 0.3, E)
    np.testing.assert_array_equal(out[LEFT], np.broadcast_to(bias, (int(LEFT.sum()), E)))
    layers = mg.tensor(layers_one_by_one(model, X, LEFT))
    with mg.no_grad():
        expected = model.norm(layers).numpy()
    np.testing.assert_allclose(out[~LEFT], expected[~LEFT], rtol=1e-13, atol=1e-13)


def test_a_row_of_padding_only_and_a_row_without_padding():
    model = encoder(norm=False)
    out = run(model, ALL_PADDED)
    np.testing.assert_array_equal(out[0], 0.0)
    np.testing.assert_allclose(out[1], layers_one_by_one(model, X, ALL_PADDED)[1], rtol=1e-13, atol=1e-13)
    no_padding = np.zeros((B, S), dtype=bool)  # nothing padded: the nested path changes nothing
    np.testing.assert_allclose(run(model, no_padding), layers_one_by_one(model, X, no_padding), rtol=1e-13)


def test_a_float_padding_mask_pads_wherever_it_is_not_zero():
    model = encoder(norm=False)
    minus_inf = np.where(LEFT, -np.inf, 0.0)
    np.testing.assert_array_equal(run(model, minus_inf), run(model, LEFT))
    # PyTorch's nested path drops any non-zero position (it is not added to the scores there)
    np.testing.assert_array_equal(run(model, np.where(LEFT, -1.0, 0.0)), run(model, LEFT))


def test_mask_check_false_reads_each_row_as_left_aligned():
    """mask_check=False: PyTorch assumes left-aligned padding and takes a row's first n tokens, n being
    its number of unpadded positions, wherever the padding was."""
    model = encoder(norm=False, mask_check=False)
    as_if_left_aligned = np.arange(S)[None, :] >= (~RAGGED).sum(axis=1)[:, None]
    assert not np.array_equal(as_if_left_aligned, RAGGED)
    out = run(model, RAGGED)
    np.testing.assert_array_equal(out[as_if_left_aligned], 0.0)
    expected = layers_one_by_one(model, X, as_if_left_aligned)
    np.testing.assert_allclose(out[~as_if_left_aligned], expected[~as_if_left_aligned], rtol=1e-13, atol=1e-13)


def test_is_causal_is_not_applied_on_the_nested_path():
    model = encoder(norm=False)
    np.testing.assert_array_equal(run(model, LEFT, is_causal=True), run(model, LEFT))


# ---- without PyTorch: where the nested path is not taken, the padded positions hold the layers' output ---
def layers_output_everywhere(model, padding, x=X, **kw):
    out = run(model, padding, x, **kw)
    np.testing.assert_allclose(out, layers_one_by_one(model, x, padding), rtol=1e-13, atol=1e-13)
    assert np.all(out[padding] != 0.0)


NOT_NESTED_WHEN_BUILT = {
    "enable_nested_tensor=False": dict(enable_nested_tensor=False),
    "norm_first": dict(layer_kw=dict(norm_first=True)),
    "batch_first=False": dict(layer_kw=dict(batch_first=False)),
    "odd nhead": dict(nhead=1),
    "a callable activation": dict(layer_kw=dict(activation=lambda h: mg.tanh(h))),
    "bias=False": dict(layer_kw=dict(bias=False)),
}


@pytest.mark.parametrize("case", list(NOT_NESTED_WHEN_BUILT))
def test_no_nested_path_for_these_encoders(case):
    model = encoder(norm=False, **NOT_NESTED_WHEN_BUILT[case])
    assert model.use_nested_tensor is False
    x = X.transpose(1, 0, 2) if case == "batch_first=False" else X
    out = run(model, LEFT, x)
    padded = LEFT.T if case == "batch_first=False" else LEFT
    assert np.all(out[padded] != 0.0)
    if case == "batch_first=False":
        return
    layers_output_everywhere(model, LEFT)


def test_gelu_and_relu_modules_allow_the_nested_path():
    for activation in ("gelu", nn.GELU(), nn.ReLU()):
        assert encoder(layer_kw=dict(activation=activation)).use_nested_tensor is True


def test_different_layer_norm_eps_rules_it_out():
    layer = nn.TransformerEncoderLayer(E, 2, 16, batch_first=True)
    layer.norm2.eps = 1e-6
    assert nn.TransformerEncoder(layer, 1).use_nested_tensor is False


def test_no_nested_path_in_training_mode():
    model = encoder(norm=False)
    model.train()  # dropout is 0: only the nested path could change the values
    layers_output_everywhere(model, LEFT)


def test_no_nested_path_while_autograd_records():
    model = encoder(norm=False)
    out = model(mg.tensor(X), src_key_padding_mask=mg.tensor(LEFT))  # grad mode, weights require grad
    assert out.requires_grad and np.all(out.detach().numpy()[LEFT] != 0.0)
    x = mg.tensor(X, requires_grad=True)
    for p in model.parameters():
        p.requires_grad_(False)
    out = model(x, src_key_padding_mask=mg.tensor(LEFT))  # the input requires grad
    assert out.requires_grad and np.all(out.detach().numpy()[LEFT] != 0.0)
    # nothing requires grad: the path is taken even in grad mode
    out = model(mg.tensor(X), src_key_padding_mask=mg.tensor(LEFT)).numpy()
    np.testing.assert_array_equal(out[LEFT], 0.0)


def test_no_nested_path_with_an_attention_mask_or_unaligned_padding():
    model = encoder(norm=False)
    zeros_mask = mg.zeros(S, S, dtype=mg.float64)  # adds nothing, but its presence rules the path out
    with mg.no_grad():
        out = model(mg.tensor(X), mask=zeros_mask, src_key_padding_mask=mg.tensor(LEFT)).numpy()
    np.testing.assert_allclose(out, layers_one_by_one(model, X, LEFT), rtol=1e-13, atol=1e-13)
    layers_output_everywhere(model, RAGGED)  # mask_check=True finds the padding not left-aligned
    with mg.no_grad():  # no padding mask, or an unbatched input: nothing to pad
        np.testing.assert_allclose(model(mg.tensor(X)).numpy(), layers_one_by_one(model, X, np.zeros((B, S), bool)),
                                   rtol=1e-13)
        single = model(mg.tensor(X[0]), src_key_padding_mask=mg.tensor(LEFT[0])).numpy()
    assert np.all(single != 0.0)


# ---- against PyTorch ----------------------------------------------------------------------------------
def both(make, call):
    """Build with PyTorch, load its weights into minigrad's module, and call both the same way."""
    ours, theirs = make(mg), make(torch)
    result = ours.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    assert not result.missing_keys and not result.unexpected_keys
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(mg, ours), call(torch, theirs)


def grad_free(padding, **kw):
    def call(lib, model):
        with lib.no_grad():
            return model(lib.tensor(X), src_key_padding_mask=lib.tensor(padding), **kw).numpy()
    return call


CASES = {
    "nested": (dict(), LEFT, {}),
    "nested, no norm": (dict(norm=False), LEFT, {}),
    "nested, gelu": (dict(layer_kw=dict(activation="gelu")), LEFT, {}),
    "nested, float mask": (dict(), np.where(LEFT, -np.inf, 0.0), {}),
    "nested, float mask of -1": (dict(), np.where(LEFT, -1.0, 0.0), {}),
    "nested, is_causal": (dict(), LEFT, dict(is_causal=True)),
    "nested, mask_check=False, ragged": (dict(mask_check=False), RAGGED, {}),
    "nested, mask_check=False, left": (dict(mask_check=False), LEFT, {}),
    "not left-aligned": (dict(), RAGGED, {}),
    "enable_nested_tensor=False": (dict(enable_nested_tensor=False), LEFT, {}),
    "norm_first": (dict(layer_kw=dict(norm_first=True)), LEFT, {}),
    "odd nhead": (dict(nhead=1), LEFT, {}),
    "bias=False": (dict(layer_kw=dict(bias=False)), LEFT, {}),
}


@needs_torch
@pytest.mark.parametrize("case", list(CASES))
def test_matches_pytorch_without_grad(case):
    build, padding, kw = CASES[case]
    ours, theirs = both(lambda lib: encoder(lib, **build), grad_free(padding, **kw))
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@needs_torch
def test_matches_pytorch_in_the_other_cases():
    def training(lib, model):
        model.train()
        with lib.no_grad():
            return model(lib.tensor(X), src_key_padding_mask=lib.tensor(LEFT)).numpy()

    def recording(lib, model):
        return model(lib.tensor(X), src_key_padding_mask=lib.tensor(LEFT)).detach().numpy()

    def input_requires_grad(lib, model):
        for p in model.parameters():
            p.requires_grad_(False)
        x = lib.tensor(X, requires_grad=True)
        plain = model(lib.tensor(X), src_key_padding_mask=lib.tensor(LEFT)).numpy()
        return np.stack([model(x, src_key_padding_mask=lib.tensor(LEFT)).detach().numpy(), plain])

    def with_mask(lib, model):
        with lib.no_grad():
            return model(lib.tensor(X), mask=lib.zeros(S, S, dtype=lib.float64),
                         src_key_padding_mask=lib.tensor(LEFT)).numpy()

    for call in (training, recording, input_requires_grad, with_mask):
        ours, theirs = both(lambda lib: encoder(lib), call)
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12, err_msg=call.__name__)


@needs_torch
def test_use_nested_tensor_is_decided_as_pytorch_decides_it():
    for build in [dict(), dict(enable_nested_tensor=False), dict(layer_kw=dict(norm_first=True)),
                  dict(layer_kw=dict(batch_first=False)), dict(nhead=1), dict(layer_kw=dict(bias=False)),
                  dict(layer_kw=dict(activation="gelu"))]:
        assert encoder(mg, **build).use_nested_tensor == encoder(torch, **build).use_nested_tensor, build


@needs_torch
def test_fastpath_flag_of_torch_backends():
    for lib in (mg, torch):
        lib.backends.mha.set_fastpath_enabled(False)
    try:
        ours, theirs = both(lambda lib: encoder(lib, norm=False), grad_free(LEFT))
    finally:
        for lib in (mg, torch):
            lib.backends.mha.set_fastpath_enabled(True)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    assert np.all(ours[LEFT] != 0.0)
