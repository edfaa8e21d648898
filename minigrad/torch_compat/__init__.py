"""minigrad.torch_compat: the PyTorch surface, kept apart from the core.

Here are the modules that exist only because PyTorch code expects them: to mirror PyTorch's module
layout (`torch.cuda`, `torch.backends.cudnn`, `torch.nn.modules.linear`, `torch.autograd.variable`)
or to accept PyTorch's options and say what they mean on a CPU-only NumPy library (`device="cpu"`,
`torch.compile`, autocast, `torch.distributed`, ...). None of them computes a number: the tensor,
the engine, the ops, nn, optim, autograd and data are the core, and they are read without these.

Each module keeps PyTorch's name: `minigrad.cuda` *is* `minigrad.torch_compat.cuda`, the same module
object under both names, and with `sys.modules["torch"] = minigrad`, `import torch.cuda` gives it too
(import_alias.py: its table RELOCATED maps each PyTorch path to the file here).

    device.py          device, check_device: "cpu" is accepted everywhere, any other device is a clear error
    size.py            Size (torch.Size)
    determinism.py     use_deterministic_algorithms (recorded; minigrad is deterministic anyway)
    compiler.py        compile (returns the model or function itself); jit.py, onnx.py: TorchScript, ONNX
    amp/               autocast (CPU bfloat16 emulated by rounding in float32) and GradScaler
    backends/          torch.backends.* switches (recorded, change no number); cuda/, cpu/: torch.cuda, torch.cpu
    distributed.py     one process: the names, refusing what needs a process group
    nn_modules/        torch.nn.modules.<file>: the layers of minigrad.nn under PyTorch's file names
    nn_parallel.py     torch.nn.parallel: DataParallel (the module itself), DistributedDataParallel (refused)
    autograd_variable.py  torch.autograd.Variable, for code from before PyTorch 0.4
    import_alias.py    the PyTorch paths of the modules here, and `torch` bound to minigrad

This package imports nothing when imported itself: minigrad/__init__.py imports what it needs, and
the core's few uses of it (device checks, nn's backend switches) import single leaf modules.
"""
