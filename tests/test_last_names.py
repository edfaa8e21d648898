"""The last names of issue 33's coverage table: ctc_loss/CTCLoss, the removed Tensor stubs, geqrf,
svd_lowrank/pca_lowrank, multi_head_attention_forward, AdaptiveLogSoftmaxWithLoss."""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.autograd import gradcheck

from conftest import torch

needs_torch = pytest.mark.skipif(torch is None, reason="compares with PyTorch")


# ---- ctc_loss ------------------------------------------------------------------------------------------
def _ctc_case(seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((6, 3, 4))
    targets = np.array([[1, 1, 2], [3, 2, 0], [0, 0, 0]])  # a repeated label, a shorter one, an empty one
    return logits, targets, np.array([6, 5, 4]), np.array([3, 2, 0])


def _log_softmax_np(x):
    shifted = x - x.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def _ctc_brute_force(logp, target, frames, blank=0):
    # -log of the sum over every frame labelling that collapses (merge repeats, drop blanks) to target
    n_classes = logp.shape[-1]
    total = 0.0
    for path in np.ndindex(*(n_classes,) * frames):
        collapsed = [c for i, c in enumerate(path) if c != blank and (i == 0 or c != path[i - 1])]
        if collapsed == list(target):
            total += math.exp(sum(logp[t, c] for t, c in enumerate(path)))
    return -math.log(total) if total else math.inf


def test_ctc_loss_matches_brute_force_enumeration():
    logits, targets, in_len, tgt_len = _ctc_case()
    logp = _log_softmax_np(logits[:4])  # 4 frames: 4**4 paths per element
    in_len, tgt_len = np.array([4, 4, 3]), np.array([2, 2, 0])
    got = F.ctc_loss(mg.tensor(logp), mg.tensor(targets), mg.tensor(in_len), mg.tensor(tgt_len), reduction="none")
    expected = [_ctc_brute_force(logp[:in_len[n], n], targets[n, :tgt_len[n]], in_len[n]) for n in range(3)]
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)


def test_ctc_loss_infeasible_is_inf_and_zero_infinity_zeroes_it():
    logp = mg.tensor(_log_softmax_np(np.zeros((2, 1, 3))), requires_grad=True)
    args = (mg.tensor([[1, 1]]), mg.tensor([2]), mg.tensor([2]))  # 1,1 needs 3 frames (a blank between)
    assert math.isinf(F.ctc_loss(logp, *args, reduction="sum").item())
    loss = F.ctc_loss(logp, *args, reduction="sum", zero_infinity=True)
    loss.backward()
    assert loss.item() == 0 and not logp.grad.numpy().any()


def test_ctc_loss_gradcheck():
    logits, targets, in_len, tgt_len = _ctc_case()
    x = mg.tensor(logits, requires_grad=True)
    assert gradcheck(lambda v: F.ctc_loss(v.log_softmax(2), mg.tensor(targets), mg.tensor(in_len),
                                          mg.tensor(tgt_len)), (x,))


def test_ctc_loss_concatenated_unbatched_and_module_agree_with_padded():
    logits, targets, in_len, tgt_len = _ctc_case()
    logp = mg.tensor(_log_softmax_np(logits))
    padded = F.ctc_loss(logp, mg.tensor(targets), mg.tensor(in_len), mg.tensor(tgt_len), reduction="none")
    concatenated = np.concatenate([targets[n, :tgt_len[n]] for n in range(3)])
    joined = F.ctc_loss(logp, mg.tensor(concatenated), in_len.tolist(), tgt_len.tolist(), reduction="none")
    np.testing.assert_allclose(joined.numpy(), padded.numpy())
    single = F.ctc_loss(logp[:, 0], mg.tensor(targets[0]), [6], [3], reduction="none")
    assert single.shape == () and np.isclose(single.item(), padded.numpy()[0])
    module = mg.nn.CTCLoss(blank=0, reduction="sum")
    assert np.isclose(module(logp, mg.tensor(targets), in_len, tgt_len).item(), padded.numpy().sum())
    mean = F.ctc_loss(logp, mg.tensor(targets), in_len, tgt_len)
    assert np.isclose(mean.item(), (padded.numpy() / np.maximum(tgt_len, 1)).mean())
    assert np.isclose(mg.ctc_loss(logp, mg.tensor(targets), in_len, tgt_len, 0, 2, False).item(), padded.numpy().sum())


