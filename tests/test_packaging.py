"""What `pip install` puts in site-packages: exactly the packages `minigrad` and `minigrad_models`, and
every module of both.

The repository's `models/` folder (the design card's layout) installs under the name `minigrad_models`:
a top-level `models` would collide with the `models.py` or `models/` of nearly every ML project, and
with any other distribution that claims the name. setup.cfg lists every package by name, so a new
package folder that is not added there would silently be missing from the wheel; this file checks the
list against the folders on disk, and builds the wheel (offline, from a copy of the sources, so that
the build leaves nothing in the checkout) to see what it holds.
"""
import configparser
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INSTALLED_AS = {"minigrad": "minigrad", "models": "minigrad_models"}  # folder in the repository -> package name


def packages_on_disk():
    """Dotted names of every package folder (one holding __init__.py) under minigrad/ and models/."""
    found = set()
    for folder, name in INSTALLED_AS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((name, *parts)))
    return found


def modules_on_disk():
    """The path each .py file of the two packages has inside the wheel."""
    found = set()
    for folder, name in INSTALLED_AS.items():
        for source in (ROOT / folder).rglob("*.py"):
            found.add("/".join((name, *source.relative_to(ROOT / folder).parts)))
    return found


def setup_cfg_packages():
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return {line.strip() for line in config["options"]["packages"].splitlines() if line.strip()}


def test_every_folder_with_python_files_is_a_package():
    """A folder of .py files without __init__.py would be a namespace package: not listed, not installed."""
    loose = [str(d.relative_to(ROOT)) for folder in INSTALLED_AS for d in [ROOT / folder, *(ROOT / folder).rglob("*")]
             if d.is_dir() and d.name != "__pycache__" and any(d.glob("*.py")) and not (d / "__init__.py").exists()]
    assert loose == []


def test_setup_cfg_lists_exactly_the_packages_on_disk():
    listed, on_disk = setup_cfg_packages(), packages_on_disk()
    assert not on_disk - listed, f"add to setup.cfg's [options] packages: {sorted(on_disk - listed)}"
    assert not listed - on_disk, f"setup.cfg lists packages that do not exist: {sorted(listed - on_disk)}"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The names inside the wheel built from a copy of the sources (no network, no build isolation)."""
    pytest.importorskip("setuptools")
    source = tmp_path_factory.mktemp("source")
    for name in ("setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for folder in INSTALLED_AS:
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path_factory.mktemp("wheel")
    build = "import sys; from setuptools import build_meta; print(build_meta.build_wheel(sys.argv[1]))"
    done = subprocess.run([sys.executable, "-c", build, str(out)], cwd=source, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    (path,) = out.glob("*.whl")
    with zipfile.ZipFile(path) as archive:
        return archive.namelist()


def test_the_wheel_installs_only_minigrad_and_minigrad_models(wheel):
    top_level = {name.split("/")[0] for name in wheel if ".dist-info/" not in name}
    assert top_level == {"minigrad", "minigrad_models"}  # no generic `models`


def test_the_wheel_holds_every_module(wheel):
    holds = {name for name in wheel if name.endswith(".py")}
    assert modules_on_disk() - holds == set(), "modules missing from the wheel"
    assert holds - modules_on_disk() == set(), "the wheel holds modules that are not in the sources"


def test_the_wheel_holds_the_files_the_explore_page_is_made_of(wheel):
    """viz.explore copies these into every page: without them an installed minigrad could write none."""
    parts = {path.name for path in (ROOT / "minigrad" / "viz").iterdir() if path.name.startswith("explore.")}
    assert parts == {"explore.py", "explore.html", "explore.css", "explore.js"}
    assert {f"minigrad/viz/{name}" for name in parts} <= set(wheel)


def test_the_entry_point_names_the_installed_package(wheel):
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    scripts = config["options.entry_points"]["console_scripts"].strip()
    assert scripts == "minigrad = minigrad_models.cli:main"


def test_a_project_with_its_own_models_module_still_imports_minigrads(tmp_path):
    """The road out (README, docs/pytorch_surface.md), `from minigrad_models.pytorch import load_checkpoint`, run from a folder that
    holds its own models.py (common in ML projects): the user's file and minigrad's package do not meet,
    and no module of minigrad_models imports a top-level `models`."""
    (tmp_path / "models.py").write_text("raise ImportError('the user\\'s own models.py was imported')\n")
    script = textwrap.dedent("""
        import importlib, pkgutil
        from minigrad_models.pytorch import load_checkpoint
        import minigrad_models
        for module in pkgutil.walk_packages(minigrad_models.__path__, "minigrad_models."):
            if module.name != "minigrad_models.pytorch":  # already imported; the others need no PyTorch
                importlib.import_module(module.name)
        try:
            import models
        except ImportError as error:
            print("own models:", error)
        print(load_checkpoint.__module__)
    """)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the installed packages, as a user has them
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["own models: the user's own models.py was imported",
                                        "minigrad_models.pytorch"]
