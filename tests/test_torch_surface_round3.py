"""The torch.* surface that real PyTorch training code touches besides the math (issue 21).

Binding `torch` to minigrad however the code imports submodules; torch.nn.modules.<file> paths;
torch.compile, torch.jit, torch.onnx; torch.backends flags; torch.cuda / torch.cpu; bfloat16 as a
name refused when used; torch.amp's autocast and GradScaler; Generator objects and the RNG state;
CosineAnnealingWarmRestarts; samplers that draw lazily (an "infinite" RandomSampler).

Every behaviour has a check with values known independently (hand-computed, or a property that
holds whatever the draws); where PyTorch is installed, the same code also runs on it and the two
are compared.
"""
import inspect
import math
import subprocess
import sys
import textwrap
import tracemalloc
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim
from minigrad.utils.data import (
    DataLoader, RandomSampler, SubsetRandomSampler, TensorDataset, WeightedRandomSampler, random_split,
)

try:
    import torch
except ImportError:  # the comparisons skip; the rest runs
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed (the comparison needs it)")
LIBRARIES = [mg] + ([torch] if torch is not None else [])


# ---- 1. `sys.modules["torch"] = minigrad`, then any form of submodule import ---------------------
def run_bound_to_minigrad(code):
    """Run `code` in a fresh interpreter where the name `torch` is bound to minigrad (no real PyTorch loaded)."""
    prologue = "import sys, minigrad\nsys.modules['torch'] = minigrad\n"
    result = subprocess.run([sys.executable, "-c", prologue + textwrap.dedent(code)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_every_import_form_gives_minigrads_own_modules():
    out = run_bound_to_minigrad("""
        import torch
        import torch.nn as nn
        from torch.nn import functional as F
        import torch.nn.functional as F2
        from torch.utils.data import DataLoader, Dataset
        import torch.utils.data
        from torch.optim.lr_scheduler import CosineAnnealingWarmRestarts, LambdaLR
        import torch.optim as optim
        from torch.nn.modules.activation import MultiheadAttention, GELU
        from torch.nn.modules.linear import Linear
        import torch.nn.modules.container
        from torch.cuda.amp import GradScaler
        import torch.backends.cudnn as cudnn
        from torch.nn.attention import sdpa_kernel, SDPBackend
        from torch.serialization import add_safe_globals
        import torch.onnx, torch.jit, torch.amp, torch.cpu.amp
        import minigrad
        checks = {
            "nn": nn is minigrad.nn,
            "F": F is minigrad.nn.functional and F2 is F,
            "DataLoader": DataLoader is minigrad.utils.data.DataLoader and torch.utils.data is minigrad.utils.data,
            "scheduler": CosineAnnealingWarmRestarts is minigrad.optim.lr_scheduler.CosineAnnealingWarmRestarts,
            "optim": optim is minigrad.optim,
            "modules": MultiheadAttention is minigrad.nn.MultiheadAttention and Linear is minigrad.nn.Linear,
            "container": torch.nn.modules.container.Sequential is minigrad.nn.Sequential,
            "cuda.amp": GradScaler is minigrad.cuda.amp.GradScaler,
            "cudnn": cudnn is minigrad.backends.cudnn,
            "one class": isinstance(nn.Linear(2, 3), minigrad.nn.Linear),
            "specs kept": nn.__spec__.name == "minigrad.nn" and nn.__name__ == "minigrad.nn",
            "registered": sys.modules["torch.nn"] is minigrad.nn,
            "no copies": all(module is sys.modules["minigrad." + name[len("torch."):]]
                             for name, module in list(sys.modules.items()) if name.startswith("torch.")),
        }
        print(sorted(name for name, ok in checks.items() if not ok))
        try:
            import torch.no_such_module
        except ModuleNotFoundError as e:
            print("missing:", e.name)
    """)
    assert out.splitlines() == ["[]", "missing: torch.no_such_module"]


def test_the_finder_leaves_other_names_alone():
    out = run_bound_to_minigrad("""
        import importlib.util
        sys.modules["torch"] = None          # what tools/no_torch.py does: torch cannot be imported
        try:
            import torch.nn
        except ImportError:
            print("refused")
        del sys.modules["torch"]
        import json.decoder, minigrad.nn
        print(importlib.util.find_spec("email.mime") is not None, minigrad.nn.__name__)
    """)
    assert out.split() == ["refused", "True", "minigrad.nn"]


# ---- 2. torch.nn.modules.<file>.<Class> --------------------------------------------------------
PYTORCH_PATHS = {
    "linear": ["Linear", "Identity"], "activation": ["MultiheadAttention", "GELU", "ReLU", "SiLU", "Tanh",
                                                     "Sigmoid", "Softmax", "LogSoftmax"],
    "normalization": ["LayerNorm"], "sparse": ["Embedding"], "dropout": ["Dropout"], "flatten": ["Flatten"],
    "container": ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"],
    "transformer": ["Transformer", "TransformerEncoder", "TransformerEncoderLayer", "TransformerDecoder",
                    "TransformerDecoderLayer"],
    "loss": ["CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "KLDivLoss", "BCEWithLogitsLoss"],
    "module": ["Module"],
}


@pytest.mark.parametrize("file", sorted(PYTORCH_PATHS))
def test_nn_modules_paths_are_the_same_classes(file):
    module = getattr(nn.modules, file)
    for name in PYTORCH_PATHS[file]:
        assert getattr(module, name) is getattr(nn, name), f"nn.modules.{file}.{name}"
        assert getattr(nn.modules, name) is getattr(nn, name)


@needs_torch
def test_every_minigrad_layer_is_where_pytorch_keeps_it():
    """For each class minigrad.nn shares with torch.nn, PyTorch's file under torch/nn/modules/ names it too."""
    for name, cls in vars(nn).items():
        theirs = getattr(torch.nn, name, None)
        if not isinstance(cls, type) or theirs is None or not theirs.__module__.startswith("torch.nn.modules."):
            continue
        file = theirs.__module__.split(".")[3]
        assert getattr(getattr(nn.modules, file, None), name, None) is cls, f"torch.nn.modules.{file}.{name}"


# ---- 3. compile, jit, onnx, backends, cuda, cpu ----------------------------------------------------
def test_compile_returns_the_model_or_function_itself():
    model = nn.Linear(2, 2)
    assert mg.compile(model) is model
    assert mg.compile(model, mode="max-autotune", fullgraph=True, dynamic=False, backend="inductor") is model

    @mg.compile
    def square(x):
        return x * x

    @mg.compile(mode="reduce-overhead")
    def cube(x):
        return x * x * x

    assert square(mg.tensor(3.0)).item() == 9.0 and cube(mg.tensor(2.0)).item() == 8.0
    assert square.__name__ == "square"  # the function itself, not a wrapper
    with pytest.raises(RuntimeError, match="unrecognized mode='fastest'"):
        mg.compile(model, mode="fastest")
    with pytest.raises(RuntimeError, match="either mode or options"):
        mg.compile(model, mode="default", options={"trace.enabled": True})
    with pytest.raises(TypeError, match="expected a callable"):
        mg.compile(3)
    assert mg.compiler.is_compiling() is False and mg.compiler.disable(square) is square


@needs_torch
def test_compile_accepts_pytorchs_keywords():
    ours = inspect.signature(mg.compile).parameters
    for name in ("model", "fullgraph", "dynamic", "backend", "mode", "options", "disable"):
        assert name in inspect.signature(torch.compile).parameters and name in ours


def test_jit_and_onnx():
    f = lambda x: x + 1  # noqa: E731
    assert mg.jit.script(f) is f and mg.jit.trace(f, (mg.ones(1),)) is f
    assert mg.jit.is_scripting() is False and mg.jit.is_tracing() is False

    class Net(nn.Module):
        @mg.jit.ignore
        def helper(self):
            return 5

        @mg.jit.unused
        def other(self):
            return 6

    assert Net().helper() == 5 and Net().other() == 6
    with pytest.raises(NotImplementedError, match="torch.onnx.export there"):
        mg.onnx.export(nn.Linear(2, 2), (mg.ones(1, 2),), "model.onnx")
    with pytest.raises(NotImplementedError, match="state_dict"):
        mg.jit.save(nn.Linear(2, 2), "m.pt")


def test_backend_flags_are_recorded_and_change_nothing():
    x, w = mg.randn(4, 5), mg.randn(5, 3)
    before = (x @ w).numpy().copy()
    previous = mg.get_float32_matmul_precision()
    try:
        assert previous == "highest" and mg.backends.cuda.matmul.allow_tf32 is False
        mg.backends.cuda.matmul.allow_tf32 = True  # as in PyTorch, the two settings are one
        assert mg.get_float32_matmul_precision() == "high"
        mg.set_float32_matmul_precision("medium")
        assert mg.backends.cuda.matmul.allow_tf32 is True
        with pytest.warns(UserWarning, match="'low' is not one of"):
            mg.set_float32_matmul_precision("low")
        assert mg.get_float32_matmul_precision() == "medium"  # unchanged, as PyTorch
        np.testing.assert_array_equal((x @ w).numpy(), before)  # NumPy computes float32 in full either way
        with pytest.raises(AttributeError, match="no flag 'allow_tf33'"):
            mg.backends.cuda.matmul.allow_tf33 = True
    finally:
        mg.set_float32_matmul_precision(previous)
    cudnn = mg.backends.cudnn
    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32) == (True, False, False, True)
    assert cudnn.is_available() is False and cudnn.version() is None
    assert mg.backends.mps.is_available() is False and mg.backends.mps.is_built() is False


def test_attention_kernel_switches():
    cuda = mg.backends.cuda
    SDPBackend = mg.nn.attention.SDPBackend
    assert [b.value for b in SDPBackend] == [-1, 0, 1, 2, 3, 4]  # PyTorch's numbering
    q = mg.randn(1, 2, 3, 4)
    expected = mg.nn.functional.scaled_dot_product_attention(q, q, q).numpy().copy()
    with mg.nn.attention.sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        assert cuda.flash_sdp_enabled() and not cuda.math_sdp_enabled()
        np.testing.assert_array_equal(mg.nn.functional.scaled_dot_product_attention(q, q, q).numpy(), expected)
    assert cuda.math_sdp_enabled() and cuda.flash_sdp_enabled()  # restored
    with cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False):
        assert cuda.math_sdp_enabled() and not cuda.flash_sdp_enabled() and not cuda.mem_efficient_sdp_enabled()
    with pytest.raises(TypeError, match="SDPBackend"):
        mg.nn.attention.sdpa_kernel("math")


@needs_torch
def test_backend_flags_and_queries_read_as_pytorchs_on_a_cpu_machine():
    for lib in (mg, torch):
        lib.backends.cuda.matmul.allow_tf32 = True
        assert lib.get_float32_matmul_precision() == "high"
        lib.backends.cuda.matmul.allow_tf32 = False
        assert lib.get_float32_matmul_precision() == "highest"
    for flag in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(mg.backends.cudnn, flag) == getattr(torch.backends.cudnn, flag), flag
    queries = ["cuda.is_available", "cuda.device_count", "cuda.is_bf16_supported", "backends.mps.is_available",
               "backends.cudnn.is_available", "jit.is_scripting", "compiler.is_compiling"]
    for query in queries:
        ours, theirs = mg, torch
        for part in query.split("."):
            ours, theirs = getattr(ours, part), getattr(theirs, part)
        assert ours() == theirs(), query


def test_cuda_and_cpu_namespaces():
    assert mg.cuda.is_available() is False and mg.cuda.device_count() == 0 and mg.cuda.is_bf16_supported() is False
    state = mg.get_rng_state()
    mg.cuda.manual_seed(1), mg.cuda.manual_seed_all(1), mg.cuda.empty_cache()  # no-ops: no GPU
    np.testing.assert_array_equal(mg.get_rng_state().numpy(), state.numpy())  # the CPU generator is untouched
    assert mg.cpu.is_available() and mg.cpu.device_count() == 1 and mg.cpu.synchronize() is None


# ---- bfloat16: a name, refused when used --------------------------------------------------------
def test_bfloat16_is_a_name_that_is_refused_when_used():
    assert repr(mg.bfloat16) == "minigrad.bfloat16" and mg.bfloat16 != mg.float32 and mg.bfloat16 is not None
    dtype = mg.bfloat16 if mg.cuda.is_available() and mg.cuda.is_bf16_supported() else mg.float32  # nanoGPT's line
    assert dtype == mg.float32
    uses = [lambda: mg.zeros(2, dtype=mg.bfloat16), lambda: mg.ones(2).to(mg.bfloat16),
            lambda: mg.tensor([1.0], dtype=mg.bfloat16), lambda: mg.ones(2).type(mg.bfloat16),
            lambda: nn.Linear(2, 2).to(mg.bfloat16), lambda: mg.tensor([1.0], dtype="bfloat16"),
            lambda: mg.randn(2, dtype=mg.bfloat16)]
    for use in uses:
        with pytest.raises(TypeError, match="bfloat16 is not supported: NumPy has no bfloat16.*float32"):
            use()
    with pytest.raises(TypeError, match="set_default_dtype: minigrad.bfloat16 cannot be the default"):
        mg.set_default_dtype(mg.bfloat16)
    assert mg.get_default_dtype() == mg.float32


# ---- torch.amp: autocast and GradScaler --------------------------------------------------------
def test_autocast_runs_in_float32_where_pytorch_would_disable_it():
    x = mg.randn(3, 4)
    w = mg.randn(4, 2)
    expected = (x @ w).numpy().copy()
    with pytest.warns(UserWarning, match="'cuda' is not available.*Disabling autocast"):
        region = mg.autocast(device_type="cuda", dtype=mg.float16)
    with region:
        assert mg.is_autocast_enabled() is False
        y = x @ w
    assert y.dtype == mg.float32
    np.testing.assert_array_equal(y.numpy(), expected)
    with pytest.warns(UserWarning, match="only supports bfloat16 and float16"):
        with mg.amp.autocast("cpu", dtype=mg.float32):
            assert (x @ w).dtype == mg.float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # enabled=False: silent, whatever the device and dtype
        with mg.autocast("cpu", dtype=mg.bfloat16, enabled=False):
            assert (x @ w).dtype == mg.float32
    with pytest.warns(UserWarning):
        with mg.cuda.amp.autocast():
            pass

    @mg.autocast("cpu", enabled=False)
    def decorated(a):
        return a * 2

    assert decorated(mg.tensor(2.0)).item() == 4.0


def test_autocast_refuses_where_it_would_have_to_compute_in_low_precision():
    for make in (lambda: mg.autocast("cpu"), lambda: mg.autocast("cpu", dtype=mg.bfloat16),
                 lambda: mg.amp.autocast("cpu", dtype=mg.float16), lambda: mg.cpu.amp.autocast()):
        with pytest.raises(RuntimeError, match="minigrad computes in float32 or float64 only.*enabled=False"):
            make()
    with pytest.raises(ValueError, match="device_type"):
        mg.autocast(mg.device("cpu"))
    with pytest.raises(RuntimeError, match="unknown device_type 'gpu'"):
        mg.autocast("gpu")


def scaler_run(lib, scaler, grads, dtype="float32"):
    """Steps of SGD through `scaler`, with the given (unscaled) gradients; the weights, scales and steps taken."""
    w = lib.nn.Parameter(lib.tensor([1.0, -2.0, 0.5], dtype=getattr(lib, dtype)))
    opt = lib.optim.SGD([w], lr=0.1)
    history = []
    for g in grads:
        opt.zero_grad()
        loss = (w * lib.tensor(g, dtype=getattr(lib, dtype))).sum()
        scaled = scaler.scale(loss)
        scaled.backward()
        scaler.step(opt)
        scaler.update()
        history.append((w.detach().numpy().copy(), scaler.get_scale(), scaled.item()))
    return history, scaler


GRADS = [[0.5, -1.0, 2.0], [1.0, float("inf"), 0.0], [0.25, 0.25, -0.5], [1.0, 2.0, 3.0], [0.0, 1.0, 0.0]]


def test_grad_scaler_on_the_cpu_scales_skips_and_adapts_as_written():
    history, scaler = scaler_run(mg, mg.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=2), GRADS)
    w = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    scale, good_steps = 1024.0, 0
    for (weights, new_scale, scaled_loss), g in zip(history, GRADS):
        g = np.array(g, dtype=np.float32)
        with np.errstate(invalid="ignore"):
            assert scaled_loss == pytest.approx(float(np.sum(w * g)) * scale, nan_ok=True)  # loss * scale
        if np.isfinite(g).all():
            w = w - np.float32(0.1) * g  # the step sees the true gradient: scale, then unscale, is exact
            good_steps += 1
            if good_steps == 2:  # growth_interval steps in a row without inf/NaN: double
                scale, good_steps = scale * 2, 0
        else:  # the step is skipped and the scale halved
            scale, good_steps = scale / 2, 0
        np.testing.assert_array_equal(weights, w)
        assert new_scale == scale
    assert [s for _, s, _ in history] == [1024.0, 512.0, 512.0, 1024.0, 1024.0]
    assert scaler.state_dict() == {"scale": 1024.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                   "growth_interval": 2, "_growth_tracker": 1}
    restored = mg.amp.GradScaler("cpu")
    restored.load_state_dict(scaler.state_dict())
    assert restored.state_dict() == scaler.state_dict()


