"""DataLoader: reads samples in the order a sampler gives, and collates them into batches."""
import collections.abc
import warnings

import numpy as np

from ... import ops
from ...tensor import Tensor
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler


def get_worker_info():
    """Information about the worker process loading data: None, as in PyTorch's main process (minigrad
    loads all data there)."""
    return None


def default_collate(batch):
    """Stack a list of samples into a batch, keeping the samples' structure, as PyTorch:

    Tensors and NumPy arrays are stacked along a new first dim; Python floats become a float64
    tensor, ints an int64 tensor, bools a bool tensor; strings stay a list; a tuple, list or dict
    of fields is collated field by field (a namedtuple stays one).
    """
    if not batch:
        raise ValueError("default_collate: got an empty batch")
    first = batch[0]
    if isinstance(first, Tensor):
        shapes = {t._array.shape for t in batch}
        if len(shapes) != 1:
            raise RuntimeError(f"default_collate: cannot stack tensors of different shapes {sorted(shapes)}")
        return ops.stack(list(batch))
    if isinstance(first, np.ndarray):
        if first.dtype.kind in "OSU":
            raise TypeError(f"default_collate: cannot collate NumPy arrays of dtype {first.dtype}")
        return default_collate([Tensor._make(np.asarray(a)) for a in batch])
    if isinstance(first, np.generic):
        return Tensor._make(np.array(batch))
    if isinstance(first, bool):
        return Tensor._make(np.array(batch, dtype=np.bool_))
    if isinstance(first, float):
        return Tensor._make(np.array(batch, dtype=np.float64))
    if isinstance(first, int):
        return Tensor._make(np.array(batch, dtype=np.int64))
    if isinstance(first, (str, bytes)):
        return list(batch)
    if isinstance(first, collections.abc.Mapping):
        collated = {key: default_collate([sample[key] for sample in batch]) for key in first}
        try:
            return type(first)(collated)  # an OrderedDict stays one
        except TypeError:
            return collated
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a namedtuple
        return type(first)(*(default_collate(list(field)) for field in zip(*batch)))
    if isinstance(first, collections.abc.Sequence):
        if any(len(sample) != len(first) for sample in batch):
            raise RuntimeError("default_collate: each sample in the batch must have the same number of fields")
        fields = [default_collate(list(field)) for field in zip(*batch)]
        return tuple(fields) if isinstance(first, tuple) else fields
    raise TypeError(
        f"default_collate: batch must contain Tensors, NumPy arrays, numbers, dicts or lists; found {type(first).__name__}"
    )


def default_convert(data):
    """What a DataLoader with batch_size=None does to each sample: NumPy arrays become Tensors."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "OSU":
        return Tensor._make(data)
    if isinstance(data, collections.abc.Mapping):
        return {key: default_convert(value) for key, value in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (list, tuple)):
        return type(data)(default_convert(d) for d in data)
    return data


class DataLoader:
    """Batches of a dataset: `for x, y in DataLoader(TensorDataset(X, Y), batch_size=32, shuffle=True)`.

    batch_size:    samples per batch (None: no batching, each sample as it is)
    shuffle:       a new random order every epoch (from minigrad's generator, or `generator`)
    sampler:       the indices to read, in order (instead of shuffle)
    batch_sampler: lists of indices, one per batch (instead of batch_size, shuffle, sampler, drop_last)
    drop_last:     drop the last, incomplete batch
    collate_fn:    samples -> batch (default_collate)
    num_workers:   accepted; every batch is loaded in the main process (a warning says so when > 0)
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device=""):
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"DataLoader: num_workers option should be non-negative; use num_workers=0 to "
                             f"disable multiprocessing (got {num_workers!r})")
        if num_workers > 0:
            # Scripts ask for workers by habit (minGPT's Trainer: 4). Batches come out the same and in the
            # same order as PyTorch's workers give them, so loading them here changes no number.
            warnings.warn(f"DataLoader: num_workers={num_workers}: minigrad has no worker processes and loads "
                          "each batch in the main process (the same batches, in the same order)", stacklevel=2)
        elif persistent_workers:
            raise ValueError("DataLoader: persistent_workers option needs num_workers > 0")
        elif prefetch_factor is not None:
            raise ValueError("DataLoader: prefetch_factor option could only be specified in multiprocessing: "
                             "let num_workers > 0, or set prefetch_factor to None")
        if timeout < 0:
            raise ValueError(f"DataLoader: timeout option should be non-negative, got {timeout}")
        self._stream = isinstance(dataset, IterableDataset)
        if self._stream:  # a stream has no indices: it is read in its own order
            for option, value in (("shuffle", shuffle), ("sampler", sampler), ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified {option} option, "
                                     f"but got {option}={value!r:.40}")
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "DataLoader: batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                    "and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("DataLoader: batch_size=None option disables auto-batching and is mutually exclusive "
                             "with drop_last")
        if self._stream:
            if batch_size is not None:
                BatchSampler([], batch_size, drop_last)  # the same checks of batch_size and drop_last
        elif sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._stream:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.sampler, self.batch_sampler, self.generator = sampler, batch_sampler, generator
        self.num_workers = num_workers
        batched = batch_sampler is not None or (self._stream and batch_size is not None)
        self.collate_fn = collate_fn if collate_fn is not None else (default_collate if batched else default_convert)

    def __iter__(self):
        if self._stream:
            yield from self._stream_batches()
            return
        if self.batch_sampler is None:
            for index in self.sampler:
                yield self.collate_fn(self.dataset[index])
            return
        for indices in self.batch_sampler:
            yield self.collate_fn([self.dataset[i] for i in indices])

    def _stream_batches(self):
        if self.batch_size is None:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self):
        if self._stream:  # only where the stream knows its length (a TypeError otherwise, as PyTorch)
            samples = len(self.dataset)
            if self.batch_size is None:
                return samples
            return samples // self.batch_size if self.drop_last else -(-samples // self.batch_size)
        return len(self.batch_sampler) if self.batch_sampler is not None else len(self.sampler)
