"""How much of PyTorch's public surface minigrad has: every public name of five namespaces, each marked.

    python tools/coverage.py            # (PyTorch installed) rewrite docs/coverage.json and docs/coverage.md
    python tools/coverage.py --check    # exit 1 if the committed table differs from what the installed PyTorch gives
    python tools/coverage.py --totals   # the totals of the committed table (no PyTorch needed)

docs/coverage.md also lists, per present name, how many samples of the table of sample inputs
(tests/samples/) test it.

The namespaces are `torch` (every public name that is not a module), `torch.Tensor`, `torch.nn.functional`,
`torch.nn` (its classes) and `torch.linalg`, as `dir()` lists them. Each name is

    present         minigrad has it at the same place (minigrad.X, minigrad.Tensor.X, ...)
    out of scope    with its category: the issue's list (OUT_OF_SCOPE below) and nothing else
    missing         in scope, and not yet in minigrad

A name minigrad has counts as present even when its category is out of scope (minigrad.compile). The
categories are decided by the rules below, by name; tests/test_coverage.py checks the committed table.
"""
import argparse
import importlib
import inspect
import json
import re
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE_JSON = ROOT / "docs" / "coverage.json"
TABLE_MD = ROOT / "docs" / "coverage.md"

# convolution, pooling and interpolation are in minigrad (composites/convolution.py, pooling.py, resampling.py);
# what stays out of the vision ops: sampling at data-dependent coordinates (spatial transformers), pooling over
# random regions, and a legacy layer
VISION = "grid sampling, fractional max pooling and CrossMapLRN2d"
COMPLEX = "complex numbers"
SPARSE = "sparse, quantized and nested tensors"
FFT = "FFT and spectral analysis"
DEVICE = "distributed, device- and compiler-specific APIs"
FORWARD_AD = "forward-mode AD"
INTERNALS = "PyTorch's internals"
CATEGORIES = (VISION, COMPLEX, SPARSE, FFT, DEVICE, FORWARD_AD, INTERNALS)

# namespace -> where it lives under torch (and under minigrad)
NAMESPACES = {"torch": "", "Tensor": "Tensor", "nn.functional": "nn.functional", "nn": "nn", "linalg": "linalg"}

