"""Every reference a reader follows resolves: the files, definitions and lines that docs/reading.md and
docs/layout.md name, and the "see ..." comments in minigrad's source.

A file reference (`minigrad/views.py`, `explore.js` in the row of `minigrad/viz/`, [higher_order.md])
must exist; a definition (`_collect`, `Function.apply`, `views._rederive_history`, `mg.save`) must be
defined where it says, or, for a bare name, in the files its table row or source file names, or in
minigrad; `file.py:N` must have a line N. A reference that does not resolve is the kind of comment that
sends a reader to the wrong place (a module that moved, a method that lives in another file).
"""
import re
from pathlib import Path

import pytest

import minigrad

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "minigrad").rglob("*.py"))
SUFFIXES = (".py", ".md", ".js", ".css", ".html", ".json", ".toml", ".cfg", ".txt")
IDENTIFIER = re.compile(r"^\.?[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
# names the docs put in backticks that are not definitions: arguments, a file format, a package's words
NOT_DEFINITIONS = {"arrays", "weights_only", "create_graph", "retain_graph", "batch_first", "inputs", ".npz",
                   "models"}


def _defines(path, name):
    """Whether `path` defines `name` (a function, class or method at any depth, an assignment, a slot)."""
    text = path.read_text()
    return bool(re.search(rf"^\s*(def|class)\s+{re.escape(name)}\b|^\s*{re.escape(name)}\s*[:=]|"
                          rf"[\"']{re.escape(name)}[\"']", text, re.M))


def _module_files(stem):
    return [p for p in SOURCES if p.stem == stem or (p.name == "__init__.py" and p.parent.name == stem)]


def _resolve_path(token, bases=()):
    token = token.rstrip("/")
    for base in (ROOT, ROOT / "minigrad", ROOT / "docs", *bases):
        if (base / token).exists():
            return True
    return False


def _resolve_name(token, files=()):
    """A definition: `a.b.c` as minigrad's attribute path or module.name; a bare name in `files`, else anywhere."""
    token = token.lstrip(".")
    parts = token.split(".")
    if parts[0] in ("mg", "torch", "minigrad", "F", "nn"):  # the API as a user writes it
        obj = {"F": minigrad.nn.functional, "nn": minigrad.nn}.get(parts[0], minigrad)
        try:
            for part in parts[1:]:
                obj = getattr(obj, part)
            return True
        except AttributeError:
            return False
    last = parts[-1]
    if len(parts) > 1:
        owners = _module_files(parts[0]) or [p for p in SOURCES if _defines(p, parts[0])]
        return any(_defines(p, last) for p in owners)
    if any(_defines(p, last) for p in files if p.suffix == ".py"):
        return True
    return hasattr(minigrad, last) or hasattr(minigrad.Tensor, last) or any(
        _defines(p, last) for p in SOURCES)


def _line_references(text):
    for path, line in re.findall(r"([\w/]+\.py):(\d+)", text):
        yield path, int(line)


def _doc_rows(name):
    """Each table row (or paragraph) of a doc, with the files it names (its base folders for bare file names)."""
    text = (ROOT / "docs" / name).read_text()
    for chunk in re.split(r"\n(?=\| )|\n\n", text):
        tokens = re.findall(r"`([^`]+)`", chunk)
        plain_paths = re.findall(r"((?:minigrad|models|examples|tests|tools|docs)/[\w/.]+\w)", chunk)
        paths = [t for t in tokens + plain_paths if "/" in t and " " not in t]
        bases = [ROOT / p.rstrip("/") for p in paths]
        bases += [b.parent for b in bases]
        files = [b for b in bases if b.is_file()]
        yield chunk, tokens, bases, files


@pytest.mark.parametrize("doc", ["reading.md", "layout.md"])
def test_every_file_definition_and_line_a_doc_names_resolves(doc):
    unresolved = []
    for chunk, tokens, bases, files in _doc_rows(doc):
        for link in re.findall(r"\]\(([^)#]+)\)", chunk):
            if not link.startswith("http") and not _resolve_path(link, [ROOT / "docs"]):
                unresolved.append(link)
        for token in tokens:
            words = token.split()
            if len(words) > 1 and not words[-1].endswith(SUFFIXES):
                continue  # code or a command (`jupyter lab`), not a reference
            token = words[-1]  # (`python tools/reading_path.py`: the file)
            if token in NOT_DEFINITIONS:
                continue
            if token.endswith(SUFFIXES) or token.endswith("/"):
                if not _resolve_path(token, bases):
                    unresolved.append(token)
            elif IDENTIFIER.match(token) and not _resolve_name(token, files):
                unresolved.append(token)
        for path, line in _line_references(chunk):
            if not _resolve_path(path) or len((ROOT / path).read_text().splitlines()) < line:
                unresolved.append(f"{path}:{line}")
    assert unresolved == [], f"docs/{doc} names what is not there: {unresolved}"


def _see_references():
    """(file, line number, target) for each `see X` in minigrad's source where X is a path or a code name."""
    for path in SOURCES:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for target in re.findall(r"\bsee (`?[\w./]+`?)", line):
                target = target.strip("`").rstrip(".,;:")
                if "/" in target or ("." in target or "_" in target) and IDENTIFIER.match(target):
                    yield path, number, target


def test_every_see_comment_in_the_source_resolves():
    refs = list(_see_references())
    assert len(refs) >= 10  # (the scan finds them: views._rederive_history, minigrad/torch_compat/device.py, ...)
    unresolved = []
    for path, number, target in refs:
        as_path = "/" in target or target.endswith(SUFFIXES)
        ok = _resolve_path(target, [path.parent]) if as_path else _resolve_name(target, [path])
        if not ok:
            unresolved.append(f"{path.relative_to(ROOT)}:{number}: see {target}")
    assert unresolved == [], unresolved


def test_the_checks_catch_a_wrong_reference():
    assert not _resolve_path("minigrad/device.py")  # the old comment's place: it is torch_compat/device.py
    assert _resolve_path("minigrad/torch_compat/device.py")
    assert not _resolve_name("tensor._take_history")  # it lives in tensor_methods.py
    assert _resolve_name("tensor_methods._take_history")
    assert _resolve_name("views._rederive_history") and not _resolve_name("engine._rederive_history")
    assert not _resolve_name("mg.no_such_function") and _resolve_name("mg.save")


def test_every_repository_path_the_source_mentions_exists():
    """Not only after "see": a comment or docstring that names minigrad/..., docs/..., tests/... names a
    file that is there (the Tensor's old comment named a minigrad/device.py that never existed)."""
    unresolved = []
    for path in SOURCES:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for target in re.findall(r"\b((?:minigrad|docs|tests|tools|benchmarks|examples|models)/[\w/.]*\w)", line):
                if not _resolve_path(target):
                    unresolved.append(f"{path.relative_to(ROOT)}:{number}: {target}")
    assert unresolved == [], unresolved
