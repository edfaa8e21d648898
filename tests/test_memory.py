"""The graph is freed after every step: no graph node outlives its training step."""
import gc

import numpy as np

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import optim
from minigrad.function import Function
from minigrad_models.transformer import Seq2SeqTransformer, TransformerConfig


def _live_nodes():
    return sum(isinstance(o, Function) for o in gc.get_objects())


def test_no_graph_node_survives_a_training_step():
    mg.manual_seed(0)
    model = Seq2SeqTransformer(TransformerConfig(12, 12, d_model=16, num_heads=2, d_ff=32, dropout=0.1))
    opt = optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    baseline = _live_nodes()
    counts = []
    for step in range(12):
        src = mg.tensor(rng.integers(3, 12, size=(4, 6)))
        tgt = mg.tensor(rng.integers(3, 12, size=(4, 7)))
        logits = model(src, tgt[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, 12), tgt[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        del logits, loss
        counts.append(_live_nodes() - baseline)
    assert counts == [0] * len(counts)  # reference counting alone frees every node: no cycles


def test_a_kept_loss_does_not_keep_activations_after_backward():
    x = mg.randn(64, 64, requires_grad=True)
    h = x
    for _ in range(20):
        product = h @ x
        h = product.tanh()
    loss = h.sum()
    node, matmul = loss.grad_fn, product.grad_fn
    assert matmul._saved_versions  # MatMul saved its inputs, and remembers their versions
    loss.backward()
    for released in (node, matmul, h.grad_fn):  # nothing upstream stays reachable
        assert released.saved_tensors is None and released.parents == ()
        assert released._saved_versions == () and released._saved_output is None
