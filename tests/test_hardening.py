"""Hardening: anomaly detection, in-place safety, clear errors for a learner's mistakes, and NaNs
that must not leak. (Fuzzing is in test_fuzz.py, interrupted training in test_training.py.)"""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn, optim


# ---- anomaly detection -------------------------------------------------------------------------
def test_anomaly_mode_names_the_forward_op_its_shapes_and_the_users_line():
    x = mg.tensor([[1.0, -2.0, 3.0]], requires_grad=True)
    with mg.detect_anomaly():
        with pytest.raises(mg.AnomalyError) as error:
            (x * 2.0).log()  # log of a negative number: the op that creates the NaN
    message = str(error.value)
    assert "Log" in message and "NaN" in message and "(1, 3)" in message
    assert "test_hardening.py" in message and "(x * 2.0).log()" in message


def test_where_sqrt_trap_gives_nan_gradient_and_anomaly_mode_names_sqrt():
    # where(c, sqrt(x), x): at x = 0 the branch not taken still differentiates sqrt at 0, and
    # 0 * (1 / (2 sqrt(0))) = 0 * inf = NaN, as in PyTorch.
    x = mg.tensor([0.0, 4.0], dtype=mg.float64, requires_grad=True)
    y = mg.where(x.detach().numpy() > 0, x.sqrt(), x)
    y.sum().backward()
    assert np.isnan(x.grad.numpy()[0])

    x.grad = None
    with mg.detect_anomaly():
        y = mg.where(x.detach().numpy() > 0, x.sqrt(), x)
        with pytest.raises(mg.AnomalyError, match=r"Sqrt\.backward produced NaN"):
            y.sum().backward()

    # the fix: make the unsafe op's input safe where its result is not used
    x.grad = None
    safe = mg.where(x.detach().numpy() > 0, x, 1.0)
    y = mg.where(x.detach().numpy() > 0, safe.sqrt(), x)
    y.sum().backward()
    assert np.allclose(x.grad.numpy(), [1.0, 0.25])


def test_anomaly_mode_accepts_masks_and_trains_a_transformer_layer():
    """-inf from masking is not an anomaly: only non-finite values an op creates from finite ones."""
    mg.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, batch_first=True)
    x = mg.randn(2, 5, 8, requires_grad=True)
    padding = mg.tensor([[1, 2, 3, 0, 0], [1, 2, 3, 4, 5]]) == 0  # True at padding, as PyTorch's modules take it
    with mg.detect_anomaly():
        layer(x, src_key_padding_mask=padding).sum().backward()
    assert np.isfinite(x.grad.numpy()).all()
    assert not mg.is_anomaly_enabled()


def test_anomaly_mode_catches_a_fully_masked_softmax_row():
    scores = mg.tensor([[0.0, 1.0], [float("-inf"), float("-inf")]], requires_grad=True)
    with mg.detect_anomaly():
        with pytest.raises(mg.AnomalyError, match="Softmax produced NaN"):
            scores.softmax(dim=-1)


# ---- in-place changes ----------------------------------------------------------------------------
def test_changing_a_saved_parameter_before_backward_is_an_error_not_a_wrong_gradient():
    w = mg.randn(3, 2, requires_grad=True)
    x = mg.randn(4, 3, requires_grad=True)
    loss = (x @ w).sum()
    with mg.no_grad():
        w.sub_(0.1)
    with pytest.raises(RuntimeError, match=r"MatMul.*changed in place.*version 0 -> 1"):
        loss.backward()
    assert x.grad is None and w.grad is None  # nothing half-done


def test_optimizer_step_between_forward_and_backward_is_caught():
    model = nn.Linear(3, 2)
    opt = optim.SGD(model.parameters(), lr=0.1)
    x = mg.randn(4, 3)
    loss = model(x).sum()
    loss.backward(retain_graph=True)
    opt.step()
    with pytest.raises(RuntimeError, match="changed in place"):
        loss.backward()


def test_in_place_change_of_a_saved_output_or_constant_is_caught():
    x = mg.randn(3, requires_grad=True)
    y = x.exp()  # Exp saves its output
    with mg.no_grad():
        y.mul_(2.0)
    with pytest.raises(RuntimeError, match="Exp"):
        y.sum().backward()

    c = mg.tensor([1.0, 2.0, 3.0])  # a constant that Mul saves to differentiate x * c
    z = x * c
    c[0] = 10.0
    with pytest.raises(RuntimeError, match="Mul"):
        z.sum().backward()

    d = mg.tensor([1.0, 2.0, 3.0])
    w = x.detach()  # shares x's data and version counter
    z = x * d
    with mg.no_grad():
        w.add_(1.0)
    with pytest.raises(RuntimeError, match="changed in place"):
        z.sum().backward()


def test_in_place_change_of_a_linear_input_or_of_embedding_ids_is_caught():
    layer = nn.Linear(3, 2)
    for shape in ((4, 3), (2, 4, 3)):  # the fused op works on a 2-D view of x: x itself must be watched
        x = mg.randn(*shape)
        loss = layer(x).sum()
        x.mul_(2.0)
        with pytest.raises(RuntimeError, match="Linear.*changed in place"):
            loss.backward()
    embed = nn.Embedding(5, 3)
    ids = mg.tensor([[1, 2, 2]])
    loss = embed(ids).sum()
    ids[0, 0] = 4
    with pytest.raises(RuntimeError, match="Embedding.*changed in place"):
        loss.backward()


