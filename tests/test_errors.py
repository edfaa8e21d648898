"""Bad input raises an error that names the operation and the shapes (or values) involved."""
import re

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn, optim


def raises(exception, fn, *fragments):
    """Call fn, expect `exception`, and check that every fragment appears in the message."""
    with pytest.raises(exception) as info:
        fn()
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} missing from {message!r}"
    return message


def test_shape_error_is_both_value_error_and_runtime_error():
    assert issubclass(mg.ShapeError, ValueError) and issubclass(mg.ShapeError, RuntimeError)
    with pytest.raises(ValueError):
        mg.ones(2, 3) @ mg.ones(2, 3)
    with pytest.raises(RuntimeError):
        mg.ones(2, 3) @ mg.ones(2, 3)


# ---- matmul -------------------------------------------------------------------------------------
@pytest.mark.parametrize("a,b", [((2, 3), (2, 3)), ((3,), (4,)), ((5, 2, 3), (4, 5)), ((2, 4), (3,))])
def test_matmul_inner_dims_mismatch(a, b):
    raises(mg.ShapeError, lambda: mg.ones(*a) @ mg.ones(*b), "matmul", str(a), str(b))


def test_matmul_batch_dims_mismatch():
    raises(mg.ShapeError, lambda: mg.ones(2, 2, 3) @ mg.ones(3, 3, 4), "matmul", "(2, 2, 3)", "(3, 3, 4)")


def test_matmul_of_a_scalar():
    raises(mg.ShapeError, lambda: mg.matmul(mg.tensor(2.0), mg.ones(3)), "matmul", "()", "(3,)")


def test_matmul_error_leaves_no_graph_behind():
    a = mg.ones(2, 3, requires_grad=True)
    with pytest.raises(mg.ShapeError):
        a @ mg.ones(2, 3)
    (a * 2).sum().backward()  # the failed op left nothing that breaks a later backward
    assert a.grad.shape == (2, 3)


# ---- broadcasting -------------------------------------------------------------------------------
@pytest.mark.parametrize("op,fn", [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / b), ("pow", lambda a, b: a ** b), ("maximum", mg.maximum),
    ("minimum", mg.minimum), ("add", lambda a, b: b.add(a)),
])
def test_broadcast_mismatch(op, fn):
    a, b = mg.ones(2, 3, requires_grad=True), mg.ones(4)
    message = raises(mg.ShapeError, lambda: fn(a, b), op)
    assert "(2, 3)" in message and "(4,)" in message


def test_comparison_broadcast_mismatch():
    raises(mg.ShapeError, lambda: mg.ones(3) < mg.ones(2), "lt", "(3,)", "(2,)")


def test_where_and_masked_fill_mismatch():
    raises(mg.ShapeError, lambda: mg.where(mg.ones(2).bool(), mg.ones(3), mg.ones(2)), "where", "(2,)", "(3,)")
    raises(mg.ShapeError, lambda: mg.ones(2, 3).masked_fill(mg.ones(2).bool(), 0.0), "masked_fill", "(2,)",
           "(2, 3)")
    raises(TypeError, lambda: mg.ones(3).masked_fill(mg.ones(3), 0.0), "masked_fill", "bool")
    raises(TypeError, lambda: mg.where(mg.ones(3), mg.ones(3), 0.0), "where", "bool")


def test_expand_mismatch():
    raises(mg.ShapeError, lambda: mg.ones(2, 3).expand(4, 3), "expand", "(2, 3)", "(4, 3)")
    raises(mg.ShapeError, lambda: mg.ones(2, 3).expand(3), "expand", "(2, 3)")


# ---- reshape and friends ------------------------------------------------------------------------
@pytest.mark.parametrize("fn,target,op", [
    (lambda x: x.reshape(4, 2), "(4, 2)", "reshape"), (lambda x: x.view(5), "(5,)", "view"),
    (lambda x: x.reshape(-1, 4), "(-1, 4)", "reshape"), (lambda x: mg.reshape(x, (7,)), "(7,)", "reshape"),
])
def test_reshape_impossible(fn, target, op):
    raises(mg.ShapeError, lambda: fn(mg.ones(2, 3)), op, "(2, 3)", target, "6 elements")


def test_reshape_two_unknown_dims():
    raises(mg.ShapeError, lambda: mg.ones(6).reshape(-1, -1), "reshape", "-1")


def test_permute_not_a_permutation():
    raises(mg.ShapeError, lambda: mg.ones(2, 3).permute(0, 0), "permute", "(0, 0)", "(2, 3)")
    raises(mg.ShapeError, lambda: mg.ones(2, 3, 4).permute(1, 0), "permute", "(2, 3, 4)")


