"""Keep freed memory for reuse: glibc's malloc, set up on import for a process that churns arrays.

A training step makes the same large temporaries every step (activations, their gradients, the
softmax of every head) and frees them at the end. glibc's malloc by default hands every block of
128 KiB or more back to the OS when it is freed (munmap, or trimming the top of the heap), so the
next step asks for those pages again and the kernel zero-fills each one on first touch: a page
fault every 4 KiB. Measured on the development machine, a tiny GPT written as a user writes it
(`benchmarks/user_gpt.py`, 30 steps): 665,000 page faults and 0.67 s of kernel time with glibc's
defaults, 23,000 and 0.06 s with the two settings below, and the same peak resident memory.

So importing minigrad raises two thresholds, in this process only, through glibc's `mallopt`:
- M_MMAP_THRESHOLD to 32 MiB (glibc's largest): blocks below it come from the heap, which keeps
  freed memory for the next request, instead of each being a fresh mapping.
- M_TRIM_THRESHOLD to 1 GiB: free memory at the top of the heap is kept up to that much, instead
  of being returned as soon as 128 KiB of it is free.

What it costs: memory freed after a peak stays with the process (up to the largest amount it held
at once in blocks under 32 MiB) until the process ends, where glibc would have returned it. The peak
itself does not change. Blocks of 32 MiB and more are still mapped and returned one by one.

Off switch: set MINIGRAD_MALLOC=default in the environment before importing minigrad. minigrad
also leaves malloc alone when the environment already sets it (MALLOC_MMAP_THRESHOLD_,
MALLOC_TRIM_THRESHOLD_, or malloc tunables in GLIBC_TUNABLES): that choice is the user's. Off glibc
(macOS, Windows, musl) there is nothing to set and nothing is done. `keep_freed_memory(False)`
puts glibc's default thresholds back at run time.
"""
import ctypes
import os
import platform

OFF_SWITCH = "MINIGRAD_MALLOC"  # =default: leave glibc's malloc as it is

_M_TRIM_THRESHOLD = -1  # mallopt's parameter numbers, from glibc's <malloc.h>
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 * 2**20
TRIM_THRESHOLD = 2**30
_GLIBC_DEFAULT = 128 * 2**10  # both thresholds' defaults

_state = {"tuned": False}


def _glibc():
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


def _user_chose():
    """True when the environment already says how malloc should behave."""
    return (os.environ.get(OFF_SWITCH, "").strip().lower() in ("default", "0", "off")
            or "MALLOC_MMAP_THRESHOLD_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ
            or "glibc.malloc." in os.environ.get("GLIBC_TUNABLES", ""))


def keep_freed_memory(enabled=True):
    """Raise glibc's thresholds so freed memory is kept for reuse (True), or put its defaults back
    (False; glibc then also stops adjusting its mmap threshold by itself). Returns whether the
    thresholds are raised now; False where the C library is not glibc."""
    libc = _glibc()
    if libc is None:
        return False
    mmap, trim = (MMAP_THRESHOLD, TRIM_THRESHOLD) if enabled else (_GLIBC_DEFAULT, _GLIBC_DEFAULT)
    done = libc.mallopt(_M_MMAP_THRESHOLD, mmap) == 1 and libc.mallopt(_M_TRIM_THRESHOLD, trim) == 1
    _state["tuned"] = bool(enabled and done)
    return _state["tuned"]


def is_tuned():
    """Whether this process runs with the raised thresholds (set on import, or by keep_freed_memory)."""
    return _state["tuned"]


def tune_on_import():
    """What `import minigrad` does: raise the thresholds unless the environment says otherwise."""
    if not _user_chose():
        keep_freed_memory(True)