# (category, pattern on the name): the first that matches decides; checked in every namespace
RULES = [
    (VISION, r"grid_sampl|affine_grid|^GRID_SAMPLE|^fractional_max_pool|^FractionalMaxPool|^CrossMapLRN2d$"),
    (COMPLEX, r"complex|^(angle|conj|conj_physical|conj_physical_|real|imag|polar|is_conj|resolve_conj|"
              r"resolve_neg|is_neg|isreal|cfloat|cdouble|chalf|view_as_real|view_as_real_copy|adjoint|eig|eigvals)$"),
    (SPARSE, r"sparse|Sparse|quantiz|^q_|^qint|^quint|qscheme|int_repr|^per_(channel|tensor)|fbgemm|qparams|"
             r"fake_quant|^bits?$|^bits|^u?int[1-7]$|^float8|^float4|nested|jagged|padded_tensor|coalesce|"
             r"^(indices|values|crow_indices|col_indices|ccol_indices|row_indices|dense_dim|to_dense|smm|sspaddmm|"
             r"hspmm|spmm|dsmm|hsmm|saddmm|segment_reduce|indices_copy|values_copy|crow_indices_copy|"
             r"col_indices_copy|ccol_indices_copy|row_indices_copy|to_mkldnn|is_mkldnn)$"),
    (FFT, r"^(stft|istft|bartlett_window|blackman_window|hamming_window|hann_window|kaiser_window)$"),
    (DEVICE, r"cuda|cudnn|miopen|mkldnn|vulkan|xla|ipu|xpu|mps|mtia|maia|^is_meta$|autocast|GradScaler|"
             r"^(Stream|Event|record_stream|pin_memory|is_pinned|share_memory_|is_shared|is_distributed|"
             r"DataParallel|SyncBatchNorm|get_device|get_device_module|has_lapack|has_mkl|"
             r"has_openmp|has_spectral|get_num_interop_threads|set_num_interop_threads|init_num_threads|fork|wait|"
             r"Future|FutureType|cond|while_loop|thread_safe_generator|AcceleratorError|OutOfMemoryError|"
             r"is_vulkan_available|compile|profiler_allow_cudagraph_cupti_lazy_reinit_cuda12)$|"
             r"^Script|^sym_|^Sym|^Lazy(Conv|ConvTranspose)[123]d$|^batch_norm_(backward|elemt|gather|stats|update)"),
    (INTERNALS, r"^native_|torch_function|TorchFunction|_notes$|_copy$|^(handle_torch_function|boolean_dispatch|"
                r"assert_int_or_pair|BroadcastingList[123]|Callable|Optional|DType|TYPE_CHECKING|USE_GLOBAL_DEPS|"
                r"USE_RTLD_GLOBAL_WITH_LIBTORCH|PRIVATE_OPS|classproperty|DispatchKey|DispatchKeySet|AliasDb|"
                r"Argument|ArgumentSpec|CompleteArgumentSpec|FunctionSchema|OperatorInfo|Tag|AggregationType|"
                r"LoggerBase|NoopLogger|LockingLogger|BenchmarkConfig|BenchmarkExecutionStats|ThroughputBenchmark|"
                r"ExcludeDispatchKeyGuard|ExecutionPlan|GraphExecutorState|TracingState|ErrorReport|FatalError|"
                r"JITException|CallStack|Capsule|DeepCopyMemoTable|DeserializationStorageContext|"
                r"SerializationStorageContext|PyTorchFileReader|PyTorchFileWriter|IODescriptor|Gradient|Graph|Node|"
                r"Block|Value|Use|Code|CompilationUnit|ConcreteModuleType|ConcreteModuleTypeBuilder|StaticModule|"
                r"LiteScriptModule|FileCheck|ModuleDict|ParameterDict|BufferDict|merge_type_from_type_comment|"
                r"parse_ir|parse_schema|parse_type_comment|unify_type_list|import_ir_module|"
                r"import_ir_module_from_buffer|get_file_path|prepare_multiprocessing_environment|"
                r"compiled_with_cxx11_abi|AVG|SUM|Type|InferredType|InterfaceType|ClassType|EnumType|"
                r"as_strided|as_strided_|as_strided_scatter|empty_strided|new_empty_strided|empty_permuted|"
                r"memory_format|contiguous_format|channels_last|channels_last_3d|preserve_format|"
                r"legacy_contiguous_format|layout|strided|dim_order|set_|storage|untyped_storage|storage_type|"
                r"storage_offset|data_ptr|const_data_ptr|module_load|apply_|map_|map2_|reinforce|volatile|"
                r"output_nr|name|index|grad_dtype|slice_inverse|constant_pad_nd|embedding_renorm_|resize_|resize_as_|"
                r"resize|resize_as|feature_dropout|feature_dropout_|rnn_relu|rnn_tanh|rnn_relu_cell|rnn_tanh_cell|"
                r"lstm|gru|lstm_cell|gru_cell|from_file|frombuffer|from_dlpack|to_dlpack|hash_tensor|"
                r"is_inference|is_inference_mode_enabled|nonzero_static|grouped_mm|"
                r"scaled_grouped_mm|scaled_mm|ScalingType|SwizzleType|LinearCrossEntropyOptions|Container|"
                r"is_storage|Storage|TypedStorage|UntypedStorage|"
                r"StorageBase|unsafe_chunk|unsafe_split|unsafe_split_with_sizes|split_with_sizes)$|Storage$|Type$"),
]
# Listed by hand: names whose category the rules above cannot see from the name alone.
BY_NAME = {}


def _torch():
    import torch  # noqa: F401  (only the table's generation needs it)

    return torch


def _namespace(library, where):
    obj = library
    for part in filter(None, where.split(".")):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            try:
                obj = importlib.import_module(f"{obj.__name__}.{part}")
            except (ImportError, AttributeError):
                return None
    return obj


def public_names(torch, namespace):
    """The public names of one of PyTorch's namespaces, as the table lists them."""
    obj = _namespace(torch, NAMESPACES[namespace])
    names = []
    for name in dir(obj):
        if name.startswith("_"):
            continue
        value = getattr(obj, name, None)
        if isinstance(value, types.ModuleType):
            continue  # a submodule is a namespace of its own, not a name of this one
        if namespace == "nn" and not inspect.isclass(value):
            continue
        names.append(name)
    return sorted(names)


