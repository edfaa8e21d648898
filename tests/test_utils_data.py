"""minigrad.utils.data: datasets, samplers, DataLoader, collate and random_split, as PyTorch."""
import tracemalloc
from collections import OrderedDict, namedtuple

import numpy as np
import pytest

import minigrad as mg
from minigrad.utils.data import (
    BatchSampler, DataLoader, Dataset, RandomSampler, SequentialSampler, Subset, TensorDataset, WeightedRandomSampler,
    default_collate, random_split,
)

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def xy(lib, n=10):
    return lib.tensor(np.arange(n * 3, dtype=np.float64).reshape(n, 3)), lib.tensor(np.arange(n) % 3)


def test_tensor_dataset_and_sequential_batches():
    X, Y = xy(mg)
    ds = TensorDataset(X, Y)
    assert len(ds) == 10
    x3, y3 = ds[3]
    np.testing.assert_array_equal(x3.numpy(), [9, 10, 11])
    assert y3.item() == 0
    batches = list(DataLoader(ds, batch_size=4))
    assert [b[0].shape for b in batches] == [(4, 3), (4, 3), (2, 3)] and len(DataLoader(ds, batch_size=4)) == 3
    np.testing.assert_array_equal(mg.cat([b[1] for b in batches]).numpy(), Y.numpy())
    assert batches[0][1].dtype == mg.int64
    dropped = DataLoader(ds, batch_size=4, drop_last=True)
    assert len(dropped) == 2 and [b[0].shape[0] for b in dropped] == [4, 4]


@needs_torch
def test_sequential_batches_match_pytorch():
    results = []
    for lib in (mg, torch):
        X, Y = xy(lib)
        loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(X, Y), batch_size=3, drop_last=False)
        results.append([(x.numpy(), y.numpy()) for x, y in loader])
    for (a, b), (c, d) in zip(*results):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)
        assert a.dtype == c.dtype and b.dtype == d.dtype


def test_shuffle_is_a_permutation_each_epoch_and_follows_manual_seed():
    ds = TensorDataset(mg.arange(20))
    loader = DataLoader(ds, batch_size=5, shuffle=True)
    mg.manual_seed(3)
    epoch1 = np.concatenate([b[0].numpy() for b in loader])
    epoch2 = np.concatenate([b[0].numpy() for b in loader])
    assert sorted(epoch1) == list(range(20)) and sorted(epoch2) == list(range(20))
    assert not np.array_equal(epoch1, epoch2) and not np.array_equal(epoch1, np.arange(20))
    mg.manual_seed(3)
    np.testing.assert_array_equal(np.concatenate([b[0].numpy() for b in loader]), epoch1)
    seeded = DataLoader(ds, batch_size=5, shuffle=True, generator=np.random.default_rng(0))
    assert sorted(np.concatenate([b[0].numpy() for b in seeded])) == list(range(20))


def test_random_sampler_with_replacement_and_num_samples():
    mg.manual_seed(0)
    data = list(range(5))
    draws = list(RandomSampler(data, replacement=True, num_samples=50))
    assert len(draws) == 50 and set(draws) <= set(data) and len(set(draws)) == 5  # repeats happen
    chained = list(RandomSampler(data, num_samples=12))  # without replacement: whole permutations, then a part
    assert len(chained) == 12 and sorted(chained[:5]) == data and sorted(chained[5:10]) == data
    assert len(RandomSampler(data)) == 5 and sorted(RandomSampler(data)) == data
    with pytest.raises(ValueError, match="RandomSampler: num_samples must be a positive integer, got 0"):
        RandomSampler(data, num_samples=0)
    with pytest.raises(TypeError, match="RandomSampler: replacement must be a bool"):
        RandomSampler(data, replacement=1)


