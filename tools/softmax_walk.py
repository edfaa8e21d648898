"""The walk a reader takes from `Tensor.softmax` to its gradient: which files and functions of minigrad
run, first order and with create_graph=True.

    python tools/softmax_walk.py

Python's profiler hook sees every function call; the ones in minigrad's own files are counted, from
`x.softmax(-1)` through `y.backward(g)` (first order), and through `autograd.grad(y, x, g,
create_graph=True)` (recorded). Run with another checkout on PYTHONPATH to measure that one.
"""
import os
import sys

import numpy as np

import minigrad as mg

PACKAGE = os.path.dirname(os.path.abspath(mg.__file__)) + os.sep


def walk(run):
    seen = []

    def profile(frame, event, arg):
        if event == "call":
            path = os.path.abspath(frame.f_code.co_filename)
            if path.startswith(PACKAGE):
                key = (os.path.relpath(path, os.path.dirname(PACKAGE)), frame.f_code.co_name)
                if key not in seen:
                    seen.append(key)

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return seen


def main():
    x = mg.tensor(np.random.default_rng(0).standard_normal((4, 5)), requires_grad=True)
    g = mg.tensor(np.random.default_rng(1).standard_normal((4, 5)))
    mg.autograd.grad(x.softmax(-1), x, g, create_graph=True)  # warm: imports and first-call set-up

    def first_order():
        x.softmax(-1).backward(g)

    def recorded():
        mg.autograd.grad(x.softmax(-1), x, g, create_graph=True)

    for name, run in (("first order", first_order), ("create_graph=True", recorded)):
        seen = walk(run)
        files = sorted({f for f, _ in seen})
        print(f"{name}: {len(files)} files, {len(seen)} functions")
        for f in files:
            print(f"  {f}: {', '.join(fn for g_, fn in seen if g_ == f)}")


if __name__ == "__main__":
    main()
