"""AdaptiveLogSoftmaxWithLoss (Grave et al. 2017, "Efficient softmax approximation for GPUs"), composed.

The classes are split by `cutoffs` into a shortlist of frequent ones and tail clusters of rarer ones. A
head linear layer scores the shortlist classes and one entry per cluster; each cluster has its own
smaller two-layer projection (width in_features / div_value^(i+1)) scoring its classes:
    log p(c) = head_logp[c]                                    c in the shortlist
    log p(c) = head_logp[cluster i] + tail_i_logp[c - cutoff_i]  c in cluster i
Everything is linear, log_softmax, indexing and cat, so the gradient comes from those primitives.
"""
from collections import namedtuple

import numpy as np

from .. import ops
from ..errors import ShapeError
from ..tensor import Tensor
from .containers import ModuleList, Sequential
from .layers import Linear
from .module import Module

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """PyTorch's nn.AdaptiveLogSoftmaxWithLoss: forward(input, target) -> (output, loss), output the
    log-probability of each row's target, loss its negated mean; log_prob(input) gives every class's,
    predict(input) the most likely class. (This composition computes every cluster for every row.)"""

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if (not cutoffs or cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError(f"AdaptiveLogSoftmaxWithLoss: cutoffs {cutoffs} should be a sequence of unique, "
                             f"positive integers sorted in an increasing order, each between 1 and "
                             f"n_classes-1 = {n_classes - 1}")
        self.in_features, self.n_classes, self.div_value, self.head_bias = in_features, n_classes, div_value, head_bias
        self.cutoffs = cutoffs + [n_classes]
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, dtype=dtype)
        self.tail = ModuleList(
            Sequential(Linear(in_features, int(in_features // (div_value ** (i + 1))), bias=False, dtype=dtype),
                       Linear(int(in_features // (div_value ** (i + 1))), self.cutoffs[i + 1] - self.cutoffs[i],
                              bias=False, dtype=dtype))
            for i in range(self.n_clusters))

    def reset_parameters(self):
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection:
                layer.reset_parameters()

    def log_prob(self, input):
        """(N, n_classes) log-probabilities of every class for input (N, in_features)."""
        self._check_input(input)
        head_logp = self.head(input).log_softmax(dim=-1)
        pieces = [head_logp[..., :self.shortlist_size]]
        for i, projection in enumerate(self.tail):
            cluster_logp = head_logp[..., self.shortlist_size + i:self.shortlist_size + i + 1]
            pieces.append(projection(input).log_softmax(dim=-1) + cluster_logp)
        return ops.cat(pieces, dim=-1)

    def predict(self, input):
        """The most likely class of each row (N,), or of the one input (in_features,)."""
        return self.log_prob(input).argmax(dim=-1)

    def forward(self, input, target):
        batched = input.ndim == 2
        target_data = target._array if isinstance(target, Tensor) else np.asarray(target)
        if input.ndim not in (1, 2) or target_data.ndim != input.ndim - 1 or (
                batched and input.shape[0] != target_data.shape[0]):
            raise ShapeError(f"AdaptiveLogSoftmaxWithLoss: input {tuple(input.shape)} (N, in_features) or "
                             f"(in_features,) needs target (N,) or (), got {tuple(target_data.shape)}")
        if target_data.size and (target_data.min() < 0 or target_data.max() >= self.n_classes):
            raise ValueError(f"AdaptiveLogSoftmaxWithLoss: target values should be in [0, {self.n_classes - 1}], "
                             f"got values in [{target_data.min()}, {target_data.max()}]")
        logp = self.log_prob(input if batched else input.unsqueeze(0))
        output = logp[np.arange(logp.shape[0]), target_data.reshape(-1).astype(np.int64)]
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _check_input(self, input):
        if input.shape[-1] != self.in_features:
            raise ShapeError(f"AdaptiveLogSoftmaxWithLoss: input of shape {tuple(input.shape)} must end in "
                             f"in_features={self.in_features}")

    def extra_repr(self):
        return f"in_features={self.in_features}, n_classes={self.n_classes}, cutoffs={self.cutoffs[:-1]}"
