"""Random numbers as PyTorch's: Generator objects wherever PyTorch takes `generator=` (the same draws for
the same seed, whatever else runs), the default generator's seed and state (which survive a checkpoint),
and data loading that draws from them (shuffling, random_split, samplers)."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.utils.data import DataLoader, SubsetRandomSampler, TensorDataset, random_split

try:
    import torch
except ImportError:  # the comparisons skip; the rest runs
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed (the comparison needs it)")

# ---- Generator objects and the RNG state ----------------------------------------------------
DRAWS = {
    "randn": lambda g: mg.randn(3, 2, generator=g),
    "rand": lambda g: mg.rand(4, generator=g),
    "randint": lambda g: mg.randint(0, 100, (5,), generator=g),
    "randperm": lambda g: mg.randperm(10, generator=g),
    "multinomial": lambda g: mg.multinomial(mg.tensor([0.2, 0.3, 0.5]), 6, replacement=True, generator=g),
    "normal_": lambda g: mg.empty(4).normal_(generator=g),
    "uniform_": lambda g: mg.empty(4).uniform_(-1, 1, generator=g),
    "init.trunc_normal_": lambda g: nn.init.trunc_normal_(mg.empty(2, 3), generator=g),
    "init.kaiming_uniform_": lambda g: nn.init.kaiming_uniform_(mg.empty(2, 3), generator=g),
}


@pytest.mark.parametrize("draw", sorted(DRAWS))
def test_a_generator_gives_the_same_draws_for_the_same_seed_whatever_else_runs(draw):
    mg.manual_seed(0)
    first = DRAWS[draw](mg.Generator().manual_seed(42)).numpy().copy()
    mg.randn(7), mg.rand(3)  # draws from the default generator in between change nothing
    mg.manual_seed(123)
    again = DRAWS[draw](mg.Generator().manual_seed(42)).numpy()
    np.testing.assert_array_equal(again, first)
    other = DRAWS[draw](mg.Generator().manual_seed(43)).numpy()
    assert not np.array_equal(other, first) or draw == "multinomial"  # 6 draws of 3 categories may repeat
    # and drawing from a generator leaves the default generator's stream as it was
    mg.manual_seed(5)
    expected = mg.randn(3).numpy().copy()
    mg.manual_seed(5)
    DRAWS[draw](mg.Generator().manual_seed(1))
    np.testing.assert_array_equal(mg.randn(3).numpy(), expected)


def test_generator_methods():
    g = mg.Generator()
    assert g.manual_seed(7) is g and g.initial_seed() == 7 and g.device == mg.device("cpu")
    state = g.get_state()
    assert state.dtype == mg.uint8 and state.ndim == 1
    a = mg.randn(5, generator=g).numpy().copy()
    assert g.set_state(state) is g
    np.testing.assert_array_equal(mg.randn(5, generator=g).numpy(), a)  # the same draws again
    assert g.initial_seed() == 7
    seed = g.seed()
    assert g.initial_seed() == seed and 0 <= seed < 2 ** 64
    assert mg.Generator().manual_seed(-1).initial_seed() == 2 ** 64 - 1  # negative seeds wrap, as PyTorch's
    with pytest.raises(TypeError, match="expected an int seed"):
        g.manual_seed(1.5)
    with pytest.raises(ValueError, match="outside the 64-bit range"):
        g.manual_seed(2 ** 64)
    with pytest.raises(TypeError, match="uint8"):
        g.set_state(mg.zeros(3))
    with pytest.raises(RuntimeError, match="not one"):
        g.set_state(mg.zeros(3, dtype=mg.uint8))
    with pytest.raises(TypeError, match="generator must be a minigrad.Generator"):
        mg.randn(2, generator=3)
    with pytest.raises(ValueError, match="runs on the CPU only"):
        mg.Generator("cuda")


def test_default_generator_seed_and_state():
    assert mg.manual_seed(11) is mg.default_generator and mg.initial_seed() == 11
    assert mg.manual_seed(2.9).initial_seed() == 2  # a float seed is truncated, as torch.manual_seed does
    state = mg.get_rng_state()
    a = mg.randn(4).numpy().copy()
    b = mg.rand(3).numpy().copy()
    mg.set_rng_state(state)
    np.testing.assert_array_equal(mg.randn(4).numpy(), a)
    np.testing.assert_array_equal(mg.rand(3).numpy(), b)
    assert mg.random.get_rng_state is mg.get_rng_state and mg.random.manual_seed is mg.manual_seed
    seed = mg.seed()
    assert mg.initial_seed() == seed
    mg.manual_seed(3)
    expected = mg.randn(2).numpy().copy()
    mg.manual_seed(3)
    with mg.random.fork_rng():
        mg.randn(10)
    np.testing.assert_array_equal(mg.randn(2).numpy(), expected)
    # the state survives a checkpoint
    mg.manual_seed(4)
    saved = mg.get_rng_state()
    first = mg.randn(3).numpy().copy()
    import io
    buffer = io.BytesIO()
    mg.save({"rng": saved}, buffer)
    buffer.seek(0)
    mg.set_rng_state(mg.load(buffer)["rng"])
    np.testing.assert_array_equal(mg.randn(3).numpy(), first)


@needs_torch
def test_generator_api_behaves_as_pytorchs():
    for lib in (mg, torch):
        g = lib.Generator()
        assert g.manual_seed(5) is g and g.initial_seed() == 5
        assert lib.Generator().manual_seed(-1).initial_seed() == 2 ** 64 - 1
        assert lib.manual_seed(3.7).initial_seed() == 3 and lib.initial_seed() == 3
        state = lib.get_rng_state()
        assert state.dtype == lib.uint8 and state.ndim == 1
        a = lib.randn(3)
        lib.set_rng_state(state)
        assert lib.equal(lib.randn(3), a)
        g.manual_seed(9)
        loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.arange(10)), batch_size=5, shuffle=True,
                                           generator=g)
        first = [b[0].tolist() for b in loader]
        g.manual_seed(9)
        assert [b[0].tolist() for b in loader] == first
        with pytest.raises((TypeError, RuntimeError)):
            g.set_state(lib.zeros(3))


def test_data_loading_with_a_generator():
    data = TensorDataset(mg.arange(20))

    def epoch(loader):
        return [i for batch in loader for i in batch[0].tolist()]

    g = mg.Generator().manual_seed(0)
    loader = DataLoader(data, batch_size=6, shuffle=True, generator=g)
    first = epoch(loader)
    second = epoch(loader)
    assert sorted(first) == sorted(second) == list(range(20)) and first != second
    g.manual_seed(0)
    assert epoch(loader) == first and epoch(loader) == second
    parts = random_split(range(10), [0.5, 0.5], generator=mg.Generator().manual_seed(1))
    again = random_split(range(10), [0.5, 0.5], generator=mg.Generator().manual_seed(1))
    assert [list(p) for p in parts] == [list(p) for p in again]
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(10))
    subset = SubsetRandomSampler([3, 5, 7], generator=mg.Generator().manual_seed(2))
    assert sorted(subset) == [3, 5, 7]
    with pytest.raises(TypeError, match="RandomSampler: generator must be a minigrad.Generator"):
        DataLoader(data, shuffle=True, generator="seed")


def test_shuffling_does_not_depend_on_what_the_epoch_draws():
    """As PyTorch: each pass seeds its own generator from the default one, so dropout's draws during the
    epoch do not change which samples come next."""
    loader = DataLoader(TensorDataset(mg.arange(40)), batch_size=4, shuffle=True)
    mg.manual_seed(0)
    quiet = [b[0].tolist() for b in loader]
    mg.manual_seed(0)
    busy = []
    for batch in loader:
        busy.append(batch[0].tolist())
        mg.randn(100)  # what a training step with dropout would draw
    assert busy == quiet
