"""minigrad's nn.MultiheadAttention and Transformer modules against PyTorch's, from the same state dict.

Each case is written once: `make(lib)` builds the module with lib.nn, `forward(lib, module, *inputs)`
calls it, and the runner does both with lib = torch and lib = minigrad. PyTorch's module is built
first (its initialisation), its state dict is loaded into minigrad's with strict=True, and both run in
float64 in eval mode (dropout off; the modules keep PyTorch's default dropout of 0.1). Compared:
outputs and attention weights to 1e-10, the gradients of every input and parameter to 1e-9
(relative to the largest element), under the same random upstream gradient.

A query whose keys are all masked is minigrad's one deliberate difference: PyTorch gives NaN there
when it returns the weights (need_weights=True) and zeros otherwise; minigrad always gives zeros.
Where such rows occur with need_weights=True, the rows PyTorch fills with NaN are compared with
minigrad's documented zeros and the rest with PyTorch.
"""
import warnings

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")

OUT_TOL, GRAD_TOL = 1e-10, 1e-9
E, H = 8, 2  # embed_dim, heads
rng = np.random.default_rng(0)


# ---- the runner ---------------------------------------------------------------------------------------------
def as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def to_numpy(t):
    return None if t is None else t.detach().numpy()


def run(lib, make, forward, arrays, state=None):
    """Build (and load `state` into) the module, run forward and backward; everything as NumPy."""
    lib.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's notes on its fast path
        module = make(lib).double().eval()
    if state is not None:
        result = module.load_state_dict({k: lib.tensor(v) for k, v in state.items()}, strict=True)
        assert not result.missing_keys and not result.unexpected_keys
    inputs = [lib.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's notes on mixed mask types and its fast path
        outs = as_tuple(forward(lib, module, *inputs))
    upstream = np.random.default_rng(1)  # the same draws for both libraries
    loss = None
    for out in outs:
        if out is None:
            continue
        if lib is torch:
            out = torch.nan_to_num(out)  # fully masked rows under need_weights=True (see compare)
        term = (out * lib.tensor(upstream.standard_normal(tuple(out.shape)))).sum()
        loss = term if loss is None else loss + term
    loss.backward()
    return dict(
        state={k: v.detach().numpy().copy() for k, v in module.state_dict().items()},
        outs=[to_numpy(o) for o in outs],
        input_grads=[None if t.grad is None else t.grad.numpy() for t in inputs if t.requires_grad],
        param_grads={name: p.grad.numpy() for name, p in module.named_parameters() if p.grad is not None},
    )


def close(ours, theirs, tol, what):
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape} vs PyTorch {theirs.shape}"
    scale = max(np.abs(theirs).max(), 1e-300)
    np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol * scale, err_msg=what)


def compare(make, forward, *arrays, dead=None):
    """Run both libraries from PyTorch's weights and compare everything.

    dead: for outputs with fully masked query rows under need_weights=True, a list (per output) of
    boolean masks of the elements PyTorch fills with NaN; minigrad must give 0 there.
    """
    theirs = run(torch, make, forward, arrays)
    ours = run(mg, make, forward, arrays, state=theirs["state"])
    assert len(ours["outs"]) == len(theirs["outs"])
    for k, (o, t) in enumerate(zip(ours["outs"], theirs["outs"])):
        if t is None:
            assert o is None, f"output {k}: PyTorch returns None"
            continue
        if dead is not None and dead[k] is not None:
            assert np.all(np.isnan(t[dead[k]])), "the case should have NaN rows in PyTorch"
            assert np.all(o[dead[k]] == 0), f"output {k}: minigrad gives zeros for a fully masked query"
            o, t = np.where(dead[k], 0.0, o), np.where(dead[k], 0.0, t)
        close(o, t, OUT_TOL, f"output {k}")
    if dead is None:  # with NaN rows in PyTorch's forward its gradients are NaN too: nothing to compare
        for k, (o, t) in enumerate(zip(ours["input_grads"], theirs["input_grads"])):
            close(o, t, GRAD_TOL, f"gradient of input {k}")
        assert ours["param_grads"].keys() == theirs["param_grads"].keys()
        for name, t in theirs["param_grads"].items():
            close(ours["param_grads"][name], t, GRAD_TOL, f"gradient of {name}")
    return ours, theirs


