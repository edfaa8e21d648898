"""The machine a figure was taken on, printed beside every figure: the CPU model and its cores, NumPy's
BLAS with its thread count, and the threads of the library measured.

    python benchmarks/machine.py        # one line, e.g. "CPU AMD EPYC, 2 cores (AVX-512); NumPy 2.4.6 on
                                        #  OpenBLAS 0.3.31 (SkylakeX kernels, pthreads), 2 BLAS threads"

Speed differs between CPUs more than between versions (issue 41: the same code 0.85x PyTorch's step
time per core on an AMD EPYC, 1.3-1.5x on an Intel Xeon), so a figure without its machine says little.
"""
import os
import platform


def cpu_model():
    """The CPU's model name, as lscpu prints it ("AMD EPYC", "Intel(R) Xeon(R) Platinum 8480+")."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def vector_units():
    """The widest SIMD the CPU reports (AVX-512, AVX2, ...), and AMX where present."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return ""
    units = [name for flag, name in (("avx512f", "AVX-512"), ("avx2", "AVX2")) if flag in flags][:1]
    units += ["AMX"] if "amx_tile" in flags else []
    return ", ".join(units)


def blas():
    """NumPy's BLAS (name, version, kernels, threading) and its thread count now."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "BLAS unknown (threadpoolctl not installed)"
    import numpy  # noqa: F401  (loads the BLAS, so that threadpoolctl sees it)

    pools = [p for p in threadpool_info() if p["user_api"] == "blas"]
    if not pools:
        return "no BLAS found"
    return "; ".join(f"{p['internal_api']} {p.get('version') or '?'} ({p.get('architecture') or '?'} kernels, "
                     f"{p.get('threading_layer') or '?'}), {p['num_threads']} BLAS threads" for p in pools)


def describe(library=None):
    """One line: CPU, cores, BLAS and threads; with the threads of `library` ("minigrad" or "torch")."""
    import numpy

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    units = vector_units()
    line = f"CPU {cpu_model()}, {cores} cores{f' ({units})' if units else ''}; NumPy {numpy.__version__} on {blas()}"
    if library == "minigrad":
        import minigrad as mg
        line += f"; minigrad threads {mg.get_num_threads()}"
    elif library == "torch":
        import torch
        line += f"; torch {torch.__version__} threads {torch.get_num_threads()}"
    return line


if __name__ == "__main__":
    print(describe())
