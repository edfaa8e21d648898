"""Fast NumPy kernels: fused forward/backward pairs that stand in for composites, and the array routines they share."""
