"""minigrad's random number generator: one seeded NumPy Generator that every random op draws from.

randn, rand, randint, randperm, dropout, initialisation, Tensor.normal_/uniform_ and `multinomial`
(below) all draw from it, so `mg.manual_seed(s)` makes a whole run repeatable. A `generator=`
argument, where an op takes one, is a NumPy Generator used instead.
"""
import numpy as np

_generator = np.random.default_rng()


def manual_seed(seed):
    """Seed the generator used by randn, rand, randint, dropout and initialisation."""
    global _generator
    _generator = np.random.default_rng(int(seed))
    return _generator


def default_generator():
    return _generator


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Draw category indices with probabilities proportional to the (non-negative) weights in `input`.

    input is (K,) or (R, K) (one distribution per row); the result is int64, (num_samples,) or
    (R, num_samples). Without replacement a category is drawn at most once, and the draws come in
    the order a one-by-one draw would give.
    """
    from .tensor import Tensor

    if out is not None:
        raise TypeError("multinomial: out= is not supported by minigrad; use the returned tensor")
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial: expects a Tensor of probabilities, got {type(input).__name__}")
    if input.dtype.kind != "f":
        raise TypeError(f"multinomial: expects floating point probabilities, got {input.dtype}")
    if input.ndim not in (1, 2):
        raise ValueError(f"multinomial: expects 1 or 2 dims (one distribution per row), got shape {input.shape}")
    num_samples = int(num_samples)
    weights = np.atleast_2d(input._array).astype(np.float64)
    categories = weights.shape[1]
    if num_samples <= 0:
        raise ValueError(f"multinomial: num_samples must be positive, got {num_samples}")
    if not np.isfinite(weights).all() or (weights < 0).any():
        raise ValueError("multinomial: the probabilities contain inf, nan or a negative value")
    totals = weights.sum(axis=1)
    if (totals <= 0).any():
        raise ValueError(f"multinomial: a row of probabilities sums to 0 (input of shape {input.shape})")
    if not replacement and num_samples > categories:
        raise ValueError(
            f"multinomial: cannot draw {num_samples} samples without replacement from {categories} categories"
        )
    rng = generator or _generator
    if replacement:
        # Inverse CDF: a uniform u in [0, total) falls in category i when cdf[i-1] <= u < cdf[i];
        # a zero weight gives an empty interval, so it is never drawn.
        cdf = np.cumsum(weights, axis=1)
        uniforms = rng.random((weights.shape[0], num_samples)) * totals[:, None]
        last_positive = categories - 1 - np.argmax(weights[:, ::-1] > 0, axis=1)  # u * total may round up to total
        samples = np.stack([np.searchsorted(row, u, side="right") for row, u in zip(cdf, uniforms)])
        samples = np.minimum(samples, last_positive[:, None])
    else:
        # Exponential race: category i finishes at time E_i / w_i with E_i ~ Exp(1). The order in which
        # categories finish is a draw without replacement, each next one chosen in proportion to its
        # weight among those left (zero weights finish at infinity, last).
        with np.errstate(divide="ignore"):
            finish = rng.exponential(size=weights.shape) / weights
        samples = np.argsort(finish, axis=1, kind="stable")[:, :num_samples]
    samples = samples.astype(np.int64)
    return Tensor._make(samples if input.ndim == 2 else samples[0])