def test_ctc_loss_bad_input_names_the_op():
    logp = mg.zeros(3, 2, 4)
    with pytest.raises(ValueError, match="ctc_loss"):
        F.ctc_loss(logp, mg.tensor([[1], [1]]), [4, 3], [1, 1])
    with pytest.raises(Exception, match="ctc_loss"):
        F.ctc_loss(logp, mg.tensor([[1], [1]]), [3], [1, 1])


@needs_torch
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("blank", [0, 3])
def test_ctc_loss_matches_torch(reduction, blank):
    logits, targets, in_len, tgt_len = _ctc_case(1)
    targets = np.where(targets == blank, 1, targets) if blank else targets
    x = mg.tensor(logits, requires_grad=True)
    ours = F.ctc_loss(x.log_softmax(2), mg.tensor(targets), mg.tensor(in_len), mg.tensor(tgt_len),
                      blank=blank, reduction=reduction)
    ours.sum().backward()
    xt = torch.tensor(logits, requires_grad=True)
    theirs = torch.nn.functional.ctc_loss(xt.log_softmax(2), torch.tensor(targets), torch.tensor(in_len),
                                          torch.tensor(tgt_len), blank=blank, reduction=reduction)
    theirs.sum().backward()
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), atol=1e-10)


# ---- the removed Tensor methods, geqrf -------------------------------------------------------------------
def test_removed_tensor_methods_raise_naming_the_replacement():
    for name, home in [("solve", "linalg.solve"), ("lstsq", "linalg.lstsq"), ("symeig", "linalg.eigh")]:
        with pytest.raises(RuntimeError, match=rf"Tensor.{name} was deprecated and has been removed.*{home}"):
            getattr(mg.eye(2), name)(mg.eye(2))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_geqrf_rebuilds_the_matrix_from_its_householder_form(shape):
    a = np.random.default_rng(2).standard_normal(shape)
    raw, tau = mg.geqrf(mg.tensor(a))
    assert mg.tensor(a).geqrf()[0].shape == shape and tau.shape == shape[:-2] + (min(shape[-2:]),)
    k = min(shape[-2:])
    r = np.triu(raw.numpy())[..., :k, :]
    for index in np.ndindex(*shape[:-2]):
        q = np.eye(shape[-2])
        for i in range(k):  # Q = H_1 ... H_k,  H_i = I - tau_i v_i v_i^T,  v_i = (0.., 1, a[i+1:, i])
            v = np.zeros(shape[-2])
            v[i], v[i + 1:] = 1, raw.numpy()[index][i + 1:, i]
            q = q @ (np.eye(shape[-2]) - tau.numpy()[index][i] * np.outer(v, v))
        np.testing.assert_allclose(q[:, :k] @ r[index], a[index], atol=1e-12)
    if shape[-2] >= shape[-1]:  # orgqr (householder_product) needs a tall matrix
        np.testing.assert_allclose(mg.orgqr(raw, tau).numpy() @ r, a, atol=1e-12)


@needs_torch
def test_geqrf_matches_torch():
    a = np.random.default_rng(3).standard_normal((2, 5, 3))
    ours, theirs = mg.geqrf(mg.tensor(a)), torch.geqrf(torch.tensor(a))
    np.testing.assert_allclose(ours.a.numpy(), theirs.a.numpy(), atol=1e-12)
    np.testing.assert_allclose(ours.tau.numpy(), theirs.tau.numpy(), atol=1e-12)


# ---- svd_lowrank, pca_lowrank ----------------------------------------------------------------------------
def _low_rank(shape, rank, seed=4):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape[:-1] + (rank,)) @ rng.standard_normal(shape[:-2] + (rank, shape[-1]))


