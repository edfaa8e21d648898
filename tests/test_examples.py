"""The examples a newcomer runs: each one the README lists runs in the test suite, and each file in
examples/ is listed there with what it shows.

fit_curve.py and spirals.py run here as the README shows them (`python examples/NAME.py`, a process
of their own); the others run in the test files named in EXAMPLE_TESTS, with tiny settings where they
train (their own arguments).
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_TESTS = {  # example -> the test file that runs it
    "fit_curve.py": "test_examples.py",
    "spirals.py": "test_examples.py",
    "why_scale.py": "test_training.py",
    "visualize.py": "test_viz.py",
    "backprop_through_attention.py": "test_notebook.py",
    "vision_transformer.py": "test_examples.py",
    "cnn_tutorial.py": "test_examples.py",
}


def run_example(name):
    done = subprocess.run([sys.executable, f"examples/{name}"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_fit_curve_brings_the_error_down():
    errors = [float(e) for e in re.findall(r"^step +\d+  mean squared error ([0-9.]+)$", run_example("fit_curve.py"),
                                           re.M)]
    assert len(errors) == 7  # steps 0, 100, ..., 600
    assert errors[-1] < 0.01 < errors[0] / 10  # sin(3x) has variance ~0.5: the network has learnt it


def test_spirals_reaches_the_accuracy_the_readme_states():
    out = run_example("spirals.py")
    accuracy = float(re.search(r"accuracy on \d+ held-out points: ([0-9.]+)%", out).group(1))
    assert accuracy >= 95.0  # the README says 98.0% held out; 95% leaves room for another machine's BLAS


def test_the_vision_transformer_learns_the_strokes_and_its_explore_page_opens_the_patch_embedding(tmp_path):
    page = tmp_path / "vit.html"
    done = subprocess.run([sys.executable, "examples/vision_transformer.py", "--explore", str(page)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    accuracy = float(re.search(r"accuracy on 1000 held-out images: ([0-9.]+)%", done.stdout).group(1))
    assert accuracy >= 95.0  # the README: "95% or more"
    assert re.search(r"vit.html: [0-9.]+ MB, \d+ ops \((\d+) checks passed\)", done.stdout)
    text = page.read_text()
    # the patch embedding's convolution is a box of its own, its ops (the matmul with the columns) inside
    assert re.search(r'"op":"MatMul"[^{}]*"module":"patch_embed"', text)


def test_the_tutorial_cnn_runs_on_minigrad_with_minigrad_run():
    done = subprocess.run([sys.executable, "-m", "minigrad", "run", "examples/cnn_tutorial.py"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    losses = [float(v) for v in re.findall(r"^epoch \d  loss ([0-9.]+)$", done.stdout, re.M)]
    assert len(losses) == 3 and losses[-1] < losses[0] / 10
    accuracy = float(re.search(r"accuracy on 500 held-out images: ([0-9.]+)%", done.stdout).group(1))
    assert accuracy >= 90.0


def test_every_example_is_listed_in_the_readme_and_run_by_a_test():
    on_disk = {p.name for p in (ROOT / "examples").glob("*.py")}
    readme = (ROOT / "README.md").read_text()
    listed = set(re.findall(r"^\| `(?:python|jupyter lab|minigrad run) examples/(\w+\.py)` \| \S", readme, re.M))
    assert listed == on_disk == set(EXAMPLE_TESTS), (listed, on_disk)
    for example, test_file in EXAMPLE_TESTS.items():
        if test_file != "test_examples.py":  # run above; elsewhere, the test file opens the example's path
            source = (ROOT / "tests" / test_file).read_text()
            assert re.search(r'examples("\s*/\s*"|/)' + re.escape(example), source), (example, test_file)
