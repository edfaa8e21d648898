"""docs/reading.md states the lines of each step of the reading path as tools/reading_path.py counts them,
and the path stays at most 3,000 lines."""
import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PATH = runpy.run_path(str(ROOT / "tools" / "reading_path.py"), run_name="reading_path")


def test_the_reading_path_is_at_most_3000_lines_and_every_step_exists():
    steps = PATH["steps"]()
    total = sum(n for _, _, n in steps)
    assert 0 < total <= 3000
    for path, _, n in steps:
        assert (ROOT / path).exists() and n > 0


def test_docs_reading_states_the_counts():
    text = (ROOT / "docs" / "reading.md").read_text()
    steps = PATH["steps"]()
    rows = [line for line in text.splitlines() if line.startswith("| ") and "`minigrad/" in line]
    for path, _, n in steps:
        row = next((r for r in rows if f"`{path}`" in r or f"`{Path(path).name}`" in r), None)
        assert row is not None, f"docs/reading.md has no row for {path}"
        counts = [int(cell.strip()) for cell in row.split("|") if cell.strip().isdigit()]
        joined = [s for s in steps if f"`{s[0]}`" in row or f"`{Path(s[0]).name}`" in row]
        assert sum(c[2] for c in joined) in counts, (row, [c[2] for c in joined])
    total = sum(n for _, _, n in steps)
    assert f"{total:,} lines in all" in text
