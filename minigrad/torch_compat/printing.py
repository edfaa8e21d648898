"""Printing tensors as PyTorch prints them, so that what a learner sees matches the lecture or book.

    tensor([0.0480, 0.0170, 0.1000])                 4 decimals, every element as wide as the widest
    tensor([1., 2.])                                  floats that are all whole numbers: `1.`
    tensor([1.0000e-08, 1.0000e+08])                  scientific when max/min > 1000, max > 1e8 or min < 1e-4
    tensor([0., 1., 2.,  ..., 7., 8., 9.])            more than `threshold` elements: `edgeitems` each end

The rules, as PyTorch's documentation and output show them: one format is chosen for the whole tensor
from its nonzero finite values (only the summarized ones when it is summarized); rows wrap at
`linewidth`, nested brackets line up under the opening `tensor(`; the suffixes (`dtype=` for a dtype
other than the default float, int64 and bool; `size=` for an empty tensor that is not 1-D;
`grad_fn=<...>` or `requires_grad=True`) follow the data, on a new line when they would pass the width.
`set_printoptions` changes the options for every later print, as `torch.set_printoptions` does.
"""
import math

import numpy as np

_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}
_options = dict(_PROFILES["default"], sci_mode=None)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """PyTorch's print options: a profile ("default", "short", "full") first, then each option given.

    sci_mode=True or False forces scientific notation on or off; None (the default) lets each tensor choose.
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}, got {profile!r}")
        _options.update(_PROFILES[profile])
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            _options[name] = value
    _options["sci_mode"] = sci_mode  # as PyTorch: not passing it goes back to choosing per tensor


def get_printoptions():
    """The current print options, as a dict (PyTorch keeps it in torch._tensor_str.get_printoptions)."""
    return dict(_options)


def dtype_name(dtype):
    """torch.float32, torch.int64, torch.bool: a NumPy dtype under PyTorch's printed name."""
    return "torch." + str(np.dtype(dtype))


class _Formatter:
    """One format for every element: chosen from the values the print shows, padded to one width."""

    def __init__(self, values):
        self.floating = values.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.width = True, False, 1
        flat = values.reshape(-1)
        if not self.floating:
            self.width = max((len(str(v)) for v in flat.tolist()), default=1)
            return
        shown = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if shown.size:
            magnitude = np.abs(shown)
            small, large = float(magnitude.min()), float(magnitude.max())
            self.int_mode = bool(np.all(shown == np.ceil(shown)))
            precision = _options["precision"]
            forced = _options["sci_mode"]  # set_printoptions(sci_mode=...) decides before the widths
            self.sci_mode = large / small > 1000.0 or large > 1.0e8 or small < 1.0e-4 if forced is None else forced
            if self.sci_mode:
                texts = [f"{v:.{precision}e}" for v in shown.tolist()]
            elif self.int_mode:
                texts = [f"{v:.0f}." for v in shown.tolist()]
            else:
                texts = [f"{v:.{precision}f}" for v in shown.tolist()]
            self.width = max(len(t) for t in texts)
        elif _options["sci_mode"] is not None:
            self.sci_mode = _options["sci_mode"]

    def format(self, value):
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:.{_options['precision']}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{_options['precision']}f}"
        return text.rjust(self.width)


def _summarized(array):
    """The elements a summarized print shows: `edgeitems` at each end of every dimension."""
    edge = _options["edgeitems"]
    if array.ndim == 0:
        return array
    if array.ndim == 1:
        return np.concatenate([array[:edge], array[-edge:]]) if array.shape[0] > 2 * edge else array
    if not edge:
        return np.zeros([0] * array.ndim, dtype=array.dtype)
    rows = list(range(edge)) + list(range(len(array) - edge, len(array))) if len(array) > 2 * edge \
        else range(len(array))
    return np.stack([_summarized(array[i]) for i in rows])


def _vector(array, indent, summarize, formatter):
    per_line = max(1, int((_options["linewidth"] - indent) // (formatter.width + 2)))  # ", " between elements
    edge = _options["edgeitems"]
    if summarize and not edge:
        texts = ["..."]
    elif summarize and array.shape[0] > 2 * edge:
        texts = ([formatter.format(v) for v in array[:edge].tolist()] + [" ..."]
                 + [formatter.format(v) for v in array[-edge:].tolist()])
    else:
        texts = [formatter.format(v) for v in array.tolist()]
    lines = [", ".join(texts[i:i + per_line]) for i in range(0, len(texts), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(array, indent, summarize, formatter):
    if array.ndim == 0:
        return formatter.format(array.item())
    if array.ndim == 1:
        return _vector(array, indent, summarize, formatter)
    edge = _options["edgeitems"]
    if summarize and array.shape[0] > 2 * edge:
        parts = ([_nested(array[i], indent + 1, summarize, formatter) for i in range(edge)] + ["..."]
                 + [_nested(array[i], indent + 1, summarize, formatter) for i in range(len(array) - edge, len(array))])
    else:
        parts = [_nested(array[i], indent + 1, summarize, formatter) for i in range(array.shape[0])]
    # a blank line between blocks of 3-D and up, one per dimension below the first
    return "[" + ("," + "\n" * (array.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _with_suffixes(text, suffixes, indent):
    """`, suffix` after the data, or on a new line where it would pass the line width."""
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > _options["linewidth"]:
            text += ",\n" + " " * indent + suffix
            last_line = indent + len(suffix)
        else:
            text += ", " + suffix
            last_line += len(suffix) + 2
    return text + ")"


def tensor_repr(array, default_float, grad_fn_name=None, requires_grad=False):
    """The text PyTorch prints for a tensor holding `array` (default_float: the default dtype now)."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    shown_dtype = array.dtype not in (default_float, np.dtype(np.int64), np.dtype(np.bool_))
    if array.size == 0:
        if array.ndim != 1:
            suffixes.append(f"size={tuple(array.shape)}")
        if array.dtype != default_float:  # an empty tensor has no elements to show it is not float
            suffixes.append(f"dtype={dtype_name(array.dtype)}")
        body = "[]"
    else:
        if not _options["edgeitems"]:
            suffixes.append(f"size={tuple(array.shape)}")
        if shown_dtype:
            suffixes.append(f"dtype={dtype_name(array.dtype)}")
        if array.dtype == np.float16:  # formatted in float32, as PyTorch does
            array = array.astype(np.float32)
        summarize = array.size > _options["threshold"]
        formatter = _Formatter(_summarized(array) if summarize else array)
        body = _nested(array, indent, summarize, formatter)
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    return _with_suffixes(prefix + body, suffixes, indent)
