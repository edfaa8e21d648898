"""The PyTorch surface (minigrad/torch_compat/): what real PyTorch training code touches besides the math.

Binding `torch` to minigrad however the code imports submodules; the relocated modules under PyTorch's
paths (minigrad.cuda is minigrad.torch_compat.cuda); torch.nn.modules.<file> paths; torch.compile,
torch.jit, torch.onnx; torch.backends flags; torch.cuda / torch.cpu; torch.amp's autocast and
GradScaler; the default device and the determinism switch.

Every behaviour has a check with values known independently (hand-computed, or a property that
holds whatever the draws); where PyTorch is installed, the same code also runs on it and the two
are compared.
"""
import importlib
import inspect
import math
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim
from minigrad.torch_compat import import_alias

try:
    import torch
except ImportError:  # the comparisons skip; the rest runs
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed (the comparison needs it)")

# ---- `sys.modules["torch"] = minigrad`, then any form of submodule import ------------------------
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



def test_the_relocated_modules_are_the_modules_at_pytorchs_paths():
    """minigrad.cuda is minigrad.torch_compat.cuda, and so on for every entry of import_alias.RELOCATED and
    their submodules: one module object under both names, whichever is imported first."""
    for path, home in import_alias.RELOCATED.items():
        module = importlib.import_module(f"minigrad.torch_compat.{home}")
        assert importlib.import_module(f"minigrad.{path}") is module, path
        parent, _, name = path.rpartition(".")
        holder = importlib.import_module(f"minigrad.{parent}" if parent else "minigrad")
        assert getattr(holder, name) is module or (path, mg.device) == ("device", mg.torch_compat.device.device), path
    out = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import sys
        import minigrad.cuda.amp, minigrad.backends.cudnn, minigrad.nn.modules.linear, minigrad.device
        from minigrad.nn.parallel import DistributedDataParallel
        from minigrad.autograd.variable import Variable
        import minigrad
        from minigrad.torch_compat import import_alias
        copies = [name for name, module in list(sys.modules.items()) if name.startswith("minigrad.")
                  and module is not sys.modules.get(import_alias.relocated(name))]
        print(copies, all("minigrad." + path in sys.modules for path in import_alias.RELOCATED))
        print(minigrad.cuda.amp is minigrad.torch_compat.cuda.amp, minigrad.backends.cudnn.__name__,
              minigrad.nn.modules.linear.Linear is minigrad.nn.Linear,
              DistributedDataParallel is minigrad.nn.parallel.DistributedDataParallel,
              Variable is minigrad.autograd.Variable and isinstance(minigrad.ones(1), Variable),
              minigrad.device is minigrad.torch_compat.device.device,
              sys.modules["minigrad.device"] is minigrad.torch_compat.device)
    """)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["[] True", "True minigrad.torch_compat.backends.cudnn True True True True True"]

# ---- torch.nn.modules.<file>.<Class> -------------------------------------------------------------
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


# ---- compile, jit, onnx, backends, cuda, cpu -----------------------------------------------------
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


def test_autocast_checks_its_arguments():
    # CPU autocast to bfloat16 or float16 runs: tests/test_autocast_cpu.py
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

# ---- the default device, the determinism switch --------------------------------------------------
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
