"""`python -m minigrad.run SCRIPT [ARGS...]`: run a PyTorch script with `torch` bound to minigrad
(the same as the console script's `minigrad run`; the runner is minigrad/utils/script_runner.py)."""
import sys

from .utils.script_runner import main

if __name__ == "__main__":
    sys.exit(main())
