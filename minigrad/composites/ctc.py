"""Connectionist temporal classification (CTC), composed: the forward algorithm in log space.

The targets are extended with a blank before, between and after the labels (length 2S + 1). alpha_t(s)
is the log-probability of all alignments of the first t + 1 frames that end at extended position s:
  alpha_0(0) = lp_0(blank),  alpha_0(1) = lp_0(l_1),  alpha_t(s) = lp_t(ext_s) + logsumexp(
  alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2) [only when ext_s is a label != ext_{s-2}]).
The loss is -logsumexp(alpha_{T-1}(2S), alpha_{T-1}(2S-1)). A Python loop runs over time; batch and
extended positions are vectorised. Unreachable states hold a large finite negative number instead of
-inf, so that no 0 * inf reaches the gradient; a loss that large is reported as inf.
"""
import numpy as np

from ..ops import cat, stack, where
from . import composite
from .softmax import _logsumexp

_UNREACHABLE = -1e30  # log of "no path": exp(it - anything reachable) is exactly 0
_INFEASIBLE = 1e29    # a loss above this went through an unreachable state only


@composite
def ctc_negative_log_likelihood(log_probs, targets, input_lengths, target_lengths, blank):
    # log_probs (T, N, C); targets (N, S) padded integer array; lengths (N,) integer arrays.
    # Returns -log p(target | input) per batch element (N,), inf where no alignment exists.
    n_batch, longest = targets.shape
    positions = np.arange(2 * longest + 1)
    label_index = np.clip((positions - 1) // 2, 0, max(longest - 1, 0))
    labels = targets[:, label_index] if longest else np.zeros((n_batch, len(positions)), np.int64)
    extended = np.where(positions % 2 == 1, labels, blank)                          # (N, L)
    skip = (positions >= 2) & (positions % 2 == 1)
    skip = skip & (extended != np.concatenate([extended[:, :2], extended[:, :-2]], axis=1))
    emissions = log_probs[:, np.arange(n_batch)[:, None], extended]                 # (T, N, L)

    start = (positions[None, :] == 0) | ((positions[None, :] == 1) & (target_lengths[:, None] > 0))
    alpha = where(start, emissions[0], _UNREACHABLE)
    unreachable = alpha.new_full((n_batch, 1), _UNREACHABLE)
    for t in range(1, int(input_lengths.max()) if n_batch else 0):
        one_back = _shift_right(alpha, 1, unreachable)
        two_back = where(skip, _shift_right(alpha, 2, unreachable), _UNREACHABLE)
        step = _logsumexp(stack([alpha, one_back, two_back], -1), (2,), False) + emissions[t]
        alpha = where((t < input_lengths)[:, None], step, alpha)                    # frozen after its end

    rows = np.arange(n_batch)
    last_blank = alpha[rows, 2 * target_lengths]
    last_label = where(target_lengths > 0, alpha[rows, np.maximum(2 * target_lengths - 1, 0)], _UNREACHABLE)
    loss = -_logsumexp(stack([last_blank, last_label], -1), (1,), False)
    return where(loss.detach() > _INFEASIBLE, float("inf"), loss)


def _shift_right(alpha, by, unreachable):
    # alpha(s - by) at position s, unreachable for s < by
    n_batch = alpha.shape[0]
    pad = unreachable.expand(n_batch, by) if by > 1 else unreachable
    return cat([pad, alpha[:, :-by]], 1)