def test_grad_scaler_misuse_is_refused_as_pytorch_does():
    scaler = mg.amp.GradScaler("cpu")
    w = nn.Parameter(mg.tensor([1.0]))
    opt = optim.SGD([w], lr=0.1)
    scaler.scale((w * 2).sum()).backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2.0 * 65536])
    scaler.unscale_(opt)
    np.testing.assert_array_equal(w.grad.numpy(), [2.0])  # unscaled in place, before clipping
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    scaler.update()
    with pytest.raises(AssertionError, match="No inf checks were recorded"):
        scaler.update()
    with pytest.raises(RuntimeError, match="closure"):
        scaler.step(opt, closure=lambda: 0.0)
    with pytest.raises(ValueError, match="Tensor or an iterable of Tensors"):
        scaler.scale(3.0)
    parts = scaler.scale([mg.tensor(1.0), (mg.tensor(2.0),)])
    assert parts[0].item() == 65536.0 and parts[1][0].item() == 131072.0
    with pytest.raises(RuntimeError, match="state dict is empty"):
        scaler.load_state_dict({})


def test_grad_scaler_for_cuda_warns_and_passes_through():
    with pytest.warns(UserWarning, match="GradScaler is enabled, but device 'cuda' is not available"):
        scaler = mg.cuda.amp.GradScaler(enabled=True)  # nanoGPT on a CPU with dtype='float16'
    assert not scaler.is_enabled() and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    loss = mg.tensor(3.0)
    assert scaler.scale(loss) is loss
    history, _ = scaler_run(mg, scaler, GRADS[:1])
    np.testing.assert_allclose(history[0][0], np.float32([1.0, -2.0, 0.5]) - np.float32(0.1) * np.float32(GRADS[0]))
    quiet = mg.amp.GradScaler("cuda", enabled=False)
    scaler.unscale_(None), scaler.update(), quiet.load_state_dict({})  # all pass through
    assert not quiet.is_enabled()