def present(library, namespace, name):
    """Whether minigrad (or any library) has `name` at the namespace's place."""
    obj = _namespace(library, NAMESPACES[namespace])
    if obj is None:
        return False
    if namespace == "Tensor":  # some attributes exist only on instances (data, grad, ...)
        if hasattr(obj, name):
            return True
        try:
            return hasattr(library.zeros(2), name)
        except Exception:  # noqa: BLE001  (a property that raises: not there in a usable form)
            return False
    return hasattr(obj, name)


def category(name):
    """The out-of-scope category of a name, or None where it is in scope."""
    if name in BY_NAME:
        return BY_NAME[name]
    for cat, pattern in RULES:
        if re.search(pattern, name):
            return cat
    return None


def build(torch, library):
    """{namespace: {name: "present" | "missing" | "out of scope: <category>"}}."""
    table = {}
    for namespace in NAMESPACES:
        marks = {}
        for name in public_names(torch, namespace):
            if present(library, namespace, name):
                marks[name] = "present"
            else:
                cat = category(name)
                marks[name] = "missing" if cat is None else f"out of scope: {cat}"
        table[namespace] = marks
    return table


def totals(table):
    """{namespace: (present, out of scope, missing)}."""
    out = {}
    for namespace, marks in table.items():
        values = list(marks.values())
        out[namespace] = (values.count("present"), sum(v.startswith("out of scope") for v in values),
                          values.count("missing"))
    return out


def load_table(path=TABLE_JSON):
    return json.loads(Path(path).read_text())


def sample_counts():
    """{"namespace.name": samples} from the table of sample inputs (tests/samples/), or None if it cannot load."""
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from samples import sample_counts as counts  # noqa: PLC0415  (the tests' package)
    except ImportError:
        return None
    finally:
        sys.path.pop(0)
    return counts()


def markdown(document, counts=None):
    table = document["namespaces"]
    lines = [
        "# Coverage of PyTorch's namespaces",
        "",
        f"Generated by `python tools/coverage.py` from PyTorch {document['torch_version']}'s public names "
        "(`dir()`, no `_` names, no submodules; `torch.nn`: its classes). A name is *present* when minigrad has it "
        "at the same place, *out of scope* with one of the categories below, or *missing*. "
        "tests/test_coverage.py checks this table (every present name exists in minigrad; where PyTorch is "
        "installed, the table is up to date).",
        "",
        "| namespace | present | out of scope | missing | total |",
        "|---|---:|---:|---:|---:|",
    ]
    for namespace, (p, o, m) in totals(table).items():
        lines.append(f"| `{namespace}` | {p} | {o} | {m} | {p + o + m} |")
    for namespace, marks in table.items():
        missing = [n for n, v in marks.items() if v == "missing"]
        lines += ["", f"## `{namespace}`", "", f"Missing ({len(missing)}): " + (", ".join(f"`{n}`" for n in missing)
                                                                            or "none.")]
        for cat in CATEGORIES:
            names = [n for n, v in marks.items() if v == f"out of scope: {cat}"]
            if names:
                lines += ["", f"Out of scope, {cat} ({len(names)}): " + ", ".join(f"`{n}`" for n in names)]
        if counts is not None:
            present = [n for n, v in marks.items() if v == "present"]
            tested = [n for n in present if counts.get(f"{namespace}.{n}")]
            if tested:
                total = sum(counts[f"{namespace}.{n}"] for n in tested)
                lines += ["", f"Samples per present name (tests/samples/; a checked non-op name counts 1): "
                          f"{len(tested)} of {len(present)} names, {total} samples: "
                          + ", ".join(f"`{n}` {counts.get(f'{namespace}.{n}', 0)}" for n in present)]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare the committed table with the installed PyTorch")
    parser.add_argument("--totals", action="store_true", help="print the committed table's totals")
    args = parser.parse_args(argv)
    if args.totals:
        for namespace, (p, o, m) in totals(load_table()["namespaces"]).items():
            print(f"{namespace:<14} present {p:>4}  out of scope {o:>4}  missing {m:>4}")
        return 0
    torch = _torch()
    import minigrad

    document = {"torch_version": torch.__version__.split("+")[0], "namespaces": build(torch, minigrad)}
    if args.check:
        stale = document != load_table()
        print("docs/coverage.json is out of date: run python tools/coverage.py" if stale else "up to date")
        return int(stale)
    TABLE_JSON.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    TABLE_MD.write_text(markdown(document, sample_counts()))
    for namespace, (p, o, m) in totals(document["namespaces"]).items():
        print(f"{namespace:<14} present {p:>4}  out of scope {o:>4}  missing {m:>4}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
