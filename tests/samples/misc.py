"""Names that are not ops: dtypes, constants, classes, type promotion, grad modes, settings, save/load, vmap.

Each is a Check: it asserts what the name does, on minigrad and (where installed) on PyTorch, and returns a
value both must agree on. Type promotion (result_type, promote_types, can_cast) is checked over dtype pairs
against PyTorch's table (a stated reference of its rules where PyTorch is absent).
"""
import io
import math

import numpy as np

from . import DT, Check, Fn, S

DTYPES = {"float16": "float16", "half": "float16", "float32": "float32", "float": "float32", "float64": "float64",
          "double": "float64", "bfloat16": "bfloat16", "int8": "int8", "int16": "int16", "short": "int16",
          "int32": "int32", "int": "int32", "int64": "int64", "long": "int64", "uint8": "uint8", "uint16": "uint16",
          "uint32": "uint32", "uint64": "uint64", "bool": "bool"}


def _dtype_check(name, canonical):
    def check(L):
        d = getattr(L, name)
        assert str(d).replace("torch.", "").replace("minigrad.", "") == canonical, str(d)
        if canonical == "bfloat16":
            return canonical
        x = L.zeros(2, dtype=d)
        assert str(x.dtype).replace("torch.", "") == canonical
        bits = None if canonical == "bool" else (L.finfo(d).bits if x.is_floating_point() else L.iinfo(d).bits)
        return canonical, x.is_floating_point(), x.element_size(), bits
    return check


def _tensor_class_check(name, dtype):
    def check(L):
        cls = getattr(L, name)
        x = cls([1, 2])
        assert isinstance(x, L.Tensor)
        return str(x.dtype).replace("torch.", ""), x.tolist()
    return check


def _grad_modes(L):
    x = L.ones(2, requires_grad=True)
    with L.no_grad():
        assert not L.is_grad_enabled() and not (x * 2).requires_grad
        with L.enable_grad():
            assert (x * 2).requires_grad
    with L.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    with L.inference_mode():
        assert not (x * 2).requires_grad

    @L.no_grad()
    def f(t):
        return t * 2
    assert not f(x).requires_grad and L.is_grad_enabled()
    L.set_grad_enabled(True)
    return L.is_grad_enabled()


def _anomaly(L):
    before = L.is_anomaly_enabled()
    L.set_anomaly_enabled(True)
    on = L.is_anomaly_enabled()
    L.set_anomaly_enabled(before)
    return on, L.is_anomaly_enabled()


def _deterministic(L):
    before = L.are_deterministic_algorithms_enabled(), L.is_deterministic_algorithms_warn_only_enabled()
    L.use_deterministic_algorithms(True, warn_only=True)
    state = L.are_deterministic_algorithms_enabled(), L.is_deterministic_algorithms_warn_only_enabled()
    L.use_deterministic_algorithms(before[0], warn_only=before[1])
    return state


def _defaults(L):
    assert L.get_default_dtype() == L.float32
    L.set_default_dtype(L.float64)
    try:
        made = str(L.tensor([1.0]).dtype).replace("torch.", ""), str(L.zeros(1).dtype).replace("torch.", "")
    finally:
        L.set_default_dtype(L.float32)
    assert str(L.get_default_device()) == "cpu"
    L.set_default_device("cpu")
    L.set_default_device(None)  # (PyTorch's "cpu" stays a function mode that turns off nn.Transformer's fast path)
    precision = L.get_float32_matmul_precision()
    L.set_float32_matmul_precision("high")
    assert L.get_float32_matmul_precision() == "high"
    L.set_float32_matmul_precision(precision)
    threads = L.get_num_threads()
    L.set_num_threads(1)
    assert L.get_num_threads() == 1
    L.set_num_threads(threads)
    return made


def _printoptions(L):
    L.set_printoptions(precision=2)
    try:
        text = repr(L.tensor([1.23456]))
    finally:
        L.set_printoptions(profile="default")
    return text.replace("torch.", "")


def _save_load(L):
    buffer = io.BytesIO()
    L.save({"w": L.tensor([[1.0, 2.0]]), "n": 3}, buffer)
    buffer.seek(0)
    back = L.load(buffer)
    return back["w"].tolist(), back["n"]


def _autocast(L):
    assert not L.is_autocast_enabled("cpu")
    with L.autocast("cpu", dtype=L.bfloat16):
        assert L.is_autocast_enabled("cpu")
        dtype = L.get_autocast_dtype("cpu")
    return str(dtype).replace("torch.", "")


def _compile(L):
    f = L.compile(lambda x: x * 2) if L.__name__ == "minigrad" else (lambda x: x * 2)  # (PyTorch's needs a compiler)
    return f(L.tensor([1.0])).tolist()


