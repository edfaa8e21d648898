"""CPU autocast to bfloat16 (torch.autocast("cpu", dtype=torch.bfloat16)): minigrad rounds the inputs and
outputs of matmul, linear, einsum and attention to bfloat16's precision in float32 storage
(minigrad/ops/precision.py, docs/autocast.md).

Checked here: the rounding itself (known values by hand; PyTorch's conversion where installed), its
gradient, which PyTorch names open or close a region, a linear layer and a matmul equal to PyTorch's
bfloat16 results bit for bit, a whole GPT's loss under autocast nearer PyTorch's bfloat16 loss than
float32 is, and build-nanogpt's training-loop pattern running with the loss falling.
"""
import inspect
import math
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.ops.precision import round_to_bfloat16

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


# ---- the rounding ----------------------------------------------------------------------------------
def test_rounding_to_bfloat16_by_hand():
    # bfloat16 keeps 7 mantissa bits: near 1 its spacing is 2**-7; halfway cases go to the even neighbour
    values = np.array([1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -8 + 2 ** -20, -(1 + 2 ** -7),
                       math.pi, np.finfo(np.float32).max, np.inf, -np.inf, 0.0, -0.0, 1e-40], dtype=np.float32)
    expected = np.array([1.0, 1.0, 1 + 2 ** -6, 1 + 2 ** -7, -(1 + 2 ** -7),
                         3.140625, np.inf, np.inf, -np.inf, 0.0, -0.0, 9.183549615799121e-41], dtype=np.float32)
    got = round_to_bfloat16(values)
    np.testing.assert_array_equal(got, expected)
    assert np.signbit(got[10])  # -0.0 keeps its sign
    assert np.isnan(round_to_bfloat16(np.array([np.nan], dtype=np.float32))[0])
    # every result is a bfloat16: its low 16 bits are zero
    wide = np.random.default_rng(0).standard_normal(10_000).astype(np.float32) * 1e3
    assert not np.any(round_to_bfloat16(wide).view(np.uint32) & 0xFFFF)


@needs_torch
def test_rounding_equals_pytorchs_conversion_over_the_whole_float32_range():
    rng = np.random.default_rng(1)
    values = (rng.standard_normal(200_000) * 10.0 ** rng.integers(-44, 38, 200_000)).astype(np.float32)
    ours = round_to_bfloat16(values)
    theirs = torch.from_numpy(values).to(torch.bfloat16).float().numpy()
    np.testing.assert_array_equal(ours, theirs)


