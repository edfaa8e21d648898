"""A pytest plugin that hides PyTorch, to run the suite as on a machine without it:

    python -m pytest -p tools.no_torch -q

`import torch` then raises ImportError, so the comparisons with PyTorch skip and what remains is
the suite that must stand on its own (finite differences, literal conventions, composed references).
Used to check that a mistake planted in a backward pass fails a test without PyTorch as well.
"""
import sys

sys.modules["torch"] = None  # what Python's import system reads as "this module cannot be imported"
