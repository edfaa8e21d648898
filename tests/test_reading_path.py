"""docs/reading.md states the lines of each step of the reading path as tools/reading_path.py counts them,
every definition the path names exists, the path itself stays at most 1,200 lines, and the page opens by
sending the reader to the notebook's first three sections."""
import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PATH = runpy.run_path(str(ROOT / "tools" / "reading_path.py"), run_name="reading_path")
TEXT = (ROOT / "docs" / "reading.md").read_text()
SECTIONS = list(PATH["SECTIONS"])


def test_the_path_is_at_most_1200_lines_and_every_definition_exists():
    steps = PATH["steps"]("path")  # (raises LookupError for a definition that is not there)
    assert 0 < sum(n for *_, n in steps) <= 1200
    for section in SECTIONS:
        for _, path, _, n in PATH["steps"](section):
            assert (ROOT / path).exists() and n > 0


def test_a_missing_definition_is_refused():
    with pytest.raises(LookupError, match="no definition named 'Tensor.no_such_method'"):
        PATH["count"]("minigrad/tensor.py", ("Tensor.no_such_method",))


@pytest.mark.parametrize("section", SECTIONS)
def test_docs_reading_states_each_steps_file_and_count(section):
    rows = {line.split("|")[1].strip(): line for line in TEXT.splitlines() if line.startswith("| ")}
    for label, path, _, n in PATH["steps"](section):
        row = rows.get(label)
        assert row is not None, f"docs/reading.md has no row {label} ({path})"
        assert f"`{path}`" in row, (label, path, row)
        counts = [int(cell.strip()) for cell in row.split("|")[2:] if cell.strip().isdigit()]
        assert counts == [n], (label, path, counts, n)


def test_docs_reading_states_the_total_and_opens_with_the_notebook():
    total = sum(n for *_, n in PATH["steps"]("path"))
    assert f"{total:,} lines in all" in TEXT
    opening = TEXT[: TEXT.index("| # |")]
    assert "examples/backprop_through_attention.py" in opening
    notebook = (ROOT / "examples" / "backprop_through_attention.py").read_text()
    for title in re.findall(r'"([1-3]\. [^"]+)"', opening):
        assert f"# ## {title}" in notebook, title
    assert len(re.findall(r'"([1-3]\. [^"]+)"', opening)) == 3
