"""minigrad sets glibc's malloc to keep freed memory on import (minigrad/kernels/allocator.py): it takes,
the environment can turn it off or take precedence, and it does what it is for (fewer page faults)."""
import os
import platform
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                                reason="the malloc settings exist only in glibc")

# A few training steps of a small MLP, the page faults they take, and whether the setting is on.
STEPS = textwrap.dedent("""
    import resource
    import minigrad as mg
    x = mg.randn(32, 32, 64)
    first, second = mg.nn.Linear(64, 256), mg.nn.Linear(256, 64)
    def step():
        second(mg.nn.functional.gelu(first(x), approximate="tanh")).softmax(-1).sum().backward()
    step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        step()
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before, mg.allocator.is_tuned())
""")


def _run(code, **env):
    plain = {k: v for k, v in os.environ.items()
             if k not in ("MINIGRAD_MALLOC", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**plain, **env},
                          check=True)
    return done.stdout.split()


def test_on_by_default_and_it_saves_page_faults():
    faults, tuned = _run(STEPS)
    default_faults, default_tuned = _run(STEPS, MINIGRAD_MALLOC="default")
    assert (tuned, default_tuned) == ("True", "False")
    # every step re-faults its freed temporaries under glibc's defaults (about 50,000 here), and
    # reuses them with the setting (a few hundred)
    assert int(faults) * 10 < int(default_faults), (faults, default_faults)


@pytest.mark.parametrize("env", [{"MINIGRAD_MALLOC": "default"}, {"MINIGRAD_MALLOC": "0"},
                                 {"MALLOC_TRIM_THRESHOLD_": "131072"},
                                 {"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=131072"}])
def test_the_environment_turns_it_off(env):
    assert _run("import minigrad as mg; print(mg.allocator.is_tuned())", **env) == ["False"]


def test_switched_at_run_time():
    code = ("import minigrad as mg; a = mg.allocator; print(a.is_tuned(), a.keep_freed_memory(False), a.is_tuned(),"
            " a.keep_freed_memory(True), a.is_tuned())")
    assert _run(code) == ["True", "False", "False", "True", "True"]