@pytest.mark.parametrize("shape", [(9, 6), (6, 9), (2, 7, 5)])
def test_svd_lowrank_reconstructs_a_low_rank_matrix(shape):
    a = _low_rank(shape, 3)
    U, S, V = mg.svd_lowrank(mg.tensor(a), q=4, niter=2)
    assert U.shape == shape[:-1] + (4,) and S.shape == shape[:-2] + (4,) and V.shape == shape[:-2] + (shape[-1], 4)
    rebuilt = (U.numpy() * S.numpy()[..., None, :]) @ np.swapaxes(V.numpy(), -1, -2)
    np.testing.assert_allclose(rebuilt, a, atol=1e-10)
    np.testing.assert_allclose(S.numpy()[..., :3], np.linalg.svd(a, compute_uv=False)[..., :3], rtol=1e-10)
    np.testing.assert_allclose(np.swapaxes(U.numpy(), -1, -2) @ U.numpy(), np.broadcast_to(np.eye(4), shape[:-2] + (4, 4)),
                               atol=1e-12)


def test_svd_lowrank_with_M_and_pca_lowrank_center():
    a = _low_rank((10, 5), 2)
    offset = np.arange(5.0)
    _, S, _ = mg.svd_lowrank(mg.tensor(a + offset), q=2, M=mg.tensor(offset))
    np.testing.assert_allclose(S.numpy(), np.linalg.svd(a, compute_uv=False)[:2], rtol=1e-10)
    U, S, V = mg.pca_lowrank(mg.tensor(a + offset), q=3)
    centred = a - a.mean(0)
    np.testing.assert_allclose((U.numpy() * S.numpy()) @ V.numpy().T, centred, atol=1e-10)
    with pytest.raises(ValueError, match="pca_lowrank"):
        mg.pca_lowrank(mg.tensor(a), q=6)


def test_svd_lowrank_singular_values_gradcheck():
    a = mg.tensor(np.random.default_rng(5).standard_normal((6, 4)), requires_grad=True)

    def top_two(x):
        mg.manual_seed(0)  # the same random draw at every evaluation
        return mg.svd_lowrank(x, q=2, niter=1)[1]
    assert gradcheck(top_two, (a,))


@needs_torch
def test_svd_lowrank_and_pca_lowrank_reconstruct_as_torch():
    a = _low_rank((8, 6), 3)  # rank 3 (and 3 after centring): both find it exactly, up to the factors' signs
    for ours, theirs in [(mg.svd_lowrank(mg.tensor(a), q=3), torch.svd_lowrank(torch.tensor(a), q=3)),
                         (mg.pca_lowrank(mg.tensor(a + 1.5), q=3), torch.pca_lowrank(torch.tensor(a + 1.5), q=3))]:
        (U, S, V), (Ut, St, Vt) = ours, theirs
        np.testing.assert_allclose(S.numpy(), St.numpy(), rtol=1e-9)
        np.testing.assert_allclose((U.numpy() * S.numpy()) @ V.numpy().T, ((Ut * St) @ Vt.T).numpy(), atol=1e-9)


# ---- F.multi_head_attention_forward --------------------------------------------------------------------
def _mha_weights(E, seed=6):
    rng = np.random.default_rng(seed)
    shapes = dict(in_w=(3 * E, E), in_b=(3 * E,), bias_k=(1, 1, E), bias_v=(1, 1, E), out_w=(E, E), out_b=(E,))
    return {name: rng.standard_normal(shape) * 0.5 for name, shape in shapes.items()}


def test_multi_head_attention_forward_is_the_module_on_the_same_weights():
    E, heads = 6, 3
    layer = mg.nn.MultiheadAttention(E, heads, add_bias_kv=True, dtype=np.float64)
    x = mg.tensor(np.random.default_rng(7).standard_normal((4, 2, E)))
    mask = mg.tensor(np.triu(np.ones((4, 4), bool), 1))
    expected, expected_weights = layer(x, x, x, attn_mask=mask)
    out, weights = F.multi_head_attention_forward(
        x, x, x, E, heads, layer.in_proj_weight, layer.in_proj_bias, layer.bias_k, layer.bias_v, False, 0.0,
        layer.out_proj.weight, layer.out_proj.bias, attn_mask=mask)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(weights.detach().numpy(), expected_weights.detach().numpy(), rtol=1e-12)
    with pytest.raises(NotImplementedError, match="static_k"):
        F.multi_head_attention_forward(x, x, x, E, heads, layer.in_proj_weight, None, None, None, False, 0.0,
                                       layer.out_proj.weight, None, static_k=x)


