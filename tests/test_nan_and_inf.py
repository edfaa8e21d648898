"""NaN and infinity. Where the math is finite, values and gradients are too: -inf logits (impossible
classes), a constant row through layer norm, label smoothing on an all-padding batch, fully masked
attention rows. Where an op does create NaN or infinity, anomaly mode (mg.detect_anomaly) names the op,
its shapes and the line of user code that created it. (Random masks through attention: test_fuzz.py.)"""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn

# ---- anomaly detection -------------------------------------------------------------------------
def test_anomaly_mode_names_the_forward_op_its_shapes_and_the_users_line():
    x = mg.tensor([[1.0, -2.0, 3.0]], requires_grad=True)
    with mg.detect_anomaly():
        with pytest.raises(mg.AnomalyError) as error:
            (x * 2.0).log()  # log of a negative number: the op that creates the NaN
    message = str(error.value)
    assert "Log" in message and "NaN" in message and "(1, 3)" in message
    assert "test_nan_and_inf.py" in message and "(x * 2.0).log()" in message


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