# ---- indexing -----------------------------------------------------------------------------------
@pytest.mark.parametrize("index,fragments", [
    (3, ["3", "size 3"]),
    (-4, ["-4"]),
    ((0, 4), ["4", "size 4"]),
    ([0, 5], ["5"]),
    (mg.tensor([1, -7]), ["-7"]),
    ((0, 0, 0), ["too many"]),
])
def test_index_out_of_range(index, fragments):
    x = mg.ones(3, 4, requires_grad=True)
    raises(IndexError, lambda: x[index], "index", "(3, 4)", *fragments)


def test_bool_mask_of_the_wrong_shape():
    raises(IndexError, lambda: mg.ones(3, 4)[mg.tensor([True, False])], "index", "mask", "(2,)", "(3, 4)")
    raises(IndexError, lambda: mg.ones(3, 4)[:, np.ones(3, dtype=bool)], "index", "(3,)", "(3, 4)")


def test_float_index():
    raises(IndexError, lambda: mg.ones(3)[mg.tensor([0.0, 1.0])], "index", "float")
    raises(IndexError, lambda: mg.ones(3)[[0.5]], "index", "float")


# ---- cat, stack, split --------------------------------------------------------------------------
def test_cat_of_different_ranks():
    raises(mg.ShapeError, lambda: mg.cat([mg.ones(2, 3), mg.ones(3)]), "cat", "(2, 3)", "(3,)")


def test_cat_of_mismatched_sizes():
    message = raises(mg.ShapeError, lambda: mg.cat([mg.ones(2, 3), mg.ones(2, 4)], dim=0), "cat", "(2, 3)", "(2, 4)")
    assert "dim 0" in message
    mg.cat([mg.ones(2, 3), mg.ones(2, 4)], dim=1)  # fine along the dim that differs


def test_cat_of_nothing_and_of_non_tensors():
    raises(ValueError, lambda: mg.cat([]), "cat")
    raises(TypeError, lambda: mg.cat([mg.ones(2), [1.0, 2.0]]), "cat", "list")
    raises(mg.ShapeError, lambda: mg.cat([mg.tensor(1.0), mg.tensor(2.0)]), "cat", "zero-dim")


def test_stack_of_different_shapes():
    raises(mg.ShapeError, lambda: mg.stack([mg.ones(2, 3), mg.ones(3, 2)]), "stack", "(2, 3)", "(3, 2)")


def test_split_sizes_that_do_not_add_up():
    raises(mg.ShapeError, lambda: mg.ones(5, 2).split([2, 2]), "split", "[2, 2]", "(5, 2)")
    raises(ValueError, lambda: mg.ones(5).split(0), "split", "0")
    raises(ValueError, lambda: mg.ones(5).chunk(0), "chunk", "0")


# ---- dims out of range --------------------------------------------------------------------------
DIM_OPS = {
    "sum": lambda x, d: x.sum(d), "mean": lambda x, d: x.mean(d), "var": lambda x, d: x.var(d),
    "amax": lambda x, d: x.amax(d), "amin": lambda x, d: x.amin(d), "max": lambda x, d: x.max(d),
    "min": lambda x, d: x.min(d), "argmax": lambda x, d: x.argmax(d), "softmax": lambda x, d: x.softmax(d),
    "log_softmax": lambda x, d: x.log_softmax(d), "transpose": lambda x, d: x.transpose(0, d),
    "squeeze": lambda x, d: x.squeeze(d), "flatten": lambda x, d: x.flatten(d), "cat": lambda x, d: mg.cat([x, x], d),
    "split": lambda x, d: x.split(1, d), "chunk": lambda x, d: x.chunk(2, d), "size": lambda x, d: x.size(d),
}


@pytest.mark.parametrize("op", sorted(DIM_OPS))
@pytest.mark.parametrize("dim", [2, -3, 5])
def test_dim_out_of_range(op, dim):
    x = mg.ones(2, 3)
    message = raises(IndexError, lambda: DIM_OPS[op](x, dim), op, f"dim {dim}", "2 dimensions")
    assert re.search(r"\[-2, 1\]", message)  # the allowed range


def test_dim_out_of_range_for_new_dims():
    raises(IndexError, lambda: mg.ones(2, 3).unsqueeze(4), "unsqueeze", "dim 4", "[-3, 2]")
    raises(IndexError, lambda: mg.stack([mg.ones(2), mg.ones(2)], 3), "stack", "dim 3")


def test_tuple_dim_naming_a_dim_twice():
    raises(ValueError, lambda: mg.ones(2, 3).sum((1, -1)), "sum", "twice")


def test_reduce_an_empty_dim():
    raises(ValueError, lambda: mg.ones(0, 3).amax(0), "amax", "(0, 3)")
    raises(ValueError, lambda: mg.ones(0, 3).max(0), "max", "(0, 3)")