def test_multi_head_attention_forward_gradcheck_separate_projections():
    E, heads, rng = 4, 2, np.random.default_rng(8)
    q, kv = mg.tensor(rng.standard_normal((3, E)), requires_grad=True), mg.tensor(rng.standard_normal((5, 3)))
    w_q = mg.tensor(rng.standard_normal((E, E)), requires_grad=True)
    w_k, w_v = mg.tensor(rng.standard_normal((E, 3))), mg.tensor(rng.standard_normal((E, 3)))
    out_w = mg.tensor(rng.standard_normal((E, E)))

    def attend(query, weight_q):
        return F.multi_head_attention_forward(query, kv, kv, E, heads, None, None, None, None, True, 0.0, out_w, None,
                                              use_separate_proj_weight=True, q_proj_weight=weight_q,
                                              k_proj_weight=w_k, v_proj_weight=w_v, need_weights=False)[0]
    assert gradcheck(attend, (q, w_q))


@needs_torch
@pytest.mark.parametrize("average", [True, False])
def test_multi_head_attention_forward_matches_torch(average):
    E, heads, rng = 8, 2, np.random.default_rng(9)
    w = _mha_weights(E)
    q, k = rng.standard_normal((3, 2, E)), rng.standard_normal((4, 2, E))
    padding = np.array([[False, False, False, True], [False] * 4])
    results = []
    for lib, convert in [(mg, mg.tensor), (torch, torch.tensor)]:
        args = [convert(a) for a in (q, k, k)] + [E, heads, convert(w["in_w"]), convert(w["in_b"]),
                                                 convert(w["bias_k"]), convert(w["bias_v"]), True, 0.0,
                                                 convert(w["out_w"]), convert(w["out_b"])]
        results.append(lib.nn.functional.multi_head_attention_forward(
            *args, training=False, key_padding_mask=convert(padding), average_attn_weights=average))
    (out, weights), (out_t, weights_t) = results
    np.testing.assert_allclose(out.numpy(), out_t.numpy(), atol=1e-12)
    np.testing.assert_allclose(weights.numpy(), weights_t.numpy(), atol=1e-12)


# ---- AdaptiveLogSoftmaxWithLoss ------------------------------------------------------------------------
def _adaptive(seed=10):
    mg.manual_seed(seed)
    layer = mg.nn.AdaptiveLogSoftmaxWithLoss(16, 10, [3, 6], div_value=2.0, head_bias=True, dtype=np.float64)
    x = mg.tensor(np.random.default_rng(seed).standard_normal((5, 16)))
    return layer, x, mg.tensor([0, 4, 9, 2, 7])


def test_adaptive_log_softmax_is_a_distribution_with_the_two_level_formula():
    layer, x, target = _adaptive()
    logp = layer.log_prob(x).detach().numpy()
    np.testing.assert_allclose(np.exp(logp).sum(1), 1, rtol=1e-12)
    head = _log_softmax_np(x.numpy() @ layer.head.weight.detach().numpy().T + layer.head.bias.detach().numpy())
    tail = layer.tail[1]  # cluster 1 holds classes 6..9, at head entry 3 + 1
    tail_logp = _log_softmax_np(x.numpy() @ tail[0].weight.detach().numpy().T @ tail[1].weight.detach().numpy().T)
    np.testing.assert_allclose(logp[:, 6:], tail_logp + head[:, 4:5], rtol=1e-12)
    np.testing.assert_allclose(logp[:, :3], head[:, :3], rtol=1e-12)
    output, loss = layer(x, target)
    np.testing.assert_allclose(output.detach().numpy(), logp[np.arange(5), target.numpy()], rtol=1e-12)
    assert np.isclose(loss.item(), -output.detach().numpy().mean())
    assert layer.predict(x).tolist() == logp.argmax(1).tolist()
    single = layer(x[0], target[0])
    assert single.output.shape == () and np.isclose(single.output.item(), output.detach().numpy()[0])
    with pytest.raises(ValueError, match="AdaptiveLogSoftmaxWithLoss"):
        layer(x, mg.tensor([0, 1, 2, 3, 10]))
    with pytest.raises(ValueError, match="cutoffs"):
        mg.nn.AdaptiveLogSoftmaxWithLoss(16, 10, [6, 3])


