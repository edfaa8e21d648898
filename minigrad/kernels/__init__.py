"""Fast NumPy kernels: fused forward/backward pairs that stand in for composites, the one summation every
sum goes through, and the array routines they share."""
