"""NumPy's argument names, which PyTorch accepts as aliases: axis= for dim= and keepdims= for keepdim=.

PyTorch's argument parser renames them for every op it binds from C++ (`x.max(axis=1)`,
`torch.std_mean(x, axis=(0, 2), keepdims=True)`, `torch.concatenate(ts, axis=1)`); its Python-level
functions (torch.nn.functional, torch.split, torch.norm, Tensor.split) do not take them. So the
aliases are mapped here, once, for the names below (found by calling each of PyTorch's names with
axis=: tests/test_documented_arguments.py checks the list against PyTorch), and minigrad's own
signatures keep PyTorch's names only.
"""
import functools

# torch.<name> and Tensor.<name> that take axis= for dim= (and keepdims= for keepdim=, where they have one)
TORCH_FUNCTIONS = (
    "all", "amax", "amin", "aminmax", "any", "argmax", "argmin", "argsort", "cat", "chunk", "concat", "concatenate",
    "cosine_similarity", "count_nonzero", "cummax", "cummin", "cumprod", "cumsum", "cumulative_trapezoid", "diff",
    "frobenius_norm", "gradient", "kthvalue", "log_softmax", "logcumsumexp", "logsumexp", "max", "mean", "median",
    "min", "mode", "nanmean", "nanmedian", "nanquantile", "nansum", "prod", "quantile", "repeat_interleave",
    "slice_scatter", "softmax", "sort", "squeeze", "stack", "std", "std_mean", "sum", "take_along_dim",
    "tensor_split", "topk", "trapezoid", "trapz", "unbind", "unsqueeze", "var", "var_mean",
)
TENSOR_METHODS = (
    "all", "amax", "amin", "aminmax", "any", "argmax", "argmin", "argsort", "chunk", "count_nonzero", "cummax",
    "cummin", "cumprod", "cumprod_", "cumsum", "cumsum_", "diff", "kthvalue", "log_softmax", "logcumsumexp",
    "logsumexp", "max", "mean", "median", "min", "mode", "nanmean", "nanmedian", "nanquantile", "nansum", "prod",
    "quantile", "repeat_interleave", "size", "slice_scatter", "softmax", "sort", "squeeze", "squeeze_", "std",
    "stride", "sum", "take_along_dim", "tensor_split", "topk", "unbind", "unsqueeze", "unsqueeze_", "var",
)
_ALIASES = {"axis": "dim", "keepdims": "keepdim"}


def _renamed(name, kwargs):
    for alias, own in _ALIASES.items():
        if alias in kwargs:
            if own in kwargs:
                raise TypeError(f"{name}(): got both {own}= and its alias {alias}=")
            kwargs[own] = kwargs.pop(alias)
    return kwargs


def accepting_numpy_names(function, name):
    """function, with axis= and keepdims= passed on as dim= and keepdim=."""
    if getattr(function, "_numpy_names", False):
        return function

    @functools.wraps(function)
    def with_numpy_names(*args, **kwargs):
        if "axis" in kwargs or "keepdims" in kwargs:
            kwargs = _renamed(name, kwargs)
        return function(*args, **kwargs)

    with_numpy_names._numpy_names = True
    return with_numpy_names


def install(namespace, tensor_class):
    """Give the functions of TORCH_FUNCTIONS in `namespace` (minigrad's globals) and the methods of
    TENSOR_METHODS on `tensor_class` the aliases; a function under two names (cat, concat) stays one."""
    wrapped = {}
    for name in TORCH_FUNCTIONS:
        function = namespace[name]
        if id(function) not in wrapped:
            wrapped[id(function)] = accepting_numpy_names(function, name)
        namespace[name] = wrapped[id(function)]
    for name in TENSOR_METHODS:
        setattr(tensor_class, name, accepting_numpy_names(getattr(tensor_class, name), name))