def lib_masks(lib, masks):
    return {k: (None if v is None else lib.tensor(v)) for k, v in masks.items()}


# ---- masks in PyTorch's module convention: bool True = masked out, float = added ----------------------------
def bool_mask(shape, p=0.35, seed=0):
    mask = np.random.default_rng(seed).random(shape) < p
    mask[..., 0] = False  # every query keeps a key
    return mask


def float_mask(shape, seed=0):
    values = np.random.default_rng(seed).standard_normal(shape)
    values[bool_mask(shape, seed=seed + 1)] = -np.inf
    return values


B, T, S = 2, 3, 4
PADDING = np.array([[False, False, False, True], [False, False, True, True]])  # (B, S), True at padding
MASKS = {
    "none": dict(),
    "attn-bool": dict(attn_mask=bool_mask((T, S))),
    "attn-float": dict(attn_mask=float_mask((T, S))),
    "attn-bool-3d": dict(attn_mask=bool_mask((B * H, T, S), seed=2)),
    "attn-float-3d": dict(attn_mask=float_mask((B * H, T, S), seed=3)),
    "padding-bool": dict(key_padding_mask=PADDING),
    "padding-float": dict(key_padding_mask=np.where(PADDING, -np.inf, 0.25)),
    "attn-and-padding-bool": dict(attn_mask=bool_mask((T, S), seed=4), key_padding_mask=PADDING),
    "attn-and-padding-float": dict(attn_mask=float_mask((T, S), seed=5),
                                   key_padding_mask=np.where(PADDING, -np.inf, -0.5)),
    "attn-float-padding-bool": dict(attn_mask=float_mask((T, S), seed=6), key_padding_mask=PADDING),
}
OPTIONS = {
    "plain": dict(),
    "no-bias": dict(bias=False),
    "kdim-vdim": dict(kdim=5, vdim=3),
    "bias-kv": dict(add_bias_kv=True),
    "zero-attn": dict(add_zero_attn=True),
    "bias-kv-zero-attn-kdim": dict(add_bias_kv=True, add_zero_attn=True, kdim=6, vdim=6),
}


def mha_arrays(batch_first, kdim=E, vdim=E, seed=0, L=T, S_=S):
    r = np.random.default_rng(seed)

    def shaped(length, dim):
        return r.standard_normal((B, length, dim) if batch_first else (length, B, dim))

    return shaped(L, E), shaped(S_, kdim), shaped(S_, vdim)


@pytest.mark.parametrize("batch_first", [False, True], ids=["seq-first", "batch-first"])
@pytest.mark.parametrize("masks", MASKS)
def test_multihead_attention_masks(batch_first, masks):
    kwargs = MASKS[masks]

    def make(lib):
        return lib.nn.MultiheadAttention(E, H, batch_first=batch_first)

    def forward(lib, m, q, k, v):
        return m(q, k, v, **lib_masks(lib, kwargs))  # need_weights=True, averaged: PyTorch's defaults

    compare(make, forward, *mha_arrays(batch_first))


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("weights", ["averaged", "per-head", "none"])
def test_multihead_attention_options(options, weights):
    kwargs = OPTIONS[options]
    masks = MASKS["attn-and-padding-bool"]

    def make(lib):
        return lib.nn.MultiheadAttention(E, H, batch_first=True, **kwargs)

    def forward(lib, m, q, k, v):
        return m(q, k, v, need_weights=weights != "none", average_attn_weights=weights == "averaged",
                 **lib_masks(lib, masks))

    compare(make, forward, *mha_arrays(True, kwargs.get("kdim", E), kwargs.get("vdim", E)))


