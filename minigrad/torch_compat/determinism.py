"""torch.use_deterministic_algorithms: a switch reproducibility code sets; minigrad is deterministic anyway.

PyTorch has ops whose GPU kernels add in a nondeterministic order, and this switch makes them refuse
or choose a deterministic kernel. Every minigrad op gives the same bits for the same inputs and seed,
whatever the thread count (docs/speed.md), so the switch is recorded and reads back,
and changes nothing.
"""
_enabled = False
_warn_only = False


def use_deterministic_algorithms(mode, *, warn_only=False):
    global _enabled, _warn_only
    if not isinstance(mode, bool) or not isinstance(warn_only, bool):
        raise TypeError(f"use_deterministic_algorithms: mode and warn_only must be bools, got {mode!r}, {warn_only!r}")
    _enabled, _warn_only = mode, warn_only


def are_deterministic_algorithms_enabled():
    return _enabled


def is_deterministic_algorithms_warn_only_enabled():
    return _warn_only


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    """0 / "default": off; 1 / "warn": use_deterministic_algorithms(True, warn_only=True); 2 / "error":
    use_deterministic_algorithms(True), as PyTorch's (recorded, and changing nothing here)."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """0, 1 or 2: what set_deterministic_debug_mode (or use_deterministic_algorithms) set."""
    return 0 if not _enabled else 1 if _warn_only else 2
