"""torch.distributed, for code that can run in one process or many: minigrad runs in one.

Training scripts such as nanoGPT's import `init_process_group` and `destroy_process_group` at the
top and call them only when a launcher (torchrun) set RANK in the environment. So the names exist
here, `is_available()` and `is_initialized()` answer False, and every call that would need a process
group raises, as PyTorch does before `init_process_group`, with what to do instead.
"""

_ONE_PROCESS = ("minigrad runs in a single process and has no torch.distributed backend; "
                "run the script directly with python (not torchrun), so that RANK is not set")


def is_available():
    """False: minigrad has no distributed backend (PyTorch answers False on builds without one)."""
    return False


def is_initialized():
    """False: no process group can ever be initialised."""
    return False


def init_process_group(backend=None, *args, **kwargs):
    raise RuntimeError(f"init_process_group(backend={backend!r}): {_ONE_PROCESS}")


def _no_process_group(name):
    def refuse(*args, **kwargs):
        # PyTorch's wording when no process group exists, then why there never is one here.
        raise ValueError(f"{name}: Default process group has not been initialized. {_ONE_PROCESS}")
    refuse.__name__ = name
    refuse.__doc__ = f"{name}: refused, as PyTorch refuses it before init_process_group (there is none here)."
    return refuse


destroy_process_group = _no_process_group("destroy_process_group")
get_rank = _no_process_group("get_rank")
get_world_size = _no_process_group("get_world_size")
barrier = _no_process_group("barrier")
all_reduce = _no_process_group("all_reduce")
all_gather = _no_process_group("all_gather")
broadcast = _no_process_group("broadcast")
reduce = _no_process_group("reduce")
