"""`python -m minigrad ...`: the `minigrad` command (train, translate, eval, explore, run), for a machine
where the console script is not on PATH; `python -m minigrad run SCRIPT [ARGS...]` runs a PyTorch script
with `torch` bound to minigrad (minigrad/utils/script_runner.py).

The command lives in minigrad_models.cli, which imports minigrad: this file is run as __main__ after the
minigrad package is imported, and nothing in minigrad imports it, so there is no cycle.
"""
import sys

from minigrad_models.cli import main

if __name__ == "__main__":
    sys.exit(main())
