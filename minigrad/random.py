"""minigrad's random numbers: Generator objects, and the default one that every random op draws from.

randn, rand, randint, randperm, dropout, initialisation, Tensor.normal_/uniform_ and `multinomial`
(below) draw from the default generator, so `mg.manual_seed(s)` makes a whole run repeatable. An
op that takes `generator=` (as in PyTorch) draws from that one instead, and leaves the default
generator's stream untouched: `mg.randn(3, generator=mg.Generator().manual_seed(0))` gives the same
numbers however much else the program has drawn.

A Generator wraps a NumPy Generator (PCG64, seeded as `np.random.default_rng(seed)`): the same seed
gives the same numbers as NumPy's, not PyTorch's (PyTorch uses a Mersenne Twister), so a seeded
minigrad run repeats itself but does not repeat a seeded PyTorch run. A NumPy Generator is accepted
wherever a `generator=` is.

The state that `get_state()` / `mg.get_rng_state()` return is a uint8 tensor, as PyTorch's, but its
bytes are minigrad's own (a format tag, the seed, and PCG64's 128-bit state and increment): it
round-trips through `set_state()` / `mg.set_rng_state()` and through `mg.save`, and nothing else.
"""
import contextlib
import secrets
import struct

import numpy as np

from .torch_compat.device import check_device

_SEED_RANGE = 2 ** 64  # seeds are 64-bit; negative ones wrap around, as PyTorch's do
# get_state's bytes: tag, seed (u64), PCG64 state and increment (two u128 as four u64), has_uint32 (u8), uinteger (u32)
_STATE_TAG = b"MGRNG1"
_STATE_LAYOUT = struct.Struct("<6sQQQQQBI")


def _checked_seed(seed, op):
    """PyTorch's rule: an int in [-2**63, 2**64), negative seeds wrapping to seed + 2**64."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"{op}: expected an int seed, got {type(seed).__name__} {seed!r:.40}")
    seed = int(seed)
    if not -(2 ** 63) <= seed < _SEED_RANGE:
        raise ValueError(f"{op}: the seed {seed} is outside the 64-bit range [-2**63, 2**64)")
    return seed % _SEED_RANGE


class Generator:
    """A source of random numbers with its own seed and state: PyTorch's torch.Generator.

        g = mg.Generator().manual_seed(42)
        mg.randn(2, 3, generator=g)     # the same two draws for the same seed, whatever else ran
        DataLoader(data, shuffle=True, generator=g)

    The NumPy Generator inside does the drawing; its methods (standard_normal, integers, ...) are
    reachable on this object, which is how minigrad's ops draw from either kind.
    """

    def __init__(self, device="cpu"):
        self.device = check_device(device, "Generator")
        self.seed()

    def manual_seed(self, seed):
        """Start the stream afresh from `seed`; returns the generator (so `Generator().manual_seed(0)` chains)."""
        self._initial_seed = _checked_seed(seed, "Generator.manual_seed")
        self._numpy = np.random.default_rng(self._initial_seed)
        return self

    def seed(self):
        """Seed from the operating system's entropy; returns the seed used."""
        self.manual_seed(secrets.randbits(64))
        return self._initial_seed

    def initial_seed(self):
        """The seed the stream started from."""
        return self._initial_seed

    def get_state(self):
        """The whole state as a uint8 tensor (minigrad's own layout; see the module's docstring)."""
        from .tensor import Tensor

        state = self._numpy.bit_generator.state
        low64 = _SEED_RANGE - 1
        packed = _STATE_LAYOUT.pack(
            _STATE_TAG, self._initial_seed,
            state["state"]["state"] >> 64, state["state"]["state"] & low64,
            state["state"]["inc"] >> 64, state["state"]["inc"] & low64,
            state["has_uint32"], state["uinteger"],
        )
        return Tensor._make(np.frombuffer(packed, dtype=np.uint8).copy())

    def set_state(self, new_state):
        """Restore a state that get_state() returned; the next draws are the ones that followed it."""
        from .tensor import Tensor

        if not isinstance(new_state, Tensor) or new_state.dtype != np.uint8:
            described = f"a {new_state.dtype} tensor" if isinstance(new_state, Tensor) else type(new_state).__name__
            raise TypeError(f"set_state: expected a uint8 (Byte) tensor from get_state(), got {described}")
        raw = np.ascontiguousarray(new_state.numpy()).tobytes()
        if len(raw) != _STATE_LAYOUT.size or not raw.startswith(_STATE_TAG):
            raise RuntimeError(
                f"set_state: expected a minigrad generator state of {_STATE_LAYOUT.size} bytes from get_state(), "
                f"got {len(raw)} bytes that are not one (a PyTorch RNG state cannot be used by minigrad)"
            )
        _, seed, state_hi, state_lo, inc_hi, inc_lo, has_uint32, uinteger = _STATE_LAYOUT.unpack(raw)
        if has_uint32 not in (0, 1) or inc_lo % 2 == 0:  # PCG64's increment is always odd
            raise RuntimeError("set_state: the bytes are not a valid minigrad generator state (corrupted?)")
        numpy_generator = np.random.Generator(np.random.PCG64())
        numpy_generator.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": (state_hi << 64) | state_lo, "inc": (inc_hi << 64) | inc_lo},
            "has_uint32": has_uint32, "uinteger": uinteger,
        }
        self._initial_seed, self._numpy = seed, numpy_generator
        return self

    def __getattr__(self, name):
        # standard_normal, random, integers, permutation, ...: the draws themselves are NumPy's
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._numpy, name)

    def __repr__(self):
        return f"<minigrad.Generator(device='cpu') with initial_seed={self._initial_seed}>"


