"""Hardening, second round: every bad input gets a clear minigrad error naming the op (or option) and
the offending value, and nothing is left half-changed. Property-based junk is at the end."""
import io
import json
import os
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn


# ---- in-place ops ------------------------------------------------------------------------------
INPLACE = {
    "add_": lambda t, v: t.add_(v),
    "sub_": lambda t, v: t.sub_(v),
    "mul_": lambda t, v: t.mul_(v),
    "div_": lambda t, v: t.div_(v),
    "copy_": lambda t, v: t.copy_(v),
}


@pytest.mark.parametrize("op", sorted(INPLACE))
@pytest.mark.parametrize("other_shape", [(3,), (2, 2, 2)])
def test_inplace_ops_with_shapes_that_do_not_fit_name_the_op_and_both_shapes(op, other_shape):
    t = mg.ones(2, 2)
    with pytest.raises(mg.ShapeError) as error:
        INPLACE[op](t, mg.ones(*other_shape))
    message = str(error.value)
    assert message.startswith(op) and "(2, 2)" in message and str(other_shape) in message
    assert t.numpy().tolist() == [[1.0, 1.0], [1.0, 1.0]] and t._version == 0  # untouched


def test_inplace_broadcasting_that_fits_still_works():
    t = mg.ones(2, 3)
    t.add_(mg.tensor([1.0, 2.0, 3.0])).mul_(2.0).copy_(t * 1.0)
    assert t.numpy().tolist() == [[4.0, 6.0, 8.0]] * 2


@pytest.mark.parametrize("op", ["add_", "sub_", "mul_"])  # copy_ casts, as PyTorch's (tests/test_inplace.py)
def test_inplace_ops_refuse_floats_into_an_integer_tensor(op):
    t = mg.tensor([1, 2])
    with pytest.raises(TypeError, match=rf"^{op}: cannot write .*float32.* into a tensor of dtype int64"):
        INPLACE[op](t, mg.tensor([0.5, 0.5]))
    assert t.tolist() == [1, 2]


def test_fill_refuses_what_is_not_a_number():
    with pytest.raises(TypeError, match="fill_: the value must be a number, got str 'x'"):
        mg.zeros(2).fill_("x")


# ---- reshape, view, expand ---------------------------------------------------------------------
@pytest.mark.parametrize("method", ["reshape", "view"])
@pytest.mark.parametrize("shape, bad", [((-2, 3), "-2"), ((6, -3), "-3"), ((-1, -1), "only one dimension can be -1")])
def test_reshape_and_view_refuse_negative_sizes_other_than_one_minus_one(method, shape, bad):
    with pytest.raises(mg.ShapeError, match=rf"^{method}: .*{bad}"):
        getattr(mg.zeros(2, 3), method)(*shape)
    assert getattr(mg.zeros(2, 3), method)(-1, 3).shape == (2, 3)


def test_sizes_must_be_integers_and_expand_refuses_negative_sizes():
    with pytest.raises(TypeError, match="reshape: sizes must be integers, got float 2.0"):
        mg.zeros(2, 3).reshape(2.0, 3)
    with pytest.raises(mg.ShapeError, match=r"expand: invalid size -2"):
        mg.zeros(1, 3).expand(-2, 3)


# ---- one promotion rule ------------------------------------------------------------------------
def _int_and_float():
    return mg.tensor([[1, 2], [3, 4]]), mg.ones(2, 2)


PROMOTING = {
    "mul": lambda i, f: i * f,
    "add": lambda i, f: i + f,
    "matmul": lambda i, f: i @ f,
    "rmatmul": lambda i, f: f @ i,
    "F.linear": lambda i, f: F.linear(i, f, mg.zeros(2)),
    "nn.Linear": lambda i, f: nn.Linear(2, 2)(i),
    "where": lambda i, f: mg.where(i > 1, i, f),
    "cat": lambda i, f: mg.cat([i, f]),
    "stack": lambda i, f: mg.stack([i, f]),
    "maximum": lambda i, f: mg.maximum(i, f),
    "clamp to a float bound": lambda i, f: i.clamp(0.5),
    "div": lambda i, f: i / i,
}


@pytest.mark.parametrize("op", sorted(PROMOTING))
def test_int64_with_float32_gives_float32_for_every_op(op):
    assert PROMOTING[op](*_int_and_float()).dtype == mg.float32


