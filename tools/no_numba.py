"""A pytest plugin that hides numba, to run the suite as on a machine without the `fast` extra:

    python -m pytest -p tools.no_numba -q

`import numba` then raises ImportError, so minigrad.kernels.compiled finds no compiler and every
kernel runs on NumPy (tests/test_compiled_kernels.py skips, saying so).
"""
import sys

sys.modules["numba"] = None  # what Python's import system reads as "this module cannot be imported"
