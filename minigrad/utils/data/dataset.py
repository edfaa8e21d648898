"""Datasets: anything with __getitem__(index) and __len__() (map-style), or with __iter__ (IterableDataset);
ConcatDataset, Subset and random_split."""
import bisect
import math

from ... import random as _random
from ...tensor import Tensor


class Dataset:
    """Base class of map-style datasets: subclasses define __getitem__ (and __len__)."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """Base class of datasets read as a stream: subclasses define __iter__ (a DataLoader batches what it yields,
    in order: shuffling and samplers do not apply)."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __add__(self, other):
        raise NotImplementedError("IterableDataset: concatenating streams (ChainDataset) is not supported by minigrad")


class ConcatDataset(Dataset):
    """The samples of several map-style datasets, one after the other (`dataset_a + dataset_b`)."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset: cannot concatenate an IterableDataset (it has no indices)")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        if index < 0:
            if -index > len(self):
                raise ValueError(f"ConcatDataset: index {index} is out of range for a dataset of {len(self)} samples")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)  # the first dataset that ends after `index`
        if which == len(self.datasets):
            raise IndexError(f"ConcatDataset: index {index} is out of range for a dataset of {len(self)} samples")
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][index - start]


class TensorDataset(Dataset):
    """Sample i is (t[i] for t in tensors): the tensors must agree in their first dim."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset: needs at least one tensor")
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset: expects Tensors, got {type(t).__name__}")
            if t.ndim == 0:
                raise ValueError("TensorDataset: a 0-d tensor has no first dim to index")
        sizes = [t.shape[0] for t in tensors]
        if len(set(sizes)) != 1:
            raise ValueError(f"TensorDataset: size mismatch between tensors: first dims {sizes}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Split `dataset` into Subsets of the given lengths, at random and without overlap.

    lengths: integers summing to len(dataset), or fractions summing to 1; as PyTorch, fractions are
    floored and the samples left over go one each to the splits in turn, from the first.
    """
    n = len(dataset)
    lengths = list(lengths)
    if lengths and all(0 <= f <= 1 for f in lengths) and math.isclose(sum(lengths), 1) and sum(lengths) != n:
        counts = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if any(int(k) != k or k < 0 for k in lengths):
        raise ValueError(f"random_split: lengths must be non-negative integers or fractions summing to 1, got {lengths}")
    if sum(lengths) != n:
        raise ValueError(f"random_split: the lengths {lengths} sum to {sum(lengths)}, but the dataset has {n} samples")
    rng = _random.numpy_generator(generator, "random_split")
    order = rng.permutation(n).tolist()
    splits, start = [], 0
    for k in lengths:
        splits.append(Subset(dataset, order[start:start + int(k)]))
        start += int(k)
    return splits
