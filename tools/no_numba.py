"""A pytest plugin that hides numba, to run the suite as on a machine without the `fast` extra:

    python -m pytest -p tools.no_numba -q

`import numba` then raises ImportError, so minigrad.kernels.compiled finds no compiler and every
kernel runs on NumPy (tests/test_compiled_kernels.py skips, saying so). The processes the tests start
(a training run that is interrupted and resumed, a script run by `minigrad run`) cannot see this
process's modules, so MINIGRAD_COMPILED=0 keeps them on NumPy's kernels too: otherwise a child would
compute with numba's loops what the test compares with NumPy's results, bit for bit.
"""
import os
import sys

sys.modules["numba"] = None  # what Python's import system reads as "this module cannot be imported"
os.environ["MINIGRAD_COMPILED"] = "0"