@needs_torch
def test_grad_scaler_matches_pytorch_step_for_step():
    # float64 weights, compared to the last bit or so: PyTorch's SGD step rounds once (a fused multiply-add),
    # minigrad's twice, which is SGD's business and not the scaler's; scales and scaled losses are exact
    ours, _ = scaler_run(mg, mg.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=2), GRADS, "float64")
    theirs, _ = scaler_run(torch, torch.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=2), GRADS, "float64")
    for (w1, s1, l1), (w2, s2, l2) in zip(ours, theirs):
        np.testing.assert_allclose(w1, w2, rtol=0, atol=1e-15)
        assert s1 == s2 and (l1 == l2 or math.isnan(l1) and math.isnan(l2))
    with pytest.warns(UserWarning):
        cuda_scaler = torch.amp.GradScaler("cuda", enabled=True)
    assert cuda_scaler.is_enabled() is False and cuda_scaler.state_dict() == {}


# ---- Generator objects and the RNG state ----------------------------------------------------
DRAWS = {
    "randn": lambda g: mg.randn(3, 2, generator=g),
    "rand": lambda g: mg.rand(4, generator=g),
    "randint": lambda g: mg.randint(0, 100, (5,), generator=g),
    "randperm": lambda g: mg.randperm(10, generator=g),
    "multinomial": lambda g: mg.multinomial(mg.tensor([0.2, 0.3, 0.5]), 6, replacement=True, generator=g),
    "normal_": lambda g: mg.empty(4).normal_(generator=g),
    "uniform_": lambda g: mg.empty(4).uniform_(-1, 1, generator=g),
    "init.trunc_normal_": lambda g: nn.init.trunc_normal_(mg.empty(2, 3), generator=g),
    "init.kaiming_uniform_": lambda g: nn.init.kaiming_uniform_(mg.empty(2, 3), generator=g),
}


