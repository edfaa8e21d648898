"""torch.backends.mha: the switch for PyTorch's fast inference path of its attention modules.

In minigrad it rules one behaviour that PyTorch ties to that path: nn.TransformerEncoder's zeros at
padded positions in inference (see TransformerEncoder in minigrad/nn/transformer.py).
"""
_fastpath = True


def get_fastpath_enabled():
    """Whether the fast path may be taken (True unless set_fastpath_enabled(False))."""
    return _fastpath


def set_fastpath_enabled(value):
    global _fastpath
    _fastpath = bool(value)
