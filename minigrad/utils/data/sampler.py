"""Samplers: which dataset indices a DataLoader reads, and in which order."""
from ... import random as _random


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


class RandomSampler(Sampler):
    """A fresh random permutation each epoch; with replacement=True, num_samples independent draws.

    num_samples defaults to len(data_source); without replacement a larger num_samples chains
    whole permutations, as PyTorch.
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        if not isinstance(replacement, bool):
            raise TypeError(f"RandomSampler: replacement must be a bool, got {replacement!r}")
        if num_samples is not None and (not isinstance(num_samples, int) or num_samples <= 0):
            raise ValueError(f"RandomSampler: num_samples must be a positive integer, got {num_samples!r}")
        self.data_source, self.replacement, self._num_samples, self.generator = (
            data_source, replacement, num_samples, generator)

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        rng = self.generator if self.generator is not None else _random.default_generator()
        if self.replacement:
            return iter(rng.integers(0, n, size=self.num_samples).tolist())
        whole, rest = divmod(self.num_samples, n)
        order = [rng.permutation(n) for _ in range(whole)] + [rng.permutation(n)[:rest]]
        return iter([int(i) for chunk in order for i in chunk])

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices, in a fresh random order each epoch."""

    def __init__(self, indices, generator=None):
        self.indices, self.generator = indices, generator

    def __iter__(self):
        rng = self.generator if self.generator is not None else _random.default_generator()
        return iter([self.indices[i] for i in rng.permutation(len(self.indices))])

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