def test_in_place_changes_that_backward_does_not_need_are_fine():
    x = mg.randn(3, requires_grad=True)
    c = mg.tensor([1.0, 2.0, 3.0])
    y = x + c  # Add saves nothing
    c.add_(5.0)
    y.sum().backward()
    assert np.array_equal(x.grad.numpy(), np.ones(3, dtype=np.float32))
    # clone() gives a copy that can be changed freely
    z = x.clone()
    w = x * z.detach().clone()
    with mg.no_grad():
        z.mul_(3.0)
    w.sum().backward()


def test_in_place_on_a_leaf_is_refused_with_advice_and_on_a_tensor_in_the_graph_recorded():
    x = mg.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="no_grad"):
        x.add_(1.0)
    y = x * 2
    y.mul_(2.0)  # as PyTorch: y's history continues through the in-place op (tests/test_inplace.py)
    y[0] = 1.0
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 4.0, 4.0]


# ---- clear errors ------------------------------------------------------------------------------
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
    with pytest.raises(TypeError, match="integer class ids"):
        F.cross_entropy(mg.randn(3, 4), mg.tensor([0.0, 1.0, 2.0]))


def test_checkpoint_of_another_configuration_is_refused_and_the_model_kept(tmp_path):
    from minigrad_models.transformer import Seq2SeqTransformer, TransformerConfig

    small = Seq2SeqTransformer(TransformerConfig(10, 10, d_model=8, num_heads=2, d_ff=16))
    other = Seq2SeqTransformer(TransformerConfig(10, 12, d_model=8, num_heads=2, d_ff=32, num_decoder_layers=3))
    mg.save(small.state_dict(), tmp_path / "small.npz")
    before = {k: v.detach().numpy().copy() for k, v in other.state_dict().items()}
    with pytest.raises(RuntimeError) as error:  # PyTorch's type and wording
        other.load_state_dict(mg.load(tmp_path / "small.npz"))
    message = str(error.value)
    assert 'Missing key(s) in state_dict: "decoder.layers.2' in message
    assert ("size mismatch for generator.weight: copying a param with shape (10, 8) from checkpoint, "
            "the shape in current model is (12, 8).") in message
    assert ("size mismatch for encoder.layers.0.linear1.weight: copying a param with shape (16, 8) from "
            "checkpoint, the shape in current model is (32, 8).") in message
    assert all(np.array_equal(before[k], v.detach().numpy()) for k, v in other.state_dict().items())


# ---- NaN that must not leak --------------------------------------------------------------------
def test_minus_infinity_logits_stay_finite_where_the_math_is_finite():
    logits = mg.tensor([[0.0, float("-inf"), 2.0], [1.0, 1.0, float("-inf")]], requires_grad=True)
    out = logits.log_softmax(dim=-1)
    finite = np.isfinite(logits.detach().numpy())
    assert np.isfinite(out.detach().numpy()[finite]).all() and np.isneginf(out.detach().numpy()[~finite]).all()
    (out.masked_fill(~mg.tensor(finite), 0.0) * mg.randn(2, 3)).sum().backward()
    assert np.isfinite(logits.grad.numpy()).all()

    logits.grad = None
    loss = F.cross_entropy(logits, mg.tensor([2, 0]))
    loss.backward()
    assert np.isfinite(loss.item()) and np.isfinite(logits.grad.numpy()).all()
    assert np.all(logits.grad.numpy()[~finite] == 0)  # an impossible class gets no gradient


def test_layer_norm_of_a_constant_row_is_finite():
    x = mg.full((2, 6), 3.0, requires_grad=True)
    ln = nn.LayerNorm(6)
    y = ln(x)
    (y * mg.randn(2, 6)).sum().backward()
    assert np.all(y.detach().numpy() == 0)  # (x - mean) = 0 exactly: output is the bias
    for t in (x.grad, ln.weight.grad, ln.bias.grad):
        assert np.isfinite(t.detach().numpy()).all()


def test_label_smoothing_on_an_all_padding_batch_is_zero_not_nan():
    logits = mg.randn(4, 5, requires_grad=True)
    loss = F.cross_entropy(logits, mg.tensor([0, 0, 0, 0]), ignore_index=0, label_smoothing=0.1)
    loss.backward()
    assert loss.item() == 0.0 and np.all(logits.grad.numpy() == 0)


def test_fully_masked_attention_rows_give_zero_not_nan():
    q = mg.randn(1, 2, 3, 4, requires_grad=True)
    mask = mg.tensor([[True, False, True], [False, False, False], [True, True, True]])
    out, weights = F.scaled_dot_product_attention_with_weights(q, q, q, attn_mask=mask)
    (out * mg.randn(*out.shape)).sum().backward()
    assert np.all(out.detach().numpy()[:, :, 1] == 0) and np.all(weights.detach().numpy()[:, :, 1] == 0)
    assert np.isfinite(q.grad.numpy()).all()