def _vmap(L):
    out = L.vmap(lambda row: (row * row).sum())(L.tensor([[1.0, 2.0], [3.0, 4.0]]))
    out2 = L.vmap(lambda a, b: a * b, in_dims=(0, None))(L.tensor([[1.0, 2.0], [3.0, 4.0]]), L.tensor([2.0, 3.0]))
    return out.tolist(), out2.tolist()


def _layouts(L):
    x = L.ones(2, 3)
    assert L.empty(2, layout=L.strided).shape == (2,)
    y = L.zeros_like(x, memory_format=L.preserve_format)
    z = x.contiguous()
    return (str(L.strided).replace("torch.", ""), str(L.sparse_coo).replace("torch.", ""),
            isinstance(L.strided, L.layout), isinstance(L.channels_last, L.memory_format), y.shape == z.shape)


def _device(L):
    d = L.device("cpu")
    assert isinstance(d, L.device) and L.ones(2, device=d).device.type == "cpu"
    return str(d), d.type, str(L.device("cpu", 0) if L.__name__ == "minigrad" else "cpu:0")


def _size(L):
    s = L.Size([2, 3])
    assert isinstance(s, tuple) and isinstance(L.ones(2, 3).shape, L.Size)
    return tuple(s), s.numel()


def _tensor_class(L):
    x = L.Tensor([[1.0, 2.0]])
    # (PyTorch's legacy forms L.Tensor(2, 3) (a shape) and L.Tensor([[1, 2]]) (float32 from ints) differ in
    # minigrad: a difference left, written down in tests/samples/__init__.py)
    return str(x.dtype).replace("torch.", ""), x.tolist(), isinstance(x, L.Tensor)


def _constants(L):
    assert math.isnan(L.nan) and L.newaxis is None
    return L.e, L.pi, L.inf


def _typename(L):
    return L.typename(L.ones(2)), L.typename(L.ones(2, dtype=L.int64)), L.typename(3)


def _finfo(L):
    f = L.finfo(L.float32)
    g = L.finfo()
    i = L.iinfo(L.int16)
    return f.eps, f.max, f.tiny, f.bits, g.eps, i.min, i.max, L.finfo(L.float64).resolution


def _promotion_ref(a, b):
    """PyTorch's rule for two tensors: the higher category (bool < integer < float) wins with its own dtype;
    within one category, NumPy's promotion."""
    a, b = np.dtype(a), np.dtype(b)
    ca, cb = _CATEGORY[a.kind], _CATEGORY[b.kind]
    return str(np.result_type(a, b) if ca == cb else (a if ca > cb else b))


_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2}


PAIRS = [("float32", "float64"), ("int64", "float32"), ("int32", "int64"), ("bool", "int8"), ("uint8", "int8"),
         ("float16", "float32"), ("bool", "float64"), ("int16", "uint8")]


ENTRIES = [
    *[Check(f"torch.{name}", _dtype_check(name, canonical)) for name, canonical in DTYPES.items()],
    *[Check(f"torch.{cls}", _tensor_class_check(cls, dt)) for cls, dt in
      [("FloatTensor", "float32"), ("DoubleTensor", "float64"), ("HalfTensor", "float16"),
       ("IntTensor", "int32"), ("LongTensor", "int64"), ("ShortTensor", "int16"), ("CharTensor", "int8"),
       ("ByteTensor", "uint8"), ("BoolTensor", "bool")]],
    # (minigrad's torch.dtype is its dtype module, not the class of its dtypes, and its dtypes (NumPy's) have no
    # is_floating_point / is_signed: a difference left, written down in tests/samples/__init__.py)
    Check("torch.BFloat16Tensor", lambda L: _refused_bfloat16(L)),
    Check("torch.dtype", lambda L: str(L.float32.itemsize)),
    Check("torch.Tensor", _tensor_class),
    Check("torch.Size", _size),
    Check("torch.device", _device),
    Check(["torch.e", "torch.pi", "torch.inf", "torch.nan", "torch.newaxis"], _constants),
    Check(["torch.finfo", "torch.iinfo"], _finfo),
    Check("torch.typename", _typename),
    Check(["torch.no_grad", "torch.enable_grad", "torch.set_grad_enabled", "torch.is_grad_enabled",
           "torch.inference_mode"], _grad_modes),
    Check(["torch.set_anomaly_enabled", "torch.is_anomaly_enabled"], _anomaly),
    Check(["torch.use_deterministic_algorithms", "torch.are_deterministic_algorithms_enabled",
           "torch.is_deterministic_algorithms_warn_only_enabled"], _deterministic),
    Check(["torch.get_default_dtype", "torch.set_default_dtype", "torch.get_default_device",
           "torch.set_default_device", "torch.get_float32_matmul_precision", "torch.set_float32_matmul_precision",
           "torch.get_num_threads", "torch.set_num_threads"], _defaults),
    Check("torch.set_printoptions", _printoptions),
    Check(["torch.save", "torch.load"], _save_load),
    Check(["torch.autocast", "torch.is_autocast_enabled", "torch.get_autocast_dtype"], _autocast),
    Check("torch.compile", _compile),
    Check("torch.vmap", _vmap),
    Check(["torch.layout", "torch.strided", "torch.sparse_coo", "torch.memory_format", "torch.preserve_format",
           "torch.contiguous_format", "torch.channels_last"], _layouts),
    Fn("torch.result_type", lambda L, a, b: L.result_type(a, b),
       lambda r: [S(r.ints(), r.real()), S(r.ints(dtype="int32"), r.ints()), S(r.bools(), 2), S(r.ints(), 2.5),
                  S(r.real((2,), "float64"), r.real((2,))), S(r.bools(), r.ints(dtype="uint8", low=0))],
       ref=lambda a, b: str(_promotion_ref(a.dtype, b.dtype) if isinstance(b, np.ndarray) else (
           np.dtype(np.float32) if isinstance(b, float) and a.dtype.kind in "biu" else (
               np.dtype(np.int64) if a.dtype.kind == "b" else a.dtype))), grad=False),
    Fn("torch.promote_types", lambda L, a, b: L.promote_types(a, b),
       lambda r: [S(DT(a), DT(b)) for a, b in PAIRS], ref=_promotion_ref, grad=False),
    Fn("torch.can_cast", lambda L, a, b: L.can_cast(a, b),
       lambda r: [S(DT(a), DT(b)) for a, b in PAIRS + [(b, a) for a, b in PAIRS]],
       ref=lambda a, b: bool(_can_cast(a, b)), grad=False),
    # (bool & uint8 -> uint8, as PyTorch)
    Fn("torch.bitwise_and", lambda L, a, b: (a & b).dtype, lambda r: [S(r.bools(), r.ints(dtype="uint8", low=0))], grad=False),
]


