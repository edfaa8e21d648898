"""minigrad.utils.data: datasets, samplers and the DataLoader, with PyTorch's names and semantics.

    dataset.py     Dataset, IterableDataset, TensorDataset, ConcatDataset, Subset, random_split
    sampler.py     SequentialSampler, RandomSampler, WeightedRandomSampler, SubsetRandomSampler, BatchSampler
                   (the order in which samples are read)
    dataloader.py  DataLoader, default_collate (samples -> batches), get_worker_info

Everything random draws from minigrad's default generator, so `mg.manual_seed(s)` fixes the shuffling,
or from the `generator=` given (a minigrad.Generator, as PyTorch's torch.Generator).
Loading happens in the main process: num_workers > 0 is accepted and loads there too (with a warning).
"""
from .dataloader import DataLoader, default_collate, default_convert, get_worker_info
from .dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .sampler import (
    BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler, WeightedRandomSampler,
)

__all__ = [
    "Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "Subset", "random_split", "Sampler",
    "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
    "DataLoader", "default_collate", "default_convert", "get_worker_info",
]