@pytest.mark.parametrize("draw", sorted(DRAWS))
def test_a_generator_gives_the_same_draws_for_the_same_seed_whatever_else_runs(draw):
    mg.manual_seed(0)
    first = DRAWS[draw](mg.Generator().manual_seed(42)).numpy().copy()
    mg.randn(7), mg.rand(3)  # draws from the default generator in between change nothing
    mg.manual_seed(123)
    again = DRAWS[draw](mg.Generator().manual_seed(42)).numpy()
    np.testing.assert_array_equal(again, first)
    other = DRAWS[draw](mg.Generator().manual_seed(43)).numpy()
    assert not np.array_equal(other, first) or draw == "multinomial"  # 6 draws of 3 categories may repeat
    # and drawing from a generator leaves the default generator's stream as it was
    mg.manual_seed(5)
    expected = mg.randn(3).numpy().copy()
    mg.manual_seed(5)
    DRAWS[draw](mg.Generator().manual_seed(1))
    np.testing.assert_array_equal(mg.randn(3).numpy(), expected)


def test_generator_methods():
    g = mg.Generator()
    assert g.manual_seed(7) is g and g.initial_seed() == 7 and g.device == mg.device("cpu")
    state = g.get_state()
    assert state.dtype == mg.uint8 and state.ndim == 1
    a = mg.randn(5, generator=g).numpy().copy()
    assert g.set_state(state) is g
    np.testing.assert_array_equal(mg.randn(5, generator=g).numpy(), a)  # the same draws again
    assert g.initial_seed() == 7
    seed = g.seed()
    assert g.initial_seed() == seed and 0 <= seed < 2 ** 64
    assert mg.Generator().manual_seed(-1).initial_seed() == 2 ** 64 - 1  # negative seeds wrap, as PyTorch's
    with pytest.raises(TypeError, match="expected an int seed"):
        g.manual_seed(1.5)
    with pytest.raises(ValueError, match="outside the 64-bit range"):
        g.manual_seed(2 ** 64)
    with pytest.raises(TypeError, match="uint8"):
        g.set_state(mg.zeros(3))
    with pytest.raises(RuntimeError, match="not one"):
        g.set_state(mg.zeros(3, dtype=mg.uint8))
    with pytest.raises(TypeError, match="generator must be a minigrad.Generator"):
        mg.randn(2, generator=3)
    with pytest.raises(ValueError, match="runs on the CPU only"):
        mg.Generator("cuda")


