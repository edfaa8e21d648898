"""The way out: this package's models, and the checkpoints `minigrad train` writes, on PyTorch.

    from minigrad_models.pytorch import load_checkpoint, transformer
    model, checkpoint = load_checkpoint("runs/dates.npz")           # a torch.nn.Module, eval mode
    ids = transformer.greedy_decode(model, src, max_len, BOS, EOS)  # the same decoding code

models/transformer.py and models/gpt.py are PyTorch code written against three names, `torch`, `nn`
and `F`, which models/library.py binds to minigrad. This module imports the same two files a second
time, as the package `minigrad_models_on_pytorch` whose `library` binds those names to PyTorch: nothing is
translated, the source that trained is the source that runs. `minigrad_models.pytorch.transformer` and
`minigrad_models.pytorch.gpt` are those modules. PyTorch is imported only when one of them, or
load_checkpoint, is first used.
"""
import importlib
import sys
import types

import numpy as np

PACKAGE = "minigrad_models_on_pytorch"
MODEL_MODULES = ("transformer", "gpt")


def _package():
    """The package minigrad_models_on_pytorch: models/ again, with its library bound to PyTorch."""
    if PACKAGE not in sys.modules:
        import torch

        import minigrad_models

        library = types.ModuleType(f"{PACKAGE}.library", "torch, nn and F bound to PyTorch")
        library.torch, library.nn, library.F = torch, torch.nn, torch.nn.functional
        library.PositionalEncoding = _positional_encoding_on(torch)
        package = types.ModuleType(PACKAGE, "the files of models/, imported with PyTorch as their library")
        package.__path__ = list(minigrad_models.__path__)  # the same directory: the same source files
        package.library = library
        sys.modules[f"{PACKAGE}.library"] = library
        sys.modules[PACKAGE] = package
    return sys.modules[PACKAGE]


def __getattr__(name):
    """minigrad_models.pytorch.transformer and models.pytorch.gpt: the model modules running on PyTorch."""
    if name in MODEL_MODULES:
        _package()
        return importlib.import_module(f"{PACKAGE}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _positional_encoding_on(torch):
    """minigrad's nn.PositionalEncoding for PyTorch, which has none: x + PE[offset : offset + T],
    then dropout, with the same table (minigrad.nn.positional.sinusoidal_table)."""
    from minigrad.nn.positional import sinusoidal_table

    class PositionalEncoding(torch.nn.Module):
        def __init__(self, d_model, max_len=5000, dropout=0.0):
            super().__init__()
            self.d_model, self.max_len = d_model, max_len
            self.dropout = torch.nn.Dropout(dropout)
            table = torch.from_numpy(sinusoidal_table(max_len, d_model, np.float64))
            self.register_buffer("table", table, persistent=False)  # moves with the model, not saved

        def forward(self, x, offset=0):
            T = x.shape[-2]
            if offset + T > self.max_len:
                raise ValueError(f"PositionalEncoding: positions {offset}..{offset + T - 1} exceed "
                                 f"max_len={self.max_len}; build the model with a larger max_len")
            return self.dropout(x + self.table[offset:offset + T].to(x.dtype))

    return PositionalEncoding


def load_checkpoint(path, device="cpu"):
    """(model, checkpoint) from a checkpoint `minigrad train` wrote: the model as an instance of the
    same class on PyTorch (built from the same source file), with the weights of its best held-out
    evaluation (as `minigrad translate` uses them) loaded with strict=True, in eval mode on `device`. checkpoint is the dict minigrad's mg.load reads from the file (task,
    configs, vocabularies, history); PyTorch and minigrad are both needed."""
    import torch

    import minigrad as mg

    from .training import check_model_layout

    checkpoint = mg.load(path)
    check_model_layout(checkpoint, path)
    module = __getattr__("gpt" if checkpoint.get("task") == "addition" else "transformer")
    if checkpoint.get("task") == "addition":
        model = module.DecoderOnlyLM(module.GPTConfig(**checkpoint["model_config"]))
    else:
        model = module.Seq2SeqTransformer(module.TransformerConfig(**checkpoint["model_config"]))
    best = checkpoint.get("best")
    weights = best["model"] if isinstance(best, dict) else checkpoint["model"]  # the model translate uses
    state = {name: torch.from_numpy(np.array(value)) for name, value in weights.items()}
    model.load_state_dict(state, strict=True)
    return model.to(device).eval(), checkpoint