def test_comparisons_of_int64_with_float32_compare_values_and_give_bool():
    i, f = _int_and_float()
    assert (i > f).dtype == mg.bool and (i > f).tolist() == [[False, True], [True, True]]
    assert (i == f * 1).tolist() == [[True, False], [False, False]]


# ---- ops that need floating point --------------------------------------------------------------
NEED_FLOATS = {
    "gelu": lambda x: F.gelu(x),
    "softmax": lambda x: F.softmax(x, 1),
    "log_softmax": lambda x: F.log_softmax(x, 1),
    "layer_norm": lambda x: F.layer_norm(x, (2,)),
    "cross_entropy": lambda x: F.cross_entropy(x, mg.tensor([0, 1])),
    "mse_loss": lambda x: F.mse_loss(x, x),
    "dropout": lambda x: F.dropout(x, 0.5),
    "mean": lambda x: x.mean(),
    "var": lambda x: x.var(),
    "scaled_dot_product_attention": lambda x: F.scaled_dot_product_attention(x[None], x[None], x[None]),
}


@pytest.mark.parametrize("op", sorted(NEED_FLOATS))
@pytest.mark.parametrize("dtype", [mg.int64, mg.bool])
def test_ops_that_need_floats_refuse_integers_and_bools_naming_the_op_and_dtype(op, dtype):
    x = mg.tensor([[1, 0], [0, 1]]).to(dtype)
    with pytest.raises(TypeError, match=rf"^{op}: .*{dtype}"):
        NEED_FLOATS[op](x)


@pytest.mark.parametrize("op", ["exp", "log", "sqrt", "tanh", "sigmoid"])
def test_elementwise_functions_of_integers_compute_in_float_never_truncate(op):
    out = getattr(mg.tensor([1, 2, 3]), op)()
    assert out.dtype == mg.float32
    assert np.allclose(out.numpy(), getattr(np, op)(np.array([1.0, 2.0, 3.0])) if op != "sigmoid"
                       else 1 / (1 + np.exp(-np.array([1.0, 2.0, 3.0]))), rtol=1e-6)


def test_relu_and_abs_of_integers_stay_integers_as_pytorch():
    assert mg.tensor([-2, 3]).relu().tolist() == [0, 3] and mg.tensor([-2, 3]).abs().tolist() == [2, 3]


def test_integer_to_a_negative_integer_power_is_a_clear_error():
    with pytest.raises(ValueError, match="pow: an int64 tensor cannot be raised to the negative integer power -1"):
        mg.tensor([1, 2]) ** -1


# ---- unsupported dtypes ------------------------------------------------------------------------
@pytest.mark.parametrize("make, name", [
    (lambda: mg.tensor(np.array([1 + 2j])), "complex128"),
    (lambda: mg.tensor([1 + 2j]), "complex128"),
    (lambda: mg.tensor(np.array([1, None], dtype=object)), "object"),
    (lambda: mg.tensor(np.array(["a", "b"])), "<U1"),
    (lambda: mg.tensor(np.array([b"a"])), "|S1"),
    (lambda: mg.tensor(np.array(["2020-01-01"], dtype="datetime64[D]")), "datetime64"),
    (lambda: mg.tensor([1.0], dtype=np.complex64), "complex64"),
    (lambda: mg.from_numpy(np.array([1j])), "complex128"),
    (lambda: mg.zeros(2, dtype=np.complex64), "complex64"),
    (lambda: mg.ones(2).to(np.complex128), "complex128"),
])
def test_unsupported_dtypes_are_refused_where_the_tensor_is_made_naming_the_dtype(make, name):
    with pytest.raises(TypeError, match=rf"{name}.*not a supported dtype"):
        make()


def test_strings_lists_and_oversized_integers_are_refused_with_their_value():
    with pytest.raises(TypeError, match=r"tensor: cannot make a tensor from list data: \['a'\]"):
        mg.tensor(["a"])
    with pytest.raises(OverflowError, match="tensor: the integer 9223372036854775808 does not fit in int64"):
        mg.tensor([2 ** 63])
    with pytest.raises(TypeError, match="tensor: cannot convert str data to float32"):
        mg.tensor("abc", dtype=mg.float32)