def test_default_generator_seed_and_state():
    assert mg.manual_seed(11) is mg.default_generator and mg.initial_seed() == 11
    assert mg.manual_seed(2.9).initial_seed() == 2  # a float seed is truncated, as torch.manual_seed does
    state = mg.get_rng_state()
    a = mg.randn(4).numpy().copy()
    b = mg.rand(3).numpy().copy()
    mg.set_rng_state(state)
    np.testing.assert_array_equal(mg.randn(4).numpy(), a)
    np.testing.assert_array_equal(mg.rand(3).numpy(), b)
    assert mg.random.get_rng_state is mg.get_rng_state and mg.random.manual_seed is mg.manual_seed
    seed = mg.seed()
    assert mg.initial_seed() == seed
    mg.manual_seed(3)
    expected = mg.randn(2).numpy().copy()
    mg.manual_seed(3)
    with mg.random.fork_rng():
        mg.randn(10)
    np.testing.assert_array_equal(mg.randn(2).numpy(), expected)
    # the state survives a checkpoint
    mg.manual_seed(4)
    saved = mg.get_rng_state()
    first = mg.randn(3).numpy().copy()
    import io
    buffer = io.BytesIO()
    mg.save({"rng": saved}, buffer)
    buffer.seek(0)
    mg.set_rng_state(mg.load(buffer)["rng"])
    np.testing.assert_array_equal(mg.randn(3).numpy(), first)


