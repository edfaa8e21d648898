"""Samplers: which dataset indices a DataLoader reads, and in which order."""
import numpy as np

from ... import random as _random
from ...tensor import Tensor


class Sampler:
    """Base class: iterating gives dataset indices."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _check_generator(generator, op):
    """None, a minigrad.Generator or a NumPy Generator; checked when the sampler is made, used when it runs."""
    if generator is not None:
        _random.numpy_generator(generator, op)
    return generator


def _check_num_samples(num_samples, op):
    if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples <= 0:
        raise ValueError(f"{op}: num_samples must be a positive integer, got {num_samples!r}")


# Draws with replacement come in chunks of this many, as PyTorch's: an "infinite" sampler
# (num_samples=int(1e10)) costs memory for one chunk, not for num_samples indices.
_CHUNK = 32


class RandomSampler(Sampler):
    """A fresh random permutation each epoch; with replacement=True, num_samples independent draws.

    num_samples defaults to len(data_source); without replacement a larger num_samples chains
    whole permutations, as PyTorch. The indices are drawn as iteration reaches them (a permutation,
    or a chunk of draws with replacement, at a time), so num_samples may be huge.

    generator: draw from this one. Without it, as PyTorch, each pass draws one seed from minigrad's
    default generator and uses a generator of its own, so the order depends on `mg.manual_seed` and
    not on what else (dropout, ...) draws while the epoch runs.
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        if not isinstance(replacement, bool):
            raise TypeError(f"RandomSampler: replacement must be a bool, got {replacement!r}")
        if num_samples is not None:
            _check_num_samples(num_samples, "RandomSampler")
        self.data_source, self.replacement, self._num_samples = data_source, replacement, num_samples
        self.generator = _check_generator(generator, "RandomSampler")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def _pass_generator(self):
        if self.generator is not None:
            return _random.numpy_generator(self.generator, "RandomSampler")
        seed = int(_random.default_generator().integers(0, 2 ** 63))
        return _random.Generator().manual_seed(seed)._numpy

    def __iter__(self):
        n, num_samples = len(self.data_source), self.num_samples
        if n == 0:
            raise ValueError("RandomSampler: cannot draw samples from an empty data source")
        rng = self._pass_generator()
        if self.replacement:
            whole_chunks, rest = divmod(num_samples, _CHUNK)
            for _ in range(whole_chunks):
                yield from rng.integers(0, n, size=_CHUNK).tolist()
            yield from rng.integers(0, n, size=rest).tolist()
        else:
            whole, rest = divmod(num_samples, n)
            for _ in range(whole):
                yield from rng.permutation(n).tolist()
            if rest:
                yield from rng.permutation(n)[:rest].tolist()

    def __len__(self):
        return self.num_samples


class WeightedRandomSampler(Sampler):
    """num_samples indices drawn with probability proportional to `weights` (one weight per sample).

    With replacement (the default) the draws come a chunk at a time, so num_samples may be huge;
    without, num_samples distinct indices (at most len(weights)) are drawn at once.
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        _check_num_samples(num_samples, "WeightedRandomSampler")
        if not isinstance(replacement, bool):
            raise ValueError(f"WeightedRandomSampler: replacement must be a bool, got {replacement!r}")
        array = np.asarray(weights.numpy() if isinstance(weights, Tensor) else weights, dtype=np.float64)
        if array.ndim != 1:
            raise ValueError(f"WeightedRandomSampler: weights must be a 1-d sequence, got shape {tuple(array.shape)}")
        if not np.isfinite(array).all() or (array < 0).any():
            raise ValueError("WeightedRandomSampler: the weights contain inf, nan or a negative value")
        if not array.sum() > 0:
            raise ValueError("WeightedRandomSampler: the weights sum to 0")
        if not replacement and num_samples > len(array):
            raise ValueError(f"WeightedRandomSampler: cannot draw {num_samples} samples without replacement "
                             f"from {len(array)} weights")
        self.weights = Tensor._make(array)
        self.num_samples, self.replacement = num_samples, replacement
        self.generator = _check_generator(generator, "WeightedRandomSampler")

    def __iter__(self):
        if not self.replacement:
            yield from _random.multinomial(self.weights, self.num_samples, False, generator=self.generator).tolist()
            return
        drawn = 0
        while drawn < self.num_samples:
            size = min(_CHUNK, self.num_samples - drawn)
            yield from _random.multinomial(self.weights, size, True, generator=self.generator).tolist()
            drawn += size

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices, in a fresh random order each epoch."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = _check_generator(generator, "SubsetRandomSampler")

    def __iter__(self):
        rng = _random.numpy_generator(self.generator, "SubsetRandomSampler")
        for i in rng.permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class BatchSampler(Sampler):
    """Groups the indices of `sampler` into lists of batch_size (the last one shorter, unless drop_last)."""

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"BatchSampler: batch_size must be a positive integer, got {batch_size!r}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"BatchSampler: drop_last must be a bool, got {drop_last!r}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