# ---- creation functions ------------------------------------------------------------------------
NEGATIVE_SIZE = {
    "zeros": lambda: mg.zeros(2, -1),
    "ones": lambda: mg.ones(-1),
    "full": lambda: mg.full((-1, 2), 1.0),
    "rand": lambda: mg.rand(-3),
    "randn": lambda: mg.randn(2, -1),
    "randint": lambda: mg.randint(0, 5, (-1,)),
    "randperm": lambda: mg.randperm(-1),
}


@pytest.mark.parametrize("op", sorted(NEGATIVE_SIZE))
def test_creation_with_a_negative_size_names_the_function_and_the_value(op):
    with pytest.raises(ValueError, match=rf"^{op}: sizes must be non-negative, got -\d"):
        NEGATIVE_SIZE[op]()


@pytest.mark.parametrize("make, message", [
    (lambda: mg.eye(-1), "eye: n must be non-negative, got -1"),
    (lambda: mg.eye(2, -3), "eye: m must be non-negative, got -3"),
    (lambda: mg.arange(0, 5, 0), "arange: step must be nonzero"),
    (lambda: mg.arange(5, 0, 1), "arange: start 5 and end 0 are inconsistent with the sign of step 1"),
    (lambda: mg.arange(0, 5, -1), "arange: start 0 and end 5 are inconsistent with the sign of step -1"),
    (lambda: mg.arange(float("inf")), "arange: end must be finite"),
    (lambda: mg.randint(5, 5, (2,)), "randint: low must be less than high, got low=5 >= high=5"),
    (lambda: mg.zeros(2.5), "zeros: sizes must be integers, got float 2.5"),
])
def test_creation_functions_refuse_impossible_arguments_by_name(make, message):
    with pytest.raises((ValueError, TypeError), match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        make()


def test_creation_edge_cases_that_are_valid_still_work():
    assert mg.zeros(0).shape == (0,) and mg.arange(0).shape == (0,) and mg.arange(5, 0, -2).tolist() == [5, 3, 1]
    assert mg.full(3, 2).tolist() == [2, 2, 2] and mg.eye(0).shape == (0, 0)


# ---- load_state_dict changes nothing when it fails ----------------------------------------------
class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 2)
        self.norm = nn.LayerNorm(2)
        self.register_buffer("count", mg.tensor([7]))


def _snapshot(model):
    return {k: (v.dtype, v.numpy().tobytes()) for k, v in model.state_dict().items()}


def _bad_state(change):
    good = {k: v.numpy() + 1 for k, v in Small().state_dict().items()}  # valid values, all different
    change(good)
    return good


@pytest.mark.parametrize("change, expected", [
    (lambda s: s.__setitem__("linear.bias", "not numbers"), "'linear.bias': expected a tensor or an array, got str"),
    (lambda s: s.__setitem__("linear.bias", np.array(["a", "b"])), "'linear.bias': the checkpoint holds <U1"),
    (lambda s: s.__setitem__("linear.bias", None), "'linear.bias': expected a tensor or an array, got NoneType"),
    (lambda s: s.__setitem__("linear.bias", {"a": 1}), "'linear.bias': expected a tensor or an array, got dict"),
    (lambda s: s.__setitem__("linear.bias", [[1.0], [2.0, 3.0]]), "'linear.bias': the value is not a rectangular"),
    (lambda s: s.__setitem__("linear.bias", np.array([1j, 2j])), "'linear.bias': the checkpoint holds complex128"),
    (lambda s: s.__setitem__("linear.bias", np.zeros(3)), "size mismatch for linear.bias: copying a param with shape (3,) from checkpoint, the shape in current model is (2,)."),
    (lambda s: s.__setitem__("count", np.array([7.5])), "'count': checkpoint has dtype float64, which would be truncated"),
    (lambda s: s.pop("norm.weight"), 'Missing key(s) in state_dict: "norm.weight". '),
    (lambda s: s.__setitem__("extra", np.zeros(1)), 'Unexpected key(s) in state_dict: "extra". '),
])
def test_a_failed_load_state_dict_leaves_every_parameter_and_buffer_bit_identical(change, expected):
    model = Small()
    before = _snapshot(model)
    versions = [t._version for t in model.state_dict(keep_vars=True).values()]
    with pytest.raises(RuntimeError, match=r"^Error\(s\) in loading state_dict for Small:\n\t") as error:
        model.load_state_dict(_bad_state(change))
    assert expected in str(error.value) and "nothing was loaded" in str(error.value)
    assert _snapshot(model) == before
    assert [t._version for t in model.state_dict(keep_vars=True).values()] == versions