@needs_torch
def test_generator_api_behaves_as_pytorchs():
    for lib in (mg, torch):
        g = lib.Generator()
        assert g.manual_seed(5) is g and g.initial_seed() == 5
        assert lib.Generator().manual_seed(-1).initial_seed() == 2 ** 64 - 1
        assert lib.manual_seed(3.7).initial_seed() == 3 and lib.initial_seed() == 3
        state = lib.get_rng_state()
        assert state.dtype == lib.uint8 and state.ndim == 1
        a = lib.randn(3)
        lib.set_rng_state(state)
        assert lib.equal(lib.randn(3), a)
        g.manual_seed(9)
        loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.arange(10)), batch_size=5, shuffle=True,
                                           generator=g)
        first = [b[0].tolist() for b in loader]
        g.manual_seed(9)
        assert [b[0].tolist() for b in loader] == first
        with pytest.raises((TypeError, RuntimeError)):
            g.set_state(lib.zeros(3))


def test_data_loading_with_a_generator():
    data = TensorDataset(mg.arange(20))

    def epoch(loader):
        return [i for batch in loader for i in batch[0].tolist()]

    g = mg.Generator().manual_seed(0)
    loader = DataLoader(data, batch_size=6, shuffle=True, generator=g)
    first = epoch(loader)
    second = epoch(loader)
    assert sorted(first) == sorted(second) == list(range(20)) and first != second
    g.manual_seed(0)
    assert epoch(loader) == first and epoch(loader) == second
    parts = random_split(range(10), [0.5, 0.5], generator=mg.Generator().manual_seed(1))
    again = random_split(range(10), [0.5, 0.5], generator=mg.Generator().manual_seed(1))
    assert [list(p) for p in parts] == [list(p) for p in again]
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(10))
    subset = SubsetRandomSampler([3, 5, 7], generator=mg.Generator().manual_seed(2))
    assert sorted(subset) == [3, 5, 7]
    with pytest.raises(TypeError, match="RandomSampler: generator must be a minigrad.Generator"):
        DataLoader(data, shuffle=True, generator="seed")


def test_shuffling_does_not_depend_on_what_the_epoch_draws():
    """As PyTorch: each pass seeds its own generator from the default one, so dropout's draws during the
    epoch do not change which samples come next."""
    loader = DataLoader(TensorDataset(mg.arange(40)), batch_size=4, shuffle=True)
    mg.manual_seed(0)
    quiet = [b[0].tolist() for b in loader]
    mg.manual_seed(0)
    busy = []
    for batch in loader:
        busy.append(batch[0].tolist())
        mg.randn(100)  # what a training step with dropout would draw
    assert busy == quiet


# ---- 4. CosineAnnealingWarmRestarts --------------------------------------------------------------
def warm_restarts_lrs(lib, steps, **kwargs):
    """lr after construction and after each entry of `steps` (None: step(); a number: step(epoch))."""
    w = lib.nn.Parameter(lib.zeros(1))
    opt = lib.optim.SGD([{"params": [w]}, {"params": [lib.nn.Parameter(lib.zeros(1))], "lr": 0.5}], lr=1.0)
    scheduler = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, **kwargs)
    lrs = [scheduler.get_last_lr()]
    for epoch in steps:
        opt.step()
        scheduler.step() if epoch is None else scheduler.step(epoch)
        lrs.append(scheduler.get_last_lr())
    return lrs, scheduler