# The generator that ops use when they are given none (PyTorch's torch.default_generator).
default_generator_object = Generator()


def default_generator():
    """The NumPy Generator inside the default generator: what ops draw from when given no generator."""
    return default_generator_object._numpy


def manual_seed(seed):
    """Seed the default generator (randn, rand, randint, dropout, initialisation, shuffling); returns it.

    As PyTorch's torch.manual_seed, a float seed is truncated to an int."""
    if isinstance(seed, float):
        seed = int(seed)
    default_generator_object._initial_seed = _checked_seed(seed, "manual_seed")
    default_generator_object._numpy = np.random.default_rng(default_generator_object._initial_seed)
    return default_generator_object


def seed():
    """Seed the default generator from the operating system's entropy; returns the seed."""
    return default_generator_object.seed()


def initial_seed():
    """The seed the default generator started from (set by manual_seed or seed)."""
    return default_generator_object.initial_seed()


def get_rng_state():
    """The default generator's state, as a uint8 tensor; set_rng_state(it) repeats the draws that followed."""
    return default_generator_object.get_state()


def set_rng_state(new_state):
    """Restore the default generator's state from get_rng_state()."""
    default_generator_object.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, device_type="cpu"):
    """Draws inside the block do not change the default generator's stream after it (PyTorch's fork_rng)."""
    if not enabled:
        yield
        return
    saved = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(saved)


def numpy_generator(generator, op):
    """The NumPy Generator to draw from: the default one, or the one `generator=` names."""
    if generator is None:
        return default_generator()
    if isinstance(generator, Generator):
        return generator._numpy
    if isinstance(generator, np.random.Generator):
        return generator
    raise TypeError(f"{op}: generator must be a minigrad.Generator (or a NumPy Generator), "
                    f"got {type(generator).__name__}")


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
        raise ValueError(f"multinomial: expects 1 or 2 dims (one distribution per row), got shape {tuple(input.shape)}")
    num_samples = int(num_samples)
    weights = np.atleast_2d(input._array).astype(np.float64)
    categories = weights.shape[1]
    if num_samples <= 0:
        raise ValueError(f"multinomial: num_samples must be positive, got {num_samples}")
    if not np.isfinite(weights).all() or (weights < 0).any():
        raise ValueError("multinomial: the probabilities contain inf, nan or a negative value")
    totals = weights.sum(axis=1)
    if (totals <= 0).any():
        raise ValueError(f"multinomial: a row of probabilities sums to 0 (input of shape {tuple(input.shape)})")
    if not replacement and num_samples > categories:
        raise ValueError(
            f"multinomial: cannot draw {num_samples} samples without replacement from {categories} categories"
        )
    rng = numpy_generator(generator, "multinomial")
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