def test_load_state_dict_lists_every_problem_and_refuses_a_non_mapping():
    model = Small()
    bad = _bad_state(lambda s: (s.__setitem__("linear.bias", "x"), s.__setitem__("norm.bias", np.zeros(5))))
    with pytest.raises(RuntimeError, match=r"'linear.bias': expected a tensor.*\n\tsize mismatch for norm.bias"):
        model.load_state_dict(bad)
    with pytest.raises(TypeError, match="load_state_dict of Small: expects a mapping of names to tensors, got list"):
        model.load_state_dict([1, 2])


def test_load_state_dict_still_widens_and_loads_lists():
    model = Small()
    state = {k: v.numpy().astype(np.float64) if v.dtype.kind == "f" else v.numpy().astype(np.int32)
             for k, v in Small().state_dict().items()}
    state["linear.bias"] = [0.25, 0.5]
    model.load_state_dict(state)
    assert model.linear.bias.dtype == mg.float32 and model.linear.bias.tolist() == [0.25, 0.5]


# ---- mg.load on malformed files ----------------------------------------------------------------
def _write_archive(path, index=None, entries=None, raw_index=None):
    """An .npz with a hand-made '__minigrad__' index, as a hostile or broken file could hold."""
    with zipfile.ZipFile(path, "w") as archive:
        data = raw_index if raw_index is not None else json.dumps(index).encode()
        for name, array in {"__minigrad__": np.frombuffer(data, dtype=np.uint8), **(entries or {})}.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, array, allow_pickle=False)
            archive.writestr(name + ".npy", buffer.getvalue())
    return path


def _index(tree):
    return {"format": "minigrad-checkpoint", "version": 1, "tree": tree}


@pytest.mark.parametrize("tree", [
    {"dict": 5}, {"dict": [[1]]}, {"dict": [[[1], 2]]}, {"list": 5}, {"tuple": "ab"}, {"tensor": ["w"]},
    {"tensor": 3}, {"ndarray": None}, {"scalar": {"a": 1}}, {"unknown": 1}, {"dict": [], "list": []}, [1, 2],
    {"tensor": "missing"},
])
def test_a_wrongly_structured_index_is_a_checkpoint_error_naming_the_file(tmp_path, tree):
    path = _write_archive(tmp_path / "bad.npz", _index(tree), {"w": np.zeros(2)})
    with pytest.raises(mg.CheckpointError, match="bad.npz"):
        mg.load(path)


def _nested_index(depth):
    return ('{"format": "minigrad-checkpoint", "version": 1, "tree": ' + '{"list": [' * depth + "null"
            + "]}" * depth + "}").encode()


def test_a_deeply_nested_index_is_a_checkpoint_error_not_a_recursion_error(tmp_path):
    with pytest.raises(mg.CheckpointError, match="deep.npz.*nested"):  # too deep for Python's JSON parser
        mg.load(_write_archive(tmp_path / "deep.npz", raw_index=_nested_index(100_000)))
    with pytest.raises(mg.CheckpointError, match="mid.npz.*nested deeper"):  # parses, but no checkpoint nests so
        mg.load(_write_archive(tmp_path / "mid.npz", raw_index=_nested_index(100)))


def test_an_index_of_the_wrong_dtype_and_a_tensor_of_an_unsupported_dtype_are_refused(tmp_path):
    path = tmp_path / "c.npz"
    _write_archive(path, _index({"tensor": "w"}), {"w": np.array([1j])})
    with pytest.raises(mg.CheckpointError, match="c.npz.*complex128"):
        mg.load(path)


def test_loading_a_directory_is_a_clear_error(tmp_path):
    with pytest.raises(mg.CheckpointError, match="is a directory, not a checkpoint file"):
        mg.load(tmp_path)


def test_save_refuses_what_load_would_refuse_as_too_deep(tmp_path):
    deep = []
    for _ in range(100):
        deep = [deep]
    with pytest.raises(ValueError, match="save: the structure nests deeper than 64 levels"):
        mg.save(deep, tmp_path / "deep.npz")
    assert not os.listdir(tmp_path)