def test_to_bfloat16_rounds_keeps_float32_and_says_so_once(monkeypatch):
    from minigrad import tensor_methods
    monkeypatch.setattr(tensor_methods, "_bfloat16_warned", False)
    x = mg.tensor([1 + 3 * 2 ** -8, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="no bfloat16 storage.*kept in float32"):
        y = x.to(mg.bfloat16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # only the first conversion warns
        z = x.bfloat16()
        assert x.type(mg.bfloat16).dtype == mg.float32
    assert y.dtype == mg.float32 and z.dtype == mg.float32
    np.testing.assert_array_equal(y.detach().numpy(), [1 + 2 ** -6, 2.0])
    # the cast's gradient, as PyTorch's: passed through, itself rounded to bfloat16
    (y * mg.tensor([1 + 2 ** -8 + 2 ** -20, 3.0])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1 + 2 ** -7, 3.0])


# ---- the region --------------------------------------------------------------------------------------
def test_which_regions_round_and_which_do_not():
    x = mg.tensor([[1 + 3 * 2 ** -8]])
    one = mg.tensor([[1.0]])
    exact = (x @ one).item()
    assert exact == 1 + 3 * 2 ** -8
    assert not mg.is_autocast_enabled("cpu")
    for region in (mg.autocast("cpu", dtype=mg.bfloat16), mg.autocast(device_type="cpu"),
                   mg.amp.autocast("cpu"), mg.cpu.amp.autocast()):
        with region:
            assert mg.is_autocast_enabled("cpu") and not mg.is_autocast_enabled()  # no argument: CUDA's
            assert (x @ one).item() == 1 + 2 ** -6
            with mg.autocast("cpu", enabled=False):  # a disabled region inside turns it off, as PyTorch
                assert (x @ one).item() == exact
            assert (x.double() @ one.double()).item() == exact  # float64 is left alone, as PyTorch
        assert not mg.is_autocast_enabled("cpu")
    with mg.autocast("cpu", dtype=mg.float16):  # float16: rounded to float16's 10 mantissa bits
        assert (x @ one).item() == np.float32(np.float16(1 + 3 * 2 ** -8))
    assert mg.get_autocast_dtype("cpu") == mg.bfloat16
    with pytest.warns(UserWarning, match="'cuda' is not available.*Disabling autocast"):
        cuda_region = mg.autocast(device_type="cuda", dtype=mg.bfloat16)
    with cuda_region:
        assert (x @ one).item() == exact and not mg.is_autocast_enabled("cpu")
    with pytest.warns(UserWarning, match="only supports bfloat16 and float16"):
        float32_region = mg.autocast("cpu", dtype=mg.float32)
    with float32_region:
        assert (x @ one).item() == exact

    @mg.autocast("cpu")
    def product(a, b):
        return a @ b

    assert product(x, one).item() == 1 + 2 ** -6 and not mg.is_autocast_enabled("cpu")


@needs_torch
def test_pytorch_rounds_the_same_cases():
    x = torch.tensor([[1 + 3 * 2 ** -8]])
    one = torch.tensor([[1.0]])
    with torch.autocast(device_type="cpu"):
        assert (x @ one).float().item() == 1 + 2 ** -6
        assert (x.double() @ one.double()).item() == 1 + 3 * 2 ** -8
        with torch.autocast("cpu", enabled=False):
            assert (x @ one).item() == 1 + 3 * 2 ** -8
    with pytest.warns(UserWarning, match="(?i)cuda.*not available.*Disabling autocast"):
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            assert (x @ one).dtype == torch.float32


@needs_torch
@pytest.mark.parametrize("op", ["linear", "matmul", "bmm", "einsum", "sdpa"])
def test_lower_precision_ops_match_pytorchs_bfloat16_results(op):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 16, 32)).astype(np.float32)
    b = (rng.standard_normal((4, 32, 24)) * 0.2).astype(np.float32)
    w = (rng.standard_normal((24, 32)) * 0.2).astype(np.float32)
    bias = rng.standard_normal(24).astype(np.float32)
    q, k, v = (rng.standard_normal((2, 2, 8, 16)).astype(np.float32) for _ in range(3))
    results = []
    for lib in (mg, torch):
        F = lib.nn.functional
        t = lib.from_numpy
        with lib.autocast(device_type="cpu", dtype=lib.bfloat16):
            out = {"linear": lambda: F.linear(t(a), t(w), t(bias)),
                   "matmul": lambda: t(a) @ t(b),
                   "bmm": lambda: lib.bmm(t(a), t(b)),
                   "einsum": lambda: lib.einsum("bij,bjk->bik", t(a), t(b)),
                   "sdpa": lambda: F.scaled_dot_product_attention(t(q), t(k), t(v), is_causal=True)}[op]()
        results.append(out.float().numpy() if lib is torch else out.numpy())
    ours, theirs = results
    assert not np.any(ours.view(np.uint32) & 0xFFFF)  # the output is a bfloat16 value
    if op == "sdpa":
        # PyTorch's fused bfloat16 attention rounds its weights before the product with V: the outputs
        # agree to within one bfloat16 step at the output's scale (measured: a third of one)
        step = np.abs(theirs).max() * 2.0 ** -7
        assert np.mean(ours == theirs) > 0.7 and np.abs(ours - theirs).max() <= step
    else:
        # the products sum in float32 in both, then round once: the same bfloat16 numbers
        np.testing.assert_array_equal(ours, theirs)


# ---- a GPT trained as build-nanogpt trains it ---------------------------------------------------------
def tiny_gpt(torch, vocab=16, block=8, n_embd=32, n_head=4):
    """A GPT-2-shaped model (one block), written against whichever `torch` it is given."""
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)
            self.c_fc, self.mlp_proj = nn.Linear(n_embd, 4 * n_embd), nn.Linear(4 * n_embd, n_embd)

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(self.ln_1(x)).split(n_embd, dim=2)
            q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))
            return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, n_embd), nn.Embedding(block, n_embd)
            self.h = nn.ModuleList([Block()])
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, vocab, bias=False)
            self.wte.weight = self.lm_head.weight  # weight tying

        def forward(self, idx, targets=None):
            pos = torch.arange(0, idx.size(1), dtype=torch.long)
            x = self.wte(idx) + self.wpe(pos)
            for block in self.h:
                x = block(x)
            logits = self.lm_head(self.ln_f(x))
            loss = None if targets is None else F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
            return logits, loss

    return GPT()


def batches(vocab=16, block=8, batch=4, steps=40, seed=3):
    """A learnable stream: each token is the previous one plus one, modulo the vocabulary."""
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        seq = (rng.integers(0, vocab, (batch, 1)) + np.arange(block + 1)) % vocab
        yield np.ascontiguousarray(seq[:, :-1]), np.ascontiguousarray(seq[:, 1:])


