"""Find the attention blocks of a recorded graph: the tensors Q, K, V, scores, weights and output.

minigrad composes attention from primitive ops (minigrad/nn/attention.py), and so does code written
for PyTorch that spells it out (nanoGPT's manual branch):

    scores  = (Q * scale) @ K^T            or  (Q @ K^T) * scale         MatMul, Mul, Transpose
    scores  = masked_fill(scores, ...)     optional; or scores + a float mask
    weights = softmax(scores, dim=-1)
    output  = weights @ V                  after an optional masked_fill or dropout of the weights

Every Softmax whose input comes (through scaling and masking) from a MatMul against a transposed
tensor, and whose output (through masking and dropout) is the left factor of a MatMul, is such a
block. The search reads only the graph, so it finds attention in any model, whoever wrote it.
"""
from dataclasses import dataclass

# ops that only scale or mask the scores (or the weights), leaving their meaning alone
_SCORE_STEPS = {"MaskedFill", "Mul", "Div", "Add", "Sub", "Where"}
_WEIGHT_STEPS = {"MaskedFill", "Dropout", "Mul", "Where"}


@dataclass
class AttentionBlock:
    softmax: object   # each field is a Tensor of the graph, or None where that tensor takes no gradient
    query: object
    key: object
    value: object
    scores: object    # what softmax received: Q K^T, scaled and masked
    weights: object   # softmax's output
    output: object    # weights V


def find_attention_blocks(order, parents_of):
    """The attention blocks among `order` (tensors); parents_of(tensor) gives its recorded inputs, one per
    positional input of its op (None where that input takes no gradient)."""
    consumers = {}
    for t in order:
        if t.grad_fn is not None:
            for p in parents_of(t):
                if p is not None:
                    consumers.setdefault(id(p), []).append(t)
    blocks = []
    for t in order:
        if t.grad_fn is None or t.grad_fn.op_name != "Softmax":
            continue
        scores = parents_of(t)[0]
        product = _back_through(scores, _SCORE_STEPS, parents_of)
        output = _forward_through(t, _WEIGHT_STEPS, consumers, parents_of)
        if product is None or output is None:
            continue
        left, right = (list(parents_of(product)) + [None, None])[:2]
        key = right
        if right is not None and right.grad_fn is not None and right.grad_fn.op_name in ("Transpose", "Permute"):
            key = parents_of(right)[0]
        query = left
        if left is not None and left.grad_fn is not None and left.grad_fn.op_name in ("Mul", "Div"):
            scaled = [p for p in parents_of(left) if p is not None]
            if len(scaled) == 1:  # Q times a constant scale
                query = scaled[0]
        value = (list(parents_of(output)) + [None, None])[1]
        blocks.append(AttentionBlock(t, query, key, value, scores, t, output))
    return blocks


def _back_through(tensor, steps, parents_of):
    """The MatMul output that `tensor` comes from through ops in `steps` (along their first tensor input)."""
    for _ in range(8):  # a few scaling and masking steps at most
        if tensor is None or tensor.grad_fn is None:
            return None
        op = tensor.grad_fn.op_name
        if op == "MatMul":
            return tensor
        if op not in steps:
            return None
        inputs = [p for p in parents_of(tensor) if p is not None]
        tensor = inputs[0] if inputs else None
    return None


def _forward_through(tensor, steps, consumers, parents_of):
    """The MatMul that takes `tensor` (after ops in `steps`) as its left factor, or None."""
    for _ in range(8):
        users = consumers.get(id(tensor), [])
        matmul = [u for u in users if u.grad_fn.op_name == "MatMul" and parents_of(u)[0] is tensor]
        if matmul:
            return matmul[0]
        onward = [u for u in users if u.grad_fn.op_name in steps]
        if len(onward) != 1:
            return None
        tensor = onward[0]
    return None