def test_multihead_attention_self_attention_with_dropout_module_in_eval():
    """Self-attention (query is key is value), dropout 0.1 configured but off in eval, causal hint."""
    causal = np.triu(np.ones((T, T), dtype=bool), 1)

    def make(lib):
        return lib.nn.MultiheadAttention(E, H, dropout=0.1, batch_first=True)

    def forward(lib, m, x):
        return m(x, x, x, attn_mask=lib.tensor(causal), is_causal=True, average_attn_weights=False)

    compare(make, forward, mha_arrays(True)[0])


@pytest.mark.parametrize("masks", ["none", "attn-float", "attn-bool-3d", "padding-bool", "attn-and-padding-float"])
def test_multihead_attention_one_sequence(masks):
    """Unbatched: query (T, E), key and value (S, E), key_padding_mask (S,), a 3-D attn_mask (h, T, S)."""
    kwargs = dict(MASKS[masks])
    if "key_padding_mask" in kwargs:
        kwargs["key_padding_mask"] = kwargs["key_padding_mask"][0]
    if "attn_mask" in kwargs and kwargs["attn_mask"].ndim == 3:
        kwargs["attn_mask"] = kwargs["attn_mask"][:H]
    q, k, v = (a[0] for a in mha_arrays(True))

    def make(lib):
        return lib.nn.MultiheadAttention(E, H)

    def forward(lib, m, q, k, v):
        return m(q, k, v, average_attn_weights=False, **lib_masks(lib, kwargs))

    compare(make, forward, q, k, v)


# ---- fully masked query rows --------------------------------------------------------------------------------
DEAD_ATTN = np.zeros((T, S), dtype=bool)
DEAD_ATTN[1] = True  # query 1 may attend to no key
DEAD_PADDING = np.array([[False, False, True, True], [True, True, True, True]])  # sequence 1: all padding


@pytest.mark.parametrize("kind", ["attn-bool", "attn-float", "padding", "both"])
def test_fully_masked_rows_without_weights_match_pytorch_exactly(kind):
    """need_weights=False (what the Transformer layers use): PyTorch gives zeros too; all compared."""
    masks = dict(attn_mask=DEAD_ATTN if kind != "attn-float" else np.where(DEAD_ATTN, -np.inf, 0.0),
                 key_padding_mask=DEAD_PADDING)
    if kind.startswith("attn"):
        masks.pop("key_padding_mask")
    if kind == "padding":
        masks.pop("attn_mask")

    def make(lib):
        return lib.nn.MultiheadAttention(E, H, batch_first=True)

    def forward(lib, m, q, k, v):
        return m(q, k, v, need_weights=False, **lib_masks(lib, masks))

    ours, _ = compare(make, forward, *mha_arrays(True))
    assert all(np.all(np.isfinite(g)) for g in ours["param_grads"].values())


@pytest.mark.parametrize("average", [True, False], ids=["averaged", "per-head"])
def test_fully_masked_rows_with_weights_are_zero_where_pytorch_gives_nan(average):
    def make(lib):
        return lib.nn.MultiheadAttention(E, H, batch_first=True)

    def forward(lib, m, q, k, v):
        return m(q, k, v, attn_mask=lib.tensor(DEAD_ATTN), key_padding_mask=lib.tensor(DEAD_PADDING),
                 average_attn_weights=average)

    dead_query = np.zeros((B, T), dtype=bool)
    dead_query[:, 1] = True
    dead_query[1] = True
    dead_out = np.broadcast_to(dead_query[:, :, None], (B, T, E))
    dead_weights = np.broadcast_to(dead_query[:, :, None], (B, T, S))
    if not average:
        dead_weights = np.broadcast_to(dead_query[:, None, :, None], (B, H, T, S))
    ours, _ = compare(make, forward, *mha_arrays(True), dead=[dead_out, dead_weights])
    assert all(np.all(np.isfinite(g)) for g in ours["input_grads"] + list(ours["param_grads"].values()))