def test_warm_restarts_by_hand():
    lrs, scheduler = warm_restarts_lrs(mg, [None] * 7, T_0=2, T_mult=2)
    c = lambda t, T: (1 + math.cos(math.pi * t / T)) / 2  # noqa: E731
    # periods of 2, then 4 steps: lr restarts at the base lr at steps 2 and 6
    expected = [c(0, 2), c(1, 2), c(0, 4), c(1, 4), c(2, 4), c(3, 4), c(0, 8), c(1, 8)]
    np.testing.assert_allclose([lr[0] for lr in lrs], expected, rtol=1e-15)
    np.testing.assert_allclose([lr[1] for lr in lrs], [0.5 * e for e in expected], rtol=1e-15)
    assert (scheduler.T_i, scheduler.T_cur, scheduler.last_epoch) == (8, 1, 7)
    lrs, _ = warm_restarts_lrs(mg, [None] * 4, T_0=3, eta_min=0.1)
    np.testing.assert_allclose([lr[0] for lr in lrs],
                               [0.1 + 0.9 * c(t % 3, 3) for t in range(5)], rtol=1e-15)
    # step(epoch) with a float epoch, as in `scheduler.step(epoch + i / iters)`
    lrs, scheduler = warm_restarts_lrs(mg, [0.5, 2.5, 6.25, 1.0], T_0=2, T_mult=2)
    # epoch 2.5: second period (starts at 2, length 4), 0.5 into it; 6.25: third period (starts at 6, length 8)
    expected = [c(0, 2), c(0.5, 2), c(0.5, 4), c(0.25, 8), c(1.0, 2)]
    np.testing.assert_allclose([lr[0] for lr in lrs], expected, rtol=1e-15)
    lrs, _ = warm_restarts_lrs(mg, [5.5], T_0=2)
    assert lrs[1][0] == pytest.approx(c(1.5, 2), rel=1e-15)  # T_mult=1: epoch mod T_0
    for bad in (dict(T_0=0), dict(T_0=2.0), dict(T_0=2, T_mult=0), dict(T_0=2, eta_min="0")):
        with pytest.raises(ValueError):
            warm_restarts_lrs(mg, [], **bad)
    with pytest.raises(ValueError, match="non-negative epoch"):
        warm_restarts_lrs(mg, [-1], T_0=2)


@needs_torch
@pytest.mark.parametrize("kwargs,steps", [
    (dict(T_0=3), [None] * 10),
    (dict(T_0=2, T_mult=2, eta_min=0.01), [None] * 20),
    (dict(T_0=2, T_mult=3), [None, 0.3, 1.7, 2.0, 5.99, 8.0, 26.5, None, None, 3, 30.25]),
    (dict(T_0=5, eta_min=0.2), [i + j / 4 for i in range(3) for j in range(4)] + [None, None]),
])
def test_warm_restarts_match_pytorch(kwargs, steps):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's deprecation warning for step(epoch)
        ours, s1 = warm_restarts_lrs(mg, steps, **kwargs)
        theirs, s2 = warm_restarts_lrs(torch, steps, **kwargs)
    np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-15, atol=0)
    assert (s1.T_i, s1.T_cur, s1.last_epoch) == (s2.T_i, s2.T_cur, s2.last_epoch)


# ---- 5. samplers that draw lazily ------------------------------------------------------------
def test_an_infinite_random_sampler_draws_a_chunk_at_a_time():
    data = TensorDataset(mg.arange(1000), mg.arange(1000) * 2)
    sampler = RandomSampler(data, replacement=True, num_samples=int(1e10))
    assert len(sampler) == 10 ** 10
    loader = DataLoader(data, batch_size=8, sampler=sampler, pin_memory=True)
    assert len(loader) == 10 ** 10 // 8
    tracemalloc.start()
    try:
        batches = iter(loader)
        for _ in range(200):
            x, y = next(batches)
            assert x.shape == (8,) and (y.numpy() == 2 * x.numpy()).all()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 ** 20, f"iterating 1,600 samples of an infinite sampler peaked at {peak} bytes"
    # iter(loader) again starts a fresh pass; the same seed gives the same one
    mg.manual_seed(0)
    first = next(iter(loader))[0].tolist()
    mg.manual_seed(0)
    assert next(iter(loader))[0].tolist() == first
    # without replacement an infinite sampler chains whole permutations, also lazily
    chained = iter(RandomSampler(range(10), num_samples=int(1e10)))
    blocks = [sorted(next(chained) for _ in range(10)) for _ in range(3)]
    assert blocks == [list(range(10))] * 3


def test_random_sampler_with_an_explicit_generator_is_lazy_and_reproducible():
    def draw(seed, count):
        it = iter(RandomSampler(range(7), replacement=True, num_samples=int(1e12),
                                generator=mg.Generator().manual_seed(seed)))
        return [next(it) for _ in range(count)]

    assert draw(3, 100) == draw(3, 100) and draw(3, 100)[:40] == draw(3, 40)
    assert set(draw(3, 100)) == set(range(7))
    with pytest.raises(ValueError, match="empty data source"):
        list(RandomSampler([], replacement=True, num_samples=3))