# ---- the command line --------------------------------------------------------------------------
@pytest.mark.parametrize("option, value, message", [
    ("--steps", "-5", "must be a positive integer, got -5"),
    ("--steps", "0", "must be a positive integer, got 0"),
    ("--steps", "2.5", "must be an integer, got '2.5'"),
    ("--batch-size", "0", "must be a positive integer, got 0"),
    ("--batch-size", "-4", "must be a positive integer, got -4"),
    ("--lr", "0", "must be a positive finite number, got 0"),
    ("--lr", "-1e-3", "must be a positive finite number, got -1e-3"),
    ("--lr", "nan", "must be a positive finite number, got nan"),
    ("--lr", "inf", "must be a positive finite number, got inf"),
    ("--lr", "fast", "must be a number, got 'fast'"),
    ("--seed", "-1", "must be a non-negative integer, got -1"),
])
def test_every_numeric_option_is_validated_at_parse_time(tmp_path, capsys, option, value, message):
    from minigrad_models.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["train", "copy", f"{option}={value}", "--out", str(tmp_path / "x.npz")])  # = lets -1e-3 be a value
    assert exit_.value.code == 2
    assert f"argument {option}: {message}" in capsys.readouterr().err
    assert not os.listdir(tmp_path)  # nothing trained, nothing saved


@pytest.fixture(scope="module")
def trained_copy(tmp_path_factory):
    from minigrad_models.cli import main

    path = str(tmp_path_factory.mktemp("cli") / "copy.npz")
    assert main(["train", "copy", "--steps", "2", "--batch-size", "4", "--out", path, "--quiet"]) == 0
    return path


def test_translate_and_resume_with_a_file_that_is_not_a_model_say_which_file_and_what_it_lacks(tmp_path, capsys):
    from minigrad_models.cli import main

    path = str(tmp_path / "weights.npz")
    mg.save({"weight": mg.ones(2)}, path)
    assert main(["translate", "012", "--checkpoint", path]) == 1
    assert "weights.npz' is a minigrad file but not a trained model: it lacks task, model_config, model" in \
        capsys.readouterr().err
    assert main(["train", "copy", "--resume", "--out", path]) == 1
    err = capsys.readouterr().err
    assert "weights.npz' is a minigrad file but not a training checkpoint: it lacks task, task_args" in err
    assert main(["eval", "--checkpoint", path]) == 1
    assert "not a training checkpoint" in capsys.readouterr().err
    mg.save([1, 2], path)
    assert main(["translate", "012", "--checkpoint", path]) == 1
    assert "holding a list, not a trained model" in capsys.readouterr().err


def test_resume_from_a_missing_file_is_an_error(tmp_path, capsys):
    from minigrad_models.cli import main

    assert main(["train", "copy", "--resume", "--out", str(tmp_path / "missing.npz")]) == 1
    assert "--resume: there is no checkpoint at" in capsys.readouterr().err
    assert not os.listdir(tmp_path)


def test_resuming_a_checkpoint_of_another_task_is_refused_naming_both(trained_copy, capsys):
    from minigrad_models.cli import main

    assert main(["train", "reverse", "--resume", "--out", trained_copy]) == 1
    assert "is a checkpoint of the 'copy' task, not of 'reverse'" in capsys.readouterr().err


def test_a_checkpoint_whose_weights_do_not_fit_its_configuration_is_refused(trained_copy, tmp_path, capsys):
    from minigrad_models.cli import main

    ckpt = mg.load(trained_copy)
    ckpt["model_config"]["d_ff"] = 32  # the weights say 128
    path = str(tmp_path / "edited.npz")
    mg.save(ckpt, path)
    assert main(["translate", "012", "--checkpoint", path]) == 1
    err = capsys.readouterr().err
    # translate loads the best model's weights, resume the last ones: neither fits
    assert "edited.npz': its best model's weights do not fit its own model configuration" in err and "d_ff" in err
    assert main(["train", "copy", "--resume", "--out", path]) == 1
    assert "do not fit" in capsys.readouterr().err