# ---- the Transformer layers ---------------------------------------------------------------------------------------
ACTIVATIONS = {"relu": lambda lib: "relu", "gelu": lambda lib: "gelu",
               "callable": lambda lib: lib.nn.functional.gelu, "module": lambda lib: lib.nn.ReLU()}


def layer_arrays(batch_first, length, seed):
    shape = (B, length, E) if batch_first else (length, B, E)
    return np.random.default_rng(seed).standard_normal(shape)


def perturbed(module, lib):
    """Move LayerNorm weights off 1 and biases off 0 (PyTorch's initial values) so their mapping is tested."""
    with lib.no_grad():
        for name, p in module.named_parameters():
            if "norm" in name or "bias" in name:
                p.add_(lib.tensor(0.1 * np.random.default_rng(len(name)).standard_normal(tuple(p.shape))))
    return module


SRC_PADDING = np.array([[False] * 5, [False, False, False, True, True]])  # (B, S=5)
TGT_PADDING = np.array([[False] * 4, [False, False, False, True]])  # (B, T=4)
CAUSAL_FLOAT = np.triu(np.full((4, 4), -np.inf), 1)
CAUSAL_BOOL = np.triu(np.ones((4, 4), dtype=bool), 1)
ENCODER_MASKS = {
    "none": dict(),
    "padding": dict(src_key_padding_mask=SRC_PADDING),
    "src-mask-float": dict(src_mask=float_mask((5, 5), seed=7)),
    "causal-and-padding": dict(src_mask=np.triu(np.ones((5, 5), dtype=bool), 1), src_key_padding_mask=SRC_PADDING),
    "causal-hint": dict(src_mask=np.triu(np.full((5, 5), -np.inf), 1), is_causal=True),
}


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
@pytest.mark.parametrize("batch_first", [False, True], ids=["seq-first", "batch-first"])
@pytest.mark.parametrize("masks", ENCODER_MASKS)
def test_encoder_layer(norm_first, batch_first, masks):
    kwargs = ENCODER_MASKS[masks]

    def make(lib):
        return perturbed(lib.nn.TransformerEncoderLayer(E, H, 16, batch_first=batch_first, norm_first=norm_first), lib)

    def forward(lib, m, src):
        return m(src, **{k: (lib.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()})

    compare(make, forward, layer_arrays(batch_first, 5, 1))


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_encoder_layer_activations_bias_and_eps(activation):
    def make(lib):
        return perturbed(lib.nn.TransformerEncoderLayer(E, H, 16, activation=ACTIVATIONS[activation](lib),
                                                        layer_norm_eps=1e-3, bias=activation != "relu"), lib)

    def forward(lib, m, src):
        return m(src, src_key_padding_mask=lib.tensor(SRC_PADDING))

    compare(make, forward, layer_arrays(False, 5, 2))


DECODER_MASKS = {
    "none": dict(),
    "causal-float": dict(tgt_mask=CAUSAL_FLOAT, tgt_is_causal=True),
    "causal-bool-and-padding": dict(tgt_mask=CAUSAL_BOOL, tgt_key_padding_mask=TGT_PADDING,
                                    memory_key_padding_mask=SRC_PADDING),
    "memory-mask": dict(memory_mask=bool_mask((4, 5), seed=8), tgt_mask=CAUSAL_BOOL),
    "all-float": dict(tgt_mask=CAUSAL_FLOAT, memory_mask=float_mask((4, 5), seed=9),
                      tgt_key_padding_mask=np.where(TGT_PADDING, -np.inf, 0.0),
                      memory_key_padding_mask=np.where(SRC_PADDING, -np.inf, 0.0)),
}


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
@pytest.mark.parametrize("batch_first", [False, True], ids=["seq-first", "batch-first"])
@pytest.mark.parametrize("masks", DECODER_MASKS)
def test_decoder_layer(norm_first, batch_first, masks):
    kwargs = DECODER_MASKS[masks]

    def make(lib):
        return perturbed(lib.nn.TransformerDecoderLayer(E, H, 16, batch_first=batch_first, norm_first=norm_first), lib)

    def forward(lib, m, tgt, memory):
        return m(tgt, memory, **{k: (lib.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()})

    compare(make, forward, layer_arrays(batch_first, 4, 3), layer_arrays(batch_first, 5, 4))


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_layers_on_one_sequence(norm_first):
    def make(lib):
        return perturbed(lib.nn.TransformerDecoderLayer(E, H, 16, norm_first=norm_first, activation="gelu"), lib)

    def forward(lib, m, tgt, memory):
        return m(tgt, memory, tgt_mask=lib.tensor(CAUSAL_BOOL), memory_key_padding_mask=lib.tensor(SRC_PADDING[1]))

    compare(make, forward, layer_arrays(True, 4, 5)[0], layer_arrays(True, 5, 6)[0])

    def make_encoder(lib):
        return perturbed(lib.nn.TransformerEncoderLayer(E, H, 16, norm_first=norm_first), lib)

    def forward_encoder(lib, m, src):
        return m(src, src_key_padding_mask=lib.tensor(SRC_PADDING[1]))

    compare(make_encoder, forward_encoder, layer_arrays(True, 5, 7)[0])


def different_layers(stack, lib):
    """The layers of a stack start as copies: make them differ, so that a mix-up would show."""
    with lib.no_grad():
        for i, layer in enumerate(stack.layers):
            for p in layer.parameters():
                p.add_(lib.tensor(0.05 * np.random.default_rng(i).standard_normal(tuple(p.shape))))
    return stack


@pytest.mark.parametrize("norm", [False, True], ids=["no-final-norm", "final-norm"])
@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_encoder_and_decoder_stacks(norm, norm_first):
    def make(lib):
        layer_args = dict(dim_feedforward=16, batch_first=True, norm_first=norm_first)
        encoder = lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(E, H, **layer_args), 2,
                                            norm=lib.nn.LayerNorm(E) if norm else None, enable_nested_tensor=False)
        decoder = lib.nn.TransformerDecoder(lib.nn.TransformerDecoderLayer(E, H, **layer_args), 2,
                                            norm=lib.nn.LayerNorm(E) if norm else None)
        return lib.nn.ModuleList([different_layers(encoder, lib), different_layers(decoder, lib)])

    def forward(lib, m, src, tgt):
        encoder, decoder = m
        memory = encoder(src, src_key_padding_mask=lib.tensor(SRC_PADDING))
        return decoder(tgt, memory, tgt_mask=lib.tensor(CAUSAL_FLOAT), tgt_key_padding_mask=lib.tensor(TGT_PADDING),
                       memory_key_padding_mask=lib.tensor(SRC_PADDING))

    compare(make, forward, layer_arrays(True, 5, 8), layer_arrays(True, 4, 9))


@pytest.mark.parametrize("batch_first", [False, True], ids=["seq-first", "batch-first"])
@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_transformer(batch_first, norm_first):
    def make(lib):
        model = lib.nn.Transformer(E, H, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16,
                                   batch_first=batch_first, norm_first=norm_first)
        different_layers(model.encoder, lib)
        different_layers(model.decoder, lib)
        return perturbed(model, lib)

    def forward(lib, m, src, tgt):
        return m(src, tgt, src_mask=lib.tensor(float_mask((5, 5), seed=10)),
                 tgt_mask=lib.nn.Transformer.generate_square_subsequent_mask(4, dtype=lib.float64),
                 memory_mask=lib.tensor(bool_mask((4, 5), seed=11)), src_key_padding_mask=lib.tensor(SRC_PADDING),
                 tgt_key_padding_mask=lib.tensor(TGT_PADDING), memory_key_padding_mask=lib.tensor(SRC_PADDING))

    compare(make, forward, layer_arrays(batch_first, 5, 10), layer_arrays(batch_first, 4, 11))


def test_generate_square_subsequent_mask_equals_pytorchs():
    for size in (1, 4):
        for dtype in (None, "float64"):
            ours = mg.nn.Transformer.generate_square_subsequent_mask(size, dtype=getattr(mg, dtype) if dtype else None)
            theirs = torch.nn.Transformer.generate_square_subsequent_mask(size, dtype=getattr(torch, dtype) if dtype else None)
            assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# ---- state dicts both ways ----------------------------------------------------------------------------------------
MODULES = {
    "MultiheadAttention": lambda lib: lib.nn.MultiheadAttention(E, H, batch_first=True),
    "MultiheadAttention-kdim-bias-kv": lambda lib: lib.nn.MultiheadAttention(E, H, kdim=5, vdim=3, add_bias_kv=True,
                                                                             batch_first=True),
    "TransformerEncoderLayer": lambda lib: lib.nn.TransformerEncoderLayer(E, H, 16, batch_first=True),
    "TransformerDecoderLayer-no-bias": lambda lib: lib.nn.TransformerDecoderLayer(E, H, 16, batch_first=True,
                                                                                  bias=False),
    "TransformerEncoder": lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(E, H, 16, batch_first=True),
                                                                2, norm=lib.nn.LayerNorm(E), enable_nested_tensor=False),
    "TransformerDecoder": lambda lib: lib.nn.TransformerDecoder(lib.nn.TransformerDecoderLayer(E, H, 16, batch_first=True),
                                                                2),
    "Transformer": lambda lib: lib.nn.Transformer(E, H, 1, 2, 16, batch_first=True),
}


