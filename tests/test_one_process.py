"""torch.distributed and torch.nn.parallel for scripts that also run in one process (nanoGPT's
train.py imports them at the top and uses them only under torchrun): the names exist, nothing claims
a process group, and DataParallel on the CPU is the module itself under the prefix "module."."""
import pytest

import minigrad as mg
from minigrad import distributed, nn
from minigrad.nn.parallel import DataParallel, DistributedDataParallel

try:
    import torch
except ImportError:
    torch = None


def test_no_process_group_is_ever_available():
    assert distributed.is_available() is False
    assert distributed.is_initialized() is False
    with pytest.raises(RuntimeError, match="torchrun"):
        distributed.init_process_group(backend="gloo")
    for call in (distributed.get_rank, distributed.get_world_size, distributed.destroy_process_group,
                 distributed.barrier):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            call()


def test_distributed_data_parallel_refused_as_before_init_process_group():
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedDataParallel(nn.Linear(2, 3), device_ids=[0])


def test_data_parallel_on_the_cpu_is_the_module_under_module_prefix():
    mg.manual_seed(0)
    inner = nn.Linear(2, 3)
    wrapped = DataParallel(inner)
    assert wrapped.module is inner
    assert list(wrapped.state_dict()) == ["module.weight", "module.bias"]
    x = mg.tensor([[1.0, -2.0]])
    expected = x.numpy() @ inner.weight.detach().numpy().T + inner.bias.detach().numpy()
    assert (wrapped(x).detach().numpy() == expected).all()
    with pytest.raises(TypeError, match="DataParallel"):
        DataParallel(lambda x: x)


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed (the comparison needs it)")
def test_state_dict_keys_as_pytorch():
    assert list(DataParallel(nn.Linear(2, 3)).state_dict()) == \
        list(torch.nn.DataParallel(torch.nn.Linear(2, 3)).state_dict())


def test_the_imports_of_a_script_that_may_run_under_torchrun(tmp_path):
    """nanoGPT's two import lines, with `torch` bound to minigrad, in a fresh interpreter."""
    import subprocess
    import sys
    script = tmp_path / "imports.py"
    script.write_text(
        "import sys, minigrad\n"
        "sys.modules['torch'] = minigrad\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "from torch.distributed import init_process_group, destroy_process_group\n"
        "import torch\n"
        "assert DDP is minigrad.nn.parallel.DistributedDataParallel\n"
        "assert torch.nn.parallel.DataParallel is minigrad.nn.parallel.DataParallel\n"
        "assert torch.distributed.is_available() is False\n"
        "print('ok')\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