# ---- property-based junk -----------------------------------------------------------------------
junk_settings = settings(max_examples=int(os.environ.get("MINIGRAD_FUZZ_EXAMPLES", "60")), deadline=None,
                         suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

ALL_DTYPES = hnp.boolean_dtypes() | hnp.integer_dtypes() | hnp.unsigned_integer_dtypes() | hnp.floating_dtypes() \
    | hnp.complex_number_dtypes() | hnp.unicode_string_dtypes() | hnp.byte_string_dtypes() \
    | hnp.datetime64_dtypes() | hnp.timedelta64_dtypes()
arrays = hnp.arrays(ALL_DTYPES, hnp.array_shapes(min_dims=0, max_dims=3, max_side=3))
scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.complex_numbers() | st.text(max_size=3) \
    | st.binary(max_size=3)
junk = st.recursive(scalars | arrays, lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
                    | st.dictionaries(st.text(max_size=2), inner, max_size=2), max_leaves=8)

# what minigrad raises for bad input: its own errors, and the Python types its messages use
MINIGRAD_ERRORS = (TypeError, ValueError, OverflowError, mg.ShapeError, mg.CheckpointError)
LOAD_ERRORS = MINIGRAD_ERRORS + (RuntimeError,)  # load_state_dict raises PyTorch's RuntimeError


def _clear(error):
    """A minigrad message: it names the op that refused, so it is not NumPy's or Python's own."""
    text = str(error)
    return (text.split(":")[0] in {"tensor", "dtype", "load_state_dict of Small", "load",
                                   "Error(s) in loading state_dict for Small"} or text.startswith("'"))


@junk_settings
@given(data=junk, dtype=st.none() | st.sampled_from([mg.float32, mg.float64, mg.int64, mg.bool]))
def test_tensor_of_random_junk_gives_a_tensor_or_a_clear_error(data, dtype):
    try:
        t = mg.tensor(data, dtype=dtype)
    except MINIGRAD_ERRORS as error:
        assert _clear(error), repr(error)
    else:
        assert t.dtype.kind in "biuf"  # whatever was accepted is a dtype a tensor may hold


@junk_settings
@given(entries=st.dictionaries(st.sampled_from(["linear.weight", "linear.bias", "norm.weight", "norm.bias", "count",
                                                "other"]), junk | arrays, max_size=6),
       strict=st.booleans())
def test_load_state_dict_of_random_junk_loads_or_leaves_the_model_bit_identical(entries, strict):
    model = Small()
    before = _snapshot(model)
    try:
        model.load_state_dict(entries, strict=strict)
    except LOAD_ERRORS as error:
        assert _clear(error), repr(error)
        assert _snapshot(model) == before


@junk_settings
@given(content=st.binary(max_size=300) | st.builds(lambda b, cut: b[:cut], st.just(b""), st.integers(0, 10)),
       prefix=st.sampled_from([b"", b"PK\x03\x04", b"\x93NUMPY"]))
def test_load_of_random_bytes_is_a_checkpoint_error(tmp_path, content, prefix):
    path = tmp_path / "junk.npz"
    path.write_bytes(prefix + content)
    with pytest.raises(mg.CheckpointError, match="junk.npz"):
        mg.load(path)


@junk_settings
@given(tree=st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
                         lambda inner: st.lists(inner, max_size=3)
                         | st.dictionaries(st.sampled_from(["dict", "list", "tuple", "tensor", "ndarray", "scalar",
                                                            "w", ""]), inner, max_size=2), max_leaves=10))
def test_load_of_a_random_index_gives_a_value_or_a_checkpoint_error(tmp_path, tree):
    path = _write_archive(tmp_path / "index.npz", _index(tree), {"w": np.arange(3.0)})
    try:
        mg.load(path)
    except mg.CheckpointError as error:
        assert "index.npz" in str(error)


@junk_settings
@given(cut=st.integers(0, 10_000), flip=st.integers(0, 10_000))
def test_a_truncated_or_damaged_real_checkpoint_is_a_checkpoint_error(tmp_path, cut, flip):
    path = tmp_path / "real.npz"
    mg.save({"model": Small().state_dict(), "step": 3, "names": ["a", "b"]}, path)
    raw = bytearray(path.read_bytes())
    damaged = tmp_path / "damaged.npz"
    if cut < len(raw):
        damaged.write_bytes(bytes(raw[:cut]))
    else:
        raw[flip % len(raw)] ^= 0xFF
        damaged.write_bytes(bytes(raw))
    try:
        mg.load(damaged)  # a flipped byte in a part nobody reads (a zip comment, padding) may go unnoticed
    except mg.CheckpointError as error:
        assert "damaged.npz" in str(error)