def module_inputs(name, lib):
    r = np.random.default_rng(12)

    def normal(*shape):
        return lib.tensor(r.standard_normal(shape).astype(np.float32))

    x, memory = normal(B, 4, E), normal(B, 5, E)
    if name.startswith("MultiheadAttention"):
        kdim = 5 if "kdim" in name else E
        vdim = 3 if "kdim" in name else E
        key, value = normal(B, 5, kdim), normal(B, 5, vdim)
        return lambda m: m(x, key, value, key_padding_mask=lib.tensor(SRC_PADDING))[0]
    if "Encoder" in name:
        return lambda m: m(x)
    if name == "Transformer":
        return lambda m: m(memory, x, tgt_mask=lib.tensor(CAUSAL_BOOL), src_key_padding_mask=lib.tensor(SRC_PADDING),
                           memory_key_padding_mask=lib.tensor(SRC_PADDING))
    return lambda m: m(x, memory, tgt_mask=lib.tensor(CAUSAL_BOOL))


@pytest.mark.parametrize("name", MODULES)
def test_state_dicts_move_both_ways_with_strict_loading(name):
    """Same keys, shapes and order; a state dict of either library loads into the other with
    strict=True and gives the other's outputs (float32, PyTorch's default dtype)."""
    torch.manual_seed(3)
    mg.manual_seed(4)
    warnings.simplefilter("ignore")  # PyTorch's notes on its fast path (pytest restores the filters)
    theirs, ours = MODULES[name](torch).eval(), MODULES[name](mg).eval()
    t_state, m_state = theirs.state_dict(), ours.state_dict()
    assert list(m_state) == list(t_state)
    assert all(tuple(m_state[k].shape) == tuple(t_state[k].shape) for k in t_state)
    for source, target, target_lib in ((theirs, MODULES[name](mg).eval(), mg), (ours, MODULES[name](torch).eval(), torch)):
        state = {k: target_lib.tensor(v.detach().numpy().copy()) for k, v in source.state_dict().items()}
        target.load_state_dict(state, strict=True)
        source_out = module_inputs(name, mg if source is ours else torch)(source)
        target_out = module_inputs(name, target_lib)(target)
        np.testing.assert_allclose(target_out.detach().numpy(), source_out.detach().numpy(), rtol=1e-4, atol=1e-5)
