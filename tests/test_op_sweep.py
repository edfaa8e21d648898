"""benchmarks/op_sweep.py still runs: a few of its cases pass its check against PyTorch on tiny shapes.

Only the check (outputs and gradients of both libraries, from the same arrays), not the timing.
"""
import importlib.util
import os

import pytest

pytest.importorskip("torch")

TINY = dict(B=2, T=4, C=8, H=2, V=7, layers=1)
CASES = ["F.layer_norm", "split qkv (B,T,3C).split(C, 2)", "nn.TransformerEncoderLayer pre-norm gelu causal",
         "AdamW.step (GPT params)", "F.dropout(0.1) train"]


@pytest.fixture(scope="module")
def op_sweep():
    path = os.path.join(os.path.dirname(__file__), os.pardir, "benchmarks", "op_sweep.py")
    spec = importlib.util.spec_from_file_location("op_sweep", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", CASES)
def test_case_agrees_with_pytorch(op_sweep, name):
    (case,) = [k for k in op_sweep.CASES if k.name == name]
    for mode in case.modes:
        problem, shape = op_sweep.check(case, TINY, mode)
        assert problem is None, f"{name} [{mode}, {shape}]: {problem}"


def test_a_disagreement_is_reported(op_sweep):
    """A case whose minigrad side computes something else fails the check instead of being timed."""
    def build(m, c):
        x = m.randn(c["B"], c["T"])
        return (lambda: x * 1.01) if m.lib.__name__ == "minigrad" else (lambda: x)
    problem, _ = op_sweep.check(op_sweep.Case("planted", build), TINY, "fwd+bwd")
    assert problem is not None and problem.startswith("FAILED")


def test_an_error_is_a_row_not_a_crash(op_sweep):
    def build(m, c):
        x = m.randn(c["B"], c["T"])
        return (lambda: x.no_such_op()) if m.lib.__name__ == "minigrad" else (lambda: x)
    rows = op_sweep.sweep([op_sweep.Case("missing", build)], ["T32"], repeats=1, loop_s=0.001)
    assert [r["problem"].split(":")[0] for r in rows] == ["error in minigrad", "error in minigrad"]