def test_sampler_and_batch_sampler_options():
    ds = TensorDataset(mg.arange(10))
    loader = DataLoader(ds, batch_size=3, sampler=SequentialSampler(range(6)))
    assert [b[0].tolist() for b in loader] == [[0, 1, 2], [3, 4, 5]]
    loader = DataLoader(ds, batch_sampler=[[9, 0], [4]])
    assert [b[0].tolist() for b in loader] == [[9, 0], [4]] and len(loader) == 2
    assert list(BatchSampler(range(7), 3, drop_last=True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(BatchSampler(range(7), 3, drop_last=False)) == 3
    single = DataLoader(ds, batch_size=None)
    first = next(iter(single))
    assert isinstance(first, tuple) and first[0].shape == () and len(single) == 10


def test_workers_requested_load_in_the_main_process_with_the_same_batches():
    """minGPT's Trainer asks for num_workers=4: the batches are those of num_workers=0, in the same order."""
    ds = TensorDataset(mg.arange(10) * 3)
    mg.manual_seed(5)
    plain = [b[0].tolist() for b in DataLoader(ds, batch_size=4, shuffle=True)]
    mg.manual_seed(5)
    with pytest.warns(UserWarning, match="num_workers=4: minigrad has no worker processes"):
        loader = DataLoader(ds, batch_size=4, shuffle=True, num_workers=4, persistent_workers=True,
                            prefetch_factor=2, timeout=5)
    assert [b[0].tolist() for b in loader] == plain
    assert sorted(sum(plain, [])) == [0, 3, 6, 9, 12, 15, 18, 21, 24, 27]


def test_loader_errors():
    ds = TensorDataset(mg.arange(4))
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified in multiprocessing"):
        DataLoader(ds, prefetch_factor=2)
    with pytest.raises(ValueError, match="timeout option should be non-negative"):
        DataLoader(ds, timeout=-1)
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        DataLoader(ds, shuffle=True, sampler=SequentialSampler(ds))
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(ds, batch_size=2, batch_sampler=[[0, 1]])
    with pytest.raises(ValueError, match="BatchSampler: batch_size must be a positive integer, got 0"):
        DataLoader(ds, batch_size=0)
    with pytest.raises(ValueError, match="TensorDataset: size mismatch between tensors: first dims \\[4, 3\\]"):
        TensorDataset(mg.zeros(4), mg.zeros(3))


class Records(Dataset):
    """Samples of every kind default_collate handles."""

    Pair = namedtuple("Pair", "a b")

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return {
            "tensor": mg.full((2,), float(i)),
            "array": np.arange(3) + i,
            "float": 0.5 * i,
            "int": i,
            "bool": i % 2 == 0,
            "text": f"item{i}",
            "pair": Records.Pair(i, [float(i), mg.tensor(i)]),
        }


def test_default_collate_handles_every_kind():
    batch = next(iter(DataLoader(Records(), batch_size=3)))
    assert batch["tensor"].shape == (3, 2) and batch["tensor"].dtype == mg.float32
    assert batch["array"].shape == (3, 3) and batch["array"].dtype == np.arange(3).dtype
    assert batch["float"].dtype == mg.float64 and batch["float"].tolist() == [0.0, 0.5, 1.0]
    assert batch["int"].dtype == mg.int64 and batch["bool"].dtype == mg.bool
    assert batch["text"] == ["item0", "item1", "item2"]
    pair = batch["pair"]
    assert isinstance(pair, Records.Pair) and pair.a.tolist() == [0, 1, 2]
    assert isinstance(pair.b, list) and pair.b[0].tolist() == [0.0, 1.0, 2.0] and pair.b[1].tolist() == [0, 1, 2]
    ordered = default_collate([OrderedDict(x=1), OrderedDict(x=2)])
    assert isinstance(ordered, OrderedDict) and ordered["x"].tolist() == [1, 2]
    with pytest.raises(RuntimeError, match="default_collate: cannot stack tensors of different shapes"):
        default_collate([mg.zeros(2), mg.zeros(3)])
    with pytest.raises(TypeError, match="default_collate: batch must contain Tensors, NumPy arrays, numbers, dicts or lists; found object"):
        default_collate([object()])


@needs_torch
def test_default_collate_dtypes_match_pytorch():
    samples = [(1.5, 2, True, np.arange(2, dtype=np.float32)), (0.5, 3, False, np.ones(2, dtype=np.float32))]
    ours = default_collate(samples)
    theirs = torch.utils.data.default_collate(samples)
    for a, b in zip(ours, theirs):
        assert a.dtype == b.numpy().dtype and a.shape == tuple(b.shape)
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_random_split_lengths_and_fractions():
    mg.manual_seed(0)
    ds = TensorDataset(mg.arange(10))
    a, b = random_split(ds, [7, 3])
    assert isinstance(a, Subset) and len(a) == 7 and len(b) == 3
    assert sorted([int(a[i][0]) for i in range(7)] + [int(b[i][0]) for i in range(3)]) == list(range(10))
    parts = random_split(range(11), [0.5, 0.3, 0.2])  # floors 5, 3, 2; the one left over goes to the first
    assert [len(p) for p in parts] == [6, 3, 2]
    mg.manual_seed(5)
    first = [list(p.indices) for p in random_split(range(8), [0.5, 0.5])]
    mg.manual_seed(5)
    assert [list(p.indices) for p in random_split(range(8), [0.5, 0.5])] == first
    with pytest.raises(ValueError, match="random_split: the lengths \\[4, 4\\] sum to 8, but the dataset has 10 samples"):
        random_split(ds, [4, 4])


@needs_torch
def test_random_split_fraction_lengths_match_pytorch():
    for n, fractions in ((11, [0.5, 0.3, 0.2]), (10, [0.7, 0.3]), (7, [1 / 3, 1 / 3, 1 / 3])):
        ours = [len(p) for p in random_split(range(n), fractions)]
        theirs = [len(p) for p in torch.utils.data.random_split(range(n), fractions)]
        assert ours == theirs


def test_training_loop_with_a_loader():
    mg.manual_seed(0)
    X = mg.randn(64, 2)
    Y = (X[:, 0] > X[:, 1]).long()
    model = mg.nn.Linear(2, 2)
    opt = mg.optim.SGD(model.parameters(), lr=0.5)
    for _ in range(20):
        for x, y in DataLoader(TensorDataset(X, Y), batch_size=16, shuffle=True):
            loss = mg.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    accuracy = (model(X).argmax(dim=1) == Y).float().mean().item()
    assert accuracy > 0.9


# ---- samplers that draw lazily -------------------------------------------------------------------
def test_an_infinite_random_sampler_draws_a_chunk_at_a_time():
    data = TensorDataset(mg.arange(1000), mg.arange(1000) * 2)
    sampler = RandomSampler(data, replacement=True, num_samples=int(1e10))
    assert len(sampler) == 10 ** 10
    loader = DataLoader(data, batch_size=8, sampler=sampler, pin_memory=True)
    assert len(loader) == 10 ** 10 // 8
    tracemalloc.start()
    try:
        batches = iter(loader)
        for _ in range(200):
            x, y = next(batches)
            assert x.shape == (8,) and (y.numpy() == 2 * x.numpy()).all()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 ** 20, f"iterating 1,600 samples of an infinite sampler peaked at {peak} bytes"
    # iter(loader) again starts a fresh pass; the same seed gives the same one
    mg.manual_seed(0)
    first = next(iter(loader))[0].tolist()
    mg.manual_seed(0)
    assert next(iter(loader))[0].tolist() == first
    # without replacement an infinite sampler chains whole permutations, also lazily
    chained = iter(RandomSampler(range(10), num_samples=int(1e10)))
    blocks = [sorted(next(chained) for _ in range(10)) for _ in range(3)]
    assert blocks == [list(range(10))] * 3


def test_random_sampler_with_an_explicit_generator_is_lazy_and_reproducible():
    def draw(seed, count):
        it = iter(RandomSampler(range(7), replacement=True, num_samples=int(1e12),
                                generator=mg.Generator().manual_seed(seed)))
        return [next(it) for _ in range(count)]

    assert draw(3, 100) == draw(3, 100) and draw(3, 100)[:40] == draw(3, 40)
    assert set(draw(3, 100)) == set(range(7))
    with pytest.raises(ValueError, match="empty data source"):
        list(RandomSampler([], replacement=True, num_samples=3))


def test_weighted_random_sampler():
    mg.manual_seed(0)
    draws = list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 8000))
    counts = np.bincount(draws, minlength=4) / len(draws)
    assert counts[0] == counts[2] == 0  # zero weight: never drawn
    np.testing.assert_allclose(counts, [0, 0.25, 0, 0.75], atol=0.02)
    distinct = list(WeightedRandomSampler(mg.tensor([1.0, 1.0, 5.0, 1.0]), 4, replacement=False))
    assert sorted(distinct) == [0, 1, 2, 3]
    def first(count, seed):  # a huge num_samples costs nothing until drawn
        sampler = WeightedRandomSampler([1.0, 2.0], int(1e12), generator=mg.Generator().manual_seed(seed))
        assert len(sampler) == 10 ** 12
        it = iter(sampler)
        return [next(it) for _ in range(count)]

    assert first(100, 0) == first(100, 0) and set(first(100, 0)) == {0, 1} and first(100, 1) != first(100, 0)
    for bad, message in [(([1.0], 0), "num_samples must be a positive integer"),
                         (([1.0], 2, 1), "replacement must be a bool"),
                         (([[1.0]], 2), "1-d sequence"), (([-1.0, 1.0], 2), "negative"),
                         (([0.0, 0.0], 2), "sum to 0"), (([1.0, 1.0], 3, False), "without replacement")]:
        with pytest.raises(ValueError, match=message):
            WeightedRandomSampler(*bad)