def test_adaptive_log_softmax_gradcheck():
    layer, x, target = _adaptive()
    x.requires_grad_(True)
    assert gradcheck(lambda inputs: layer(inputs, target).loss, (x,))


@needs_torch
def test_adaptive_log_softmax_matches_torch():
    layer, x, target = _adaptive()
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 10, [3, 6], div_value=2.0, head_bias=True).double()
    theirs.load_state_dict({name: torch.tensor(p.detach().numpy()) for name, p in layer.named_parameters()})
    output, loss = layer(x, target)
    output_t, loss_t = theirs(torch.tensor(x.numpy()), torch.tensor(target.numpy()))
    np.testing.assert_allclose(output.detach().numpy(), output_t.detach().numpy(), rtol=1e-12)
    assert np.isclose(loss.item(), loss_t.item())
    np.testing.assert_allclose(layer.log_prob(x).detach().numpy(),
                               theirs.log_prob(torch.tensor(x.numpy())).detach().numpy(), rtol=1e-12)
    assert layer.predict(x).tolist() == theirs.predict(torch.tensor(x.numpy())).tolist()


# a tail cluster of width 0 (in_features / div_value^2 rounds to 0): PyTorch builds Linear(6, 0) and
# Linear(0, 3), whose initialisation is a no-op with a warning; the cluster's classes then share the head's
# probability evenly (its logits are all 0). minigrad raised ZeroDivisionError (issue 39).
def _adaptive_with_an_empty_tail():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        layer = mg.nn.AdaptiveLogSoftmaxWithLoss(6, 10, [3, 7], div_value=4.0).double()
    x = mg.tensor(np.random.default_rng(7).standard_normal((5, 6)))
    return layer, x, mg.tensor([0, 3, 5, 7, 9])


def test_adaptive_log_softmax_with_a_tail_of_width_zero():
    layer, x, target = _adaptive_with_an_empty_tail()
    assert tuple(layer.tail[1][0].weight.shape) == (0, 6) and tuple(layer.tail[1][1].weight.shape) == (3, 0)
    logp = layer.log_prob(x).detach().numpy()
    np.testing.assert_allclose(np.exp(logp).sum(1), 1, rtol=1e-12)
    head = _log_softmax_np(x.numpy() @ layer.head.weight.detach().numpy().T)
    np.testing.assert_allclose(logp[:, 7:], np.repeat(head[:, 4:5] - np.log(3), 3, 1), rtol=1e-12)  # uniform there
    output, loss = layer(x, target)
    np.testing.assert_allclose(output.detach().numpy(), logp[np.arange(5), target.numpy()], rtol=1e-12)
    x.requires_grad_(True)
    assert gradcheck(lambda inputs: layer(inputs, target).loss, (x,))


def test_a_linear_layer_of_width_zero_gives_its_bias():
    with pytest.warns(UserWarning, match="zero-element"):
        layer = mg.nn.Linear(0, 3)
    np.testing.assert_array_equal(layer.bias.detach().numpy(), np.zeros(3))  # U(-0, 0): no fan to scale by
    x = mg.ones(4, 0, requires_grad=True)
    y = layer(x)
    assert tuple(y.shape) == (4, 3)
    y.sum().backward()
    assert tuple(x.grad.shape) == (4, 0) and tuple(layer.weight.grad.shape) == (3, 0)
    np.testing.assert_array_equal(layer.bias.grad.numpy(), [4.0, 4.0, 4.0])


@needs_torch
def test_adaptive_log_softmax_with_a_tail_of_width_zero_matches_torch():
    layer, x, target = _adaptive_with_an_empty_tail()
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(6, 10, [3, 7], div_value=4.0).double()
    theirs.load_state_dict({name: torch.tensor(p.detach().numpy()) for name, p in layer.named_parameters()})
    output, loss = layer(x, target)
    output_t, loss_t = theirs(torch.tensor(x.numpy()), torch.tensor(target.numpy()))
    np.testing.assert_allclose(output.detach().numpy(), output_t.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(layer.log_prob(x).detach().numpy(),
                               theirs.log_prob(torch.tensor(x.numpy())).detach().numpy(), rtol=1e-12)
