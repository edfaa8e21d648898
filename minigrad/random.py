"""minigrad's random number generator: one seeded NumPy Generator that every random op draws from."""
import numpy as np

_generator = np.random.default_rng()


def manual_seed(seed):
    """Seed the generator used by randn, rand, randint, dropout and initialisation."""
    global _generator
    _generator = np.random.default_rng(int(seed))
    return _generator


def default_generator():
    return _generator