@needs_torch
def test_sampler_errors_have_pytorchs_types():
    for lib in (mg, torch):
        data = lib.utils.data
        for bad in (dict(num_samples=0), dict(num_samples=1.5)):
            with pytest.raises(ValueError):
                data.RandomSampler(range(3), **bad)
        with pytest.raises(TypeError):
            data.RandomSampler(range(3), replacement=1)
        with pytest.raises(ValueError):
            data.WeightedRandomSampler([1.0], 0)
        with pytest.raises(ValueError):
            data.WeightedRandomSampler([[1.0]], 2)
        assert len(data.RandomSampler(range(3), replacement=True, num_samples=int(1e10))) == 10 ** 10

# ---- streams and concatenation -------------------------------------------------------------------
class Countdown(mg.utils.data.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n, 0, -1))


def test_an_iterable_dataset_is_batched_in_its_own_order():
    assert [b.tolist() for b in DataLoader(Countdown(7), batch_size=3)] == [[7, 6, 5], [4, 3, 2], [1]]
    assert [b.tolist() for b in DataLoader(Countdown(7), batch_size=3, drop_last=True)] == [[7, 6, 5], [4, 3, 2]]
    assert list(DataLoader(Countdown(3), batch_size=None)) == [3, 2, 1]
    for option in (dict(shuffle=True), dict(sampler=[0, 1]), dict(batch_sampler=[[0]])):
        with pytest.raises(ValueError, match="IterableDataset: expected unspecified"):
            DataLoader(Countdown(3), **option)
    with pytest.raises(TypeError):  # a stream without __len__ has no length, as in PyTorch
        len(DataLoader(Countdown(3), batch_size=2))
    assert mg.utils.data.get_worker_info() is None