def test_weighted_random_sampler():
    mg.manual_seed(0)
    draws = list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 8000))
    counts = np.bincount(draws, minlength=4) / len(draws)
    assert counts[0] == counts[2] == 0  # zero weight: never drawn
    np.testing.assert_allclose(counts, [0, 0.25, 0, 0.75], atol=0.02)
    distinct = list(WeightedRandomSampler(mg.tensor([1.0, 1.0, 5.0, 1.0]), 4, replacement=False))
    assert sorted(distinct) == [0, 1, 2, 3]
    def first(count, seed):  # a huge num_samples costs nothing until drawn
        sampler = WeightedRandomSampler([1.0, 2.0], int(1e12), generator=mg.Generator().manual_seed(seed))
        assert len(sampler) == 10 ** 12
        it = iter(sampler)
        return [next(it) for _ in range(count)]

    assert first(100, 0) == first(100, 0) and set(first(100, 0)) == {0, 1} and first(100, 1) != first(100, 0)
    for bad, message in [(([1.0], 0), "num_samples must be a positive integer"),
                         (([1.0], 2, 1), "replacement must be a bool"),
                         (([[1.0]], 2), "1-d sequence"), (([-1.0, 1.0], 2), "negative"),
                         (([0.0, 0.0], 2), "sum to 0"), (([1.0, 1.0], 3, False), "without replacement")]:
        with pytest.raises(ValueError, match=message):
            WeightedRandomSampler(*bad)


@needs_torch
def test_sampler_errors_have_pytorchs_types():
    for lib in (mg, torch):
        data = lib.utils.data
        for bad in (dict(num_samples=0), dict(num_samples=1.5)):
            with pytest.raises(ValueError):
                data.RandomSampler(range(3), **bad)
        with pytest.raises(TypeError):
            data.RandomSampler(range(3), replacement=1)
        with pytest.raises(ValueError):
            data.WeightedRandomSampler([1.0], 0)
        with pytest.raises(ValueError):
            data.WeightedRandomSampler([[1.0]], 2)
        assert len(data.RandomSampler(range(3), replacement=True, num_samples=int(1e10))) == 10 ** 10


# ---- neighbours: streams, concatenation, default device, determinism switch ----------------------
class Countdown(mg.utils.data.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n, 0, -1))


def test_an_iterable_dataset_is_batched_in_its_own_order():
    assert [b.tolist() for b in DataLoader(Countdown(7), batch_size=3)] == [[7, 6, 5], [4, 3, 2], [1]]
    assert [b.tolist() for b in DataLoader(Countdown(7), batch_size=3, drop_last=True)] == [[7, 6, 5], [4, 3, 2]]
    assert list(DataLoader(Countdown(3), batch_size=None)) == [3, 2, 1]
    for option in (dict(shuffle=True), dict(sampler=[0, 1]), dict(batch_sampler=[[0]])):
        with pytest.raises(ValueError, match="IterableDataset: expected unspecified"):
            DataLoader(Countdown(3), **option)
    with pytest.raises(TypeError):  # a stream without __len__ has no length, as in PyTorch
        len(DataLoader(Countdown(3), batch_size=2))
    assert mg.utils.data.get_worker_info() is None


def test_concatenated_datasets():
    a, b = TensorDataset(mg.arange(3)), TensorDataset(mg.arange(10, 12))
    both = a + b
    assert isinstance(both, mg.utils.data.ConcatDataset) and len(both) == 5 and both.cumulative_sizes == [3, 5]
    assert [both[i][0].item() for i in range(5)] == [0, 1, 2, 10, 11] and both[-1][0].item() == 11
    with pytest.raises(IndexError, match="index 5 is out of range"):
        both[5]
    with pytest.raises(ValueError, match="empty"):
        mg.utils.data.ConcatDataset([])
    with pytest.raises(TypeError, match="IterableDataset"):
        mg.utils.data.ConcatDataset([Countdown(2)])
    assert sorted(i for batch in DataLoader(both, batch_size=2, shuffle=True) for i in batch[0].tolist()) == \
        [0, 1, 2, 10, 11]


@needs_torch
def test_streams_and_concatenation_match_pytorch():
    for lib in (mg, torch):
        data = lib.utils.data

        class Stream(data.IterableDataset):
            def __iter__(self):
                return iter([lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0]), lib.tensor([5.0, 6.0])])

            def __len__(self):
                return 3

        loader = data.DataLoader(Stream(), batch_size=2)
        assert len(loader) == 2 and [b.tolist() for b in loader] == [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0]]]
        both = data.TensorDataset(lib.arange(3)) + data.TensorDataset(lib.arange(10, 12))
        assert both.cumulative_sizes == [3, 5] and both[3][0].item() == 10 and both[-2][0].item() == 10


def test_default_device_and_determinism_switches():
    mg.set_default_device("cpu")
    mg.set_default_device(None)
    assert mg.get_default_device() == mg.device("cpu")
    with pytest.raises(ValueError, match="set_default_device: minigrad runs on the CPU only"):
        mg.set_default_device("cuda")
    try:
        mg.use_deterministic_algorithms(True, warn_only=True)
        assert mg.are_deterministic_algorithms_enabled() and mg.is_deterministic_algorithms_warn_only_enabled()
    finally:
        mg.use_deterministic_algorithms(False)
    assert not mg.are_deterministic_algorithms_enabled()
    with pytest.raises(TypeError, match="must be bools"):
        mg.use_deterministic_algorithms("yes")
