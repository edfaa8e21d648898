"""How many threads NumPy's BLAS (OpenBLAS, MKL, ...) may use for minigrad's matrix products.

minigrad chooses this itself when it is imported, through threadpoolctl, instead of leaving it to
the environment: OpenBLAS starts one thread per core and those threads spin while they wait for
work, so two minigrad processes on a 2-core machine (two trainings, a training beside the test
suite) fought over the cores and ran 10 to 56 times slower than one alone. With one BLAS thread
they run side by side at full speed, and the tiny models lost nothing.

    mg.get_num_threads()      # the BLAS threads minigrad uses now
    mg.set_num_threads(2)     # the user's choice, as torch.set_num_threads
"""
from threadpoolctl import ThreadpoolController

# One BLAS thread: measured on the 2-core machine, two processes side by side each ran as fast as
# one alone, and the tiny training step lost nothing against two threads.
DEFAULT_NUM_THREADS = 1

_controller = ThreadpoolController()
_num_threads = None


def set_num_threads(n):
    """Let NumPy's BLAS use `n` threads in this process (as torch.set_num_threads)."""
    global _num_threads
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_threads: expects a positive int, got {n!r}")
    _controller.select(user_api="blas").limit(limits=n)
    _num_threads = n


def get_num_threads():
    """The number of BLAS threads minigrad's matrix products may use."""
    return _num_threads


set_num_threads(DEFAULT_NUM_THREADS)