def _can_cast(a, b):
    """PyTorch's rule: no cast to a lower category (float -> int, int -> bool); within one, any size."""
    order = {"b": 0, "u": 1, "i": 1, "f": 2}
    return order[np.dtype(a).kind] <= order[np.dtype(b).kind]



def _refused_bfloat16(L):
    """minigrad has no bfloat16 storage (NumPy has none): BFloat16Tensor is refused, saying so."""
    try:
        x = L.BFloat16Tensor([1.0, 2.0])
    except TypeError as error:
        assert L.__name__ == "minigrad" and "bfloat16" in str(error)
        return None
    assert str(x.dtype).replace("torch.", "") == "bfloat16"
    return None


def _warn_always(L):
    """set_warn_always switches a flag that is_warn_always_enabled reads back; off by default."""
    before = L.is_warn_always_enabled()
    L.set_warn_always(True)
    on = L.is_warn_always_enabled()
    L.set_warn_always(before)
    return before, on, L.is_warn_always_enabled()


def _deterministic_debug_mode(L):
    """The debug mode takes 0/1/2 or "default"/"warn"/"error" and reads back as an int."""
    before = L.get_deterministic_debug_mode()
    seen = []
    for mode in ("warn", 2, "default"):
        L.set_deterministic_debug_mode(mode)
        seen.append(L.get_deterministic_debug_mode())
    L.set_deterministic_debug_mode(before)
    return before, seen


def _default_tensor_type(L):
    """set_default_tensor_type(torch.DoubleTensor) makes new float tensors float64; FloatTensor puts it back."""
    L.set_default_tensor_type(L.DoubleTensor)
    try:
        made = str(L.tensor([1.5]).dtype)
    finally:
        L.set_default_tensor_type(L.FloatTensor)
    return made, str(L.tensor([1.5]).dtype)


def _anomaly_check_nan(L):
    """Off outside anomaly mode; on inside detect_anomaly() (check_nan=True), off with check_nan=False."""
    outside = L.is_anomaly_check_nan_enabled()
    with L.autograd.detect_anomaly():
        inside = L.is_anomaly_check_nan_enabled()
    with L.autograd.detect_anomaly(check_nan=False):
        without = L.is_anomaly_check_nan_enabled()
    return outside, inside, without


def _flush_denormal(L):
    """Returns whether flushing is supported; minigrad (NumPy) cannot flush subnormals and says False."""
    supported = L.set_flush_denormal(False)
    assert isinstance(supported, bool)
    if L.__name__ == "minigrad":
        assert supported is False and L.set_flush_denormal(True) is False
    return None


ENTRIES += [
    Check("torch.set_warn_always", _warn_always),
    Check("torch.is_warn_always_enabled", lambda L: L.is_warn_always_enabled()),
    Check(["torch.set_deterministic_debug_mode", "torch.get_deterministic_debug_mode"], _deterministic_debug_mode),
    Check("torch.set_default_tensor_type", _default_tensor_type),
    Check("torch.is_anomaly_check_nan_enabled", _anomaly_check_nan),
    Check("torch.set_flush_denormal", _flush_denormal),
]