def train_like_build_nanogpt(torch, model, steps=30, grad_accum_steps=2, device_type="cpu"):
    param_dict = {pn: p for pn, p in model.named_parameters() if p.requires_grad}
    groups = [{"params": [p for p in param_dict.values() if p.dim() >= 2], "weight_decay": 0.1},
              {"params": [p for p in param_dict.values() if p.dim() < 2], "weight_decay": 0.0}]
    fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
    use_fused = fused_available and device_type == "cuda"
    optimizer = torch.optim.AdamW(groups, lr=3e-2, betas=(0.9, 0.95), eps=1e-8, fused=use_fused)
    data = batches(steps=steps * grad_accum_steps)
    losses = []
    for step in range(steps):
        optimizer.zero_grad()
        loss_accum = 0.0
        for micro_step in range(grad_accum_steps):
            x, y = (torch.from_numpy(a) for a in next(data))
            with torch.autocast(device_type=device_type, dtype=torch.bfloat16):
                logits, loss = model(x, y)
            loss = loss / grad_accum_steps
            loss_accum += loss.detach()
            loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        lr = 3e-2 * min(1.0, (step + 1) / 5)  # linear warm-up
        for param_group in optimizer.param_groups:
            param_group["lr"] = lr
        optimizer.step()
        assert math.isfinite(float(norm))
        losses.append(float(loss_accum))
    return losses


def test_build_nanogpt_training_loop_under_bfloat16_autocast_runs_and_the_loss_falls():
    mg.manual_seed(0)
    model = tiny_gpt(mg)
    losses = train_like_build_nanogpt(mg, model)
    first, last = np.mean(losses[:3]), np.mean(losses[-3:])
    assert first > 2.5 and last < 0.75 * first, (first, last)  # starts near log(16) = 2.77, then learns
    with mg.no_grad(), mg.autocast(device_type="cpu", dtype=mg.bfloat16):  # generation, as in the lecture
        logits, _ = model(mg.from_numpy(np.array([[0, 1, 2, 3]])))
    assert tuple(logits.shape) == (1, 4, 16)


@needs_torch
def test_the_same_loop_on_pytorch_gives_the_same_losses():
    """From the same weights, the 30 steps' losses under bfloat16 autocast follow PyTorch's: measured, within
    0.02 at every step (mean 0.003), about as far as PyTorch's own float32 run lies from its bfloat16 one
    (0.017, mean 0.004): single products agree bit for bit, but the ops between them round differently
    (PyTorch: in bfloat16, minigrad: float32), and 30 steps at a high learning rate let that grow."""
    mg.manual_seed(0)
    ours = tiny_gpt(mg)
    theirs = tiny_gpt(torch)
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()})
    our_losses = np.array(train_like_build_nanogpt(mg, ours))
    their_losses = np.array(train_like_build_nanogpt(torch, theirs))
    assert np.abs(our_losses - their_losses).max() < 0.05, np.abs(our_losses - their_losses).max()
    assert our_losses[-1] < 0.75 * our_losses[0] and their_losses[-1] < 0.75 * their_losses[0]


@needs_torch
def test_a_gpts_loss_under_autocast_is_near_pytorchs_bfloat16_loss():
    """Same weights in both: minigrad's autocast loss lies nearer PyTorch's bfloat16 loss than either
    float32 loss does, and within 1e-3 of it. (Not equal: after each rounded matmul PyTorch computes
    softmax, GELU and the additions in bfloat16, minigrad in float32.)"""
    mg.manual_seed(1)
    ours = tiny_gpt(mg)
    theirs = tiny_gpt(torch)
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()})
    x, y = next(batches(batch=8))
    losses = {}
    for lib, model in ((mg, ours), (torch, theirs)):
        args = (lib.from_numpy(x), lib.from_numpy(y))
        losses[lib.__name__, "float32"] = model(*args)[1].item()
        with lib.autocast(device_type="cpu", dtype=lib.bfloat16):
            losses[lib.__name__, "bfloat16"] = model(*args)[1].float().item()
    target = losses["torch", "bfloat16"]
    ours_gap = abs(losses["minigrad", "bfloat16"] - target)
    assert abs(losses["minigrad", "float32"] - losses["torch", "float32"]) < 1e-5
    assert ours_gap < abs(losses["torch", "float32"] - target), losses
    assert ours_gap < 1e-3, losses  # measured: 2.9e-4 (float32 lies 4.8e-4 from it)
