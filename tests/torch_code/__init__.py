"""PyTorch code as people write it, in the style of the codebases they learn from.

Each file is written once, against a `torch` its `build(torch)` receives: bound to minigrad it is the
proof that such code runs on minigrad unchanged; bound to PyTorch (where installed) it gives the
numbers minigrad must reproduce. tests/test_torch_code.py runs them both ways.
"""
