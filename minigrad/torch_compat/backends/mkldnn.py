"""torch.backends.mkldnn: Intel's oneDNN CPU kernels, which minigrad does not use (NumPy's BLAS does the work)."""
enabled = True


def is_available():
    return False
