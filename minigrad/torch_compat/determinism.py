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
