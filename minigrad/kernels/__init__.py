"""Fast NumPy kernels: fused forward/backward pairs and the one summation every sum goes through."""
