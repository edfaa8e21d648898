"""docs/backprop_through_attention.md's backward listing and the step numbers its prose cites come from a
run (issue 35: the prose said "the output projection (step 8)" where its listing said 69, and the listing,
steps 69-95, no longer matched a run, which printed 70-96).

The listing is compared with what examples/visualize.py prints (steps, ops, modules and shapes exactly;
gradient norms to 4 significant digits, a roundoff-sized norm only as roundoff-sized), and every step
number of the prose is checked to name the op it describes. When the model or the engine's order
changes, this test fails and prints the new listing to paste.
"""
import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "backprop_through_attention.md"
ROW = re.compile(r"^\s*(\d+)\s+(\w+)\s+(\S+)\s+(\([\d, ]*\))\s+(\S+)\s+(.*)$")


@pytest.fixture(scope="module")
def run_listing():
    visualize = runpy.run_path(str(ROOT / "examples" / "visualize.py"), run_name="visualize")
    _, _, trace = visualize["traced_backward"]()
    return visualize["focus_steps"](trace)


def doc_section():
    text = DOC.read_text(encoding="utf-8")
    return text[text.index("## The backward pass in the order the engine runs it"):
                text.index("## When a gradient is wrong: blame")]


def rows(listing):
    """{step: (op, module, output shape, |dL/dout|, inputs)} of a printed trace."""
    found = {}
    for line in listing.splitlines():
        match = ROW.match(line)
        if match:
            step, op, module, shape, norm, inputs = match.groups()
            found[int(step)] = (op, module, shape, float(norm), inputs)
    return found


def numbers_agree(a, b):
    if abs(a) < 1e-6 or abs(b) < 1e-6:  # roundoff (the key bias's gradient, zero in exact arithmetic)
        return abs(a) < 1e-6 and abs(b) < 1e-6
    return abs(a - b) <= 1e-3 * abs(b)


def test_the_docs_listing_is_what_a_run_prints(run_listing):
    documented, ran = rows(doc_section()), rows(run_listing)
    assert len(ran) > 20
    message = "docs/backprop_through_attention.md's listing is stale; a run prints:\n" + run_listing
    assert sorted(documented) == sorted(ran), message
    for step, (op, module, shape, norm, inputs) in ran.items():
        d_op, d_module, d_shape, d_norm, d_inputs = documented[step]
        assert (d_op, d_module, d_shape) == (op, module, shape), message
        assert numbers_agree(d_norm, norm), message
        shapes = re.findall(r"\([\d, ]*\)", inputs)
        assert re.findall(r"\([\d, ]*\)", d_inputs) == shapes, message
        norms = [float(x) for x in re.findall(r"-> (\S+?)(?:,|$)", inputs)]
        d_norms = [float(x) for x in re.findall(r"-> (\S+?)(?:,|$)", d_inputs)]
        assert len(norms) == len(d_norms) and all(map(numbers_agree, d_norms, norms)), message


# each phrase of the prose, with the op (and module ending) of each step number it cites
CLAIMS = [
    (r"the output projection \(step (\d+);", [("Linear", "out_proj")]),
    (r"the head\s+concatenation undone \((\d+), (\d+)\)", [("Reshape", ""), ("Transpose", "")]),
    (r"the product with `V` \((\d+)\)", [("MatMul", "")]),
    (r"softmax \((\d+)\)", [("Softmax", "")]),
    (r"the mask \((\d+)\)", [("MaskedFill", "")]),
    (r"the product `\(c Q\) K\^T` \((\d+)\)", [("MatMul", "")]),
    (r"query\s+branch \((\d+) to (\d+),", [("Mul", ""), ("GetItem", "")]),
    (r"`Q = X W_Q\^T \+ b_Q` at (\d+)", [("Linear", "")]),
    (r"`in_proj_weight` and `in_proj_bias` at (\d+) and (\d+)\)", [("GetItem", ""), ("GetItem", "")]),
    (r"the key branch \((\d+) to (\d+),", [("Transpose", ""), ("GetItem", "")]),
    (r"the value branch \((\d+) to (\d+)\)", [("Transpose", ""), ("GetItem", "")]),
    (r"ready since step (\d+);", [("MatMul", "")]),
    (r"steps (\d+), (\d+) and (\d+)\) are then added", [("Linear", "")] * 3),
    (r"\(steps (\d+) and (\d+)\): forward step 6", [("Linear", ""), ("GetItem", "")]),
]


def test_every_step_number_in_the_prose_names_the_op_it_describes(run_listing):
    text = " ".join(doc_section().split())  # the prose's line breaks do not matter
    ran = rows(run_listing)
    for phrase, expected in CLAIMS:
        match = re.search(phrase.replace(r"\s+", " "), text)
        assert match, f"the prose no longer says {phrase!r}"
        for number, (op, module_end) in zip(match.groups(), expected):
            assert int(number) in ran, f"{phrase}: step {number} is not in the run's listing"
            assert ran[int(number)][0] == op and ran[int(number)][1].endswith(module_end), \
                f"{phrase}: step {number} is {ran[int(number)][:2]}, not {op}"
    # the branches cover the listing after the product (c Q) K^T, in order, with no gap or overlap
    def cited(k):
        return [int(n) for n in re.search(CLAIMS[k][0].replace(r"\s+", " "), text).groups()]

    listed = sorted(ran)
    after = {n: listed[listed.index(n) + 1] for n in listed[:-1]}
    (scores,), query, key, value = cited(5), cited(6), cited(9), cited(10)
    assert query[0] == after[scores] and key[0] == after[query[1]] and value[0] == after[key[1]]
    assert value[1] == listed[-1]
    # "steps before N belong to the decoder ...; steps A to B to the embedding and positions"
    first = int(re.search(r"steps before (\d+) belong to the decoder", text).group(1))
    gap = [int(n) for n in re.search(r"steps (\d+) to (\d+) to the embedding", text).groups()]
    assert first == listed[0]
    assert [n for n in range(listed[0], listed[-1] + 1) if n not in ran] == list(range(gap[0], gap[1] + 1))
    # the key bias's gradient quoted is the listing's, and roundoff-sized in the run
    quoted = float(re.search(r"`b_K` receiving `(\S+)`", text).group(1))
    bias_step = cited(len(CLAIMS) - 1)[1]
    assert ran[bias_step][3] < 1e-6 and quoted == rows(doc_section())[bias_step][3]
