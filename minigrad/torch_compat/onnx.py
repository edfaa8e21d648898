"""torch.onnx: present, so that `import torch.onnx` works; exporting is refused.

ONNX export traces a model into an ONNX graph; minigrad has no tracer or ONNX writer. The road to
ONNX goes through PyTorch: a minigrad model's state_dict loads into the PyTorch model with the same
source (docs/pytorch_surface.md, "When you outgrow minigrad"), which torch.onnx.export can then export.
"""


def export(model, args=(), f=None, *unused_args, **unused_kwargs):
    raise NotImplementedError(
        "onnx.export: minigrad cannot export ONNX. Load the model's state_dict into the same model built "
        "with PyTorch (minigrad_models.pytorch does this for minigrad's models) and call torch.onnx.export there."
    )


def is_in_onnx_export():
    return False