def test_concatenated_datasets():
    a, b = TensorDataset(mg.arange(3)), TensorDataset(mg.arange(10, 12))
    both = a + b
    assert isinstance(both, mg.utils.data.ConcatDataset) and len(both) == 5 and both.cumulative_sizes == [3, 5]
    assert [both[i][0].item() for i in range(5)] == [0, 1, 2, 10, 11] and both[-1][0].item() == 11
    with pytest.raises(IndexError, match="index 5 is out of range"):
        both[5]
    with pytest.raises(ValueError, match="empty"):
        mg.utils.data.ConcatDataset([])
    with pytest.raises(TypeError, match="IterableDataset"):
        mg.utils.data.ConcatDataset([Countdown(2)])
    assert sorted(i for batch in DataLoader(both, batch_size=2, shuffle=True) for i in batch[0].tolist()) == \
        [0, 1, 2, 10, 11]


@needs_torch
def test_streams_and_concatenation_match_pytorch():
    for lib in (mg, torch):
        data = lib.utils.data

        class Stream(data.IterableDataset):
            def __iter__(self):
                return iter([lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0]), lib.tensor([5.0, 6.0])])

            def __len__(self):
                return 3

        loader = data.DataLoader(Stream(), batch_size=2)
        assert len(loader) == 2 and [b.tolist() for b in loader] == [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0]]]
        both = data.TensorDataset(lib.arange(3)) + data.TensorDataset(lib.arange(10, 12))
        assert both.cumulative_sizes == [3, 5] and both[3][0].item() == 10 and both[-2][0].item() == 10