# ---- other bad arguments ------------------------------------------------------------------------
def test_backward_on_non_scalar_without_gradient():
    y = mg.ones(2, 3, requires_grad=True) * 2
    raises(RuntimeError, y.backward, "backward", "(2, 3)", "gradient")


def test_tril_triu_need_two_dims():
    raises(mg.ShapeError, lambda: mg.ones(3).tril(), "tril", "(3,)")
    raises(mg.ShapeError, lambda: mg.triu(mg.ones(3)), "triu", "(3,)")


def test_softmax_of_integers():
    raises(TypeError, lambda: mg.tensor([1, 2]).softmax(0), "softmax", "int64")


def test_item_and_bool_of_many_elements():
    raises(ValueError, lambda: mg.ones(2).item(), "item", "(2,)")
    raises(RuntimeError, lambda: bool(mg.ones(2)), "(2,)")


def test_bad_tensor_data():
    raises(TypeError, lambda: mg.tensor("abc"), "tensor", "str")
    raises(ValueError, lambda: mg.tensor([[1, 2], [3]]), "tensor")


def test_clamp_and_var_arguments():
    raises(ValueError, lambda: mg.ones(2).clamp(), "clamp", "min", "max")
    raises(ValueError, lambda: mg.ones(2).var(unbiased=True, correction=1), "var")


def test_integer_tensors_cannot_require_grad():
    raises(RuntimeError, lambda: mg.tensor([1, 2], requires_grad=True), "floating point", "int64")


# ---- integer var, split sizes, devices, empty dims ------------------------------------------------
def test_var_of_an_integer_tensor_is_a_type_error_as_mean():
    raises(TypeError, lambda: mg.tensor([1, 2, 3]).var(), "var", "int64")


def test_split_refuses_negative_sizes_that_sum_right():
    raises(ValueError, lambda: mg.ones(4).split([5, -1]), "split", "negative", "[5, -1]")


def test_to_a_device_other_than_the_cpu_names_the_device():
    raises(ValueError, lambda: mg.ones(2).to("cuda"), "CPU only", "'cuda'")
    assert mg.ones(2).to("cpu", "float64").dtype == mg.float64


def test_argmax_of_an_empty_dimension_names_the_op_and_shape():
    raises(ValueError, lambda: mg.zeros(0).argmax(), "argmax", "(0,)")
    raises(ValueError, lambda: mg.zeros(0, 3).argmin(dim=0), "argmin", "(0, 3)")
    assert mg.zeros(0, 3).argmax(dim=1).shape == (0,)  # reducing a non-empty dim of an empty tensor is fine


# ---- __index__ ----------------------------------------------------------------------------------
@pytest.mark.parametrize("make,dtype,shape", [(lambda: mg.tensor(2.0), "float32", "()"),
                                              (lambda: mg.tensor([1, 2]), "int64", "(2,)")])
def test_only_one_element_integer_tensors_are_indices(make, dtype, shape):
    raises(TypeError, lambda: [1, 2, 3][make()], "__index__", "integer", dtype, shape)


# ---- a learner's common mistakes -----------------------------------------------------------------
def test_clear_errors_for_common_mistakes(tmp_path):
    with pytest.raises(RuntimeError, match="floating point"):
        mg.tensor([1, 2, 3], requires_grad=True)
    with pytest.raises(TypeError, match="masked_fill.*bool"):
        mg.randn(2, 3).masked_fill(mg.ones(2, 3), 0.0)
    q = mg.randn(2, 4, 5, 8)
    with pytest.raises(mg.ShapeError, match=r"attn_mask of shape \(3, 3\).*\(2, 4, 5, 5\)"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=mg.ones(3, 3, dtype=mg.bool))
    attention = nn.MultiheadAttention(8, 2, batch_first=True)
    x = mg.randn(2, 5, 8)
    with pytest.raises(mg.ShapeError, match="attn_mask"):
        attention(x, x, x, attn_mask=mg.ones(2, 1, 4, 4, dtype=mg.bool))
    with pytest.raises(ValueError, match="max_len=10"):
        nn.PositionalEncoding(8, max_len=10)(mg.randn(1, 11, 8))
    with pytest.raises(IndexError, match="token id 12 is outside the vocabulary of 10"):
        nn.Embedding(10, 4)(mg.tensor([[1, 12]]))
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.Adam([])
    with pytest.raises(mg.ShapeError, match=r"class-probability target must have input's shape \(3, 4\), got \(3,\) "
                       r"\(a float target holds probabilities; integer class ids: target.long\(\)\)"):
        F.cross_entropy(mg.randn(3, 4), mg.tensor([0.0, 1.0, 2.0]))

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
