"""README.md and docs/*.md stay true to the code: every command they show still runs as shown, every
Python snippet parses (and the whole ones run), and every relative link leads somewhere.

- A `minigrad ...` command is parsed by the CLI's own parser (an unknown option or task fails), and
  each subcommand shown answers `--help`; `python -m minigrad run ...` likewise.
- `python FILE ARGS` (examples, benchmarks, tools): FILE exists and each `--option` shown is one that
  FILE defines. The examples themselves run in tests/test_examples.py.
- `pip install -e ".[EXTRA]"`: setup.cfg has that extra.
- A Python snippet that begins with its imports is whole: it runs, the snippets of one page in order
  in one namespace, in a temporary folder. A fragment (it continues the text around it) and a snippet
  marked `<!-- parsed only: why -->` on the line above it are parsed.
- A link `[text](path#anchor)` names a file that exists and, with an anchor, a heading of that file.
- The README's first two commands are the main job and the test command, and .ci/run runs the test
  command both ways exactly as the README gives them.
"""
import ast
import configparser
import re
import shlex
from pathlib import Path

import pytest

from minigrad.utils import script_runner
from minigrad_models import cli

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
IDS = [str(p.relative_to(ROOT)) for p in PAGES]
SKIPPED_TOOLS = {"apt", "apt-get", "brew", "conda", "cd", "git"}  # system tools: nothing of ours to check


def fenced_blocks(page):
    """(language, code, first line number, parsed only?) of every fenced block of a page."""
    lines = page.read_text().splitlines()
    found, i = [], 0
    while i < len(lines):
        opening = re.match(r"^```(\w*)\s*$", lines[i])
        if opening:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
            found.append((opening.group(1), "\n".join(lines[i + 1:end]) + "\n", i + 2,
                          before.startswith("<!-- parsed only")))
            i = end
        i += 1
    return found


def shell_commands(page):
    """(command words, where) for each command of the page's bash blocks and its `$ ...` lines."""
    commands = []
    for language, code, first, _ in fenced_blocks(page):
        for k, line in enumerate(code.splitlines()):
            if language == "bash" or (language == "" and line.startswith("$ ")):
                text = line[2:] if line.startswith("$ ") else line
                for part in text.split("&&"):
                    words = shlex.split(part, comments=True)
                    if words:
                        commands.append((words, f"{page.name}:{first + k}"))
    return commands


def inline_python_commands(page):
    """`python examples/x.py --flag` written in the text."""
    return [(shlex.split(span), page.name) for span in
            re.findall(r"`(python (?:examples|benchmarks|tools)/[^`]+)`", page.read_text())]


def extras():
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return set(config["options.extras_require"])


def parses(parser, words):
    """None if argparse accepts the words, else its complaint."""
    try:
        parser.parse_args(words)
    except SystemExit as stop:
        return f"argparse refused it (exit {stop.code})"
    return None


def check_command(words, where):
    """A list of what is wrong with one shown command (empty when it would run as shown)."""
    head = words[0]
    if head in SKIPPED_TOOLS or head.startswith(".ci/"):
        return [] if not head.startswith(".ci/") or (ROOT / head).exists() else [f"{where}: {head} does not exist"]
    if head == "pip":
        wanted = {e for w in words if (m := re.fullmatch(r"\.\[([\w,]+)\]", w)) for e in m.group(1).split(",")}
        return [f"{where}: setup.cfg has no extra {e!r}" for e in wanted - extras()]
    if head == "minigrad":
        problem = parses(cli.build_parser(), words[1:])
        return [f"{where}: {shlex.join(words)}: {problem}"] if problem else []
    if head in ("jupyter", "jupytext"):
        files = [w for w in words if w.endswith(".py")]
        return [f"{where}: {f} does not exist" for f in files if not (ROOT / f).exists()]
    if head in ("python", "python3"):
        if words[1:3] == ["-m", "pytest"]:
            return []
        if words[1:4] == ["-m", "minigrad", "run"]:
            parser = script_runner.add_arguments(__import__("argparse").ArgumentParser())
            problem = parses(parser, words[4:])
            return [f"{where}: {shlex.join(words)}: {problem}"] if problem else []
        script = ROOT / words[1]
        if not script.is_file():
            return [f"{where}: {words[1]} does not exist"]
        source = script.read_text()
        return [f"{where}: {words[1]} has no option {w}" for w in words[2:]
                if w.startswith("--") and f'"{w.split("=")[0]}"' not in source]
    return [f"{where}: a command this test does not know how to check: {shlex.join(words)}"]


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_every_command_shown_runs_as_shown(page):
    commands = shell_commands(page) + inline_python_commands(page)
    problems = [p for words, where in commands for p in check_command(words, where)]
    assert problems == []


def test_each_minigrad_subcommand_shown_answers_help(capsys):
    shown = {words[1] for page in PAGES for words, _ in shell_commands(page) if words[0] == "minigrad"}
    assert {"train", "translate", "explore", "run"} <= shown
    for sub in sorted(shown - {"--version"}):
        with pytest.raises(SystemExit) as stop:
            cli.main([sub, "--help"])
        assert stop.value.code == 0
        assert f"usage: minigrad {sub}" in capsys.readouterr().out


def test_the_checker_refuses_what_would_not_run():
    assert check_command(["minigrad", "train", "copyy"], "x")  # no such task
    assert check_command(["minigrad", "run", "--explor", "2", "t.py"], "x")  # no such option of run
    assert check_command(["python", "examples/why_scale.py", "--no-such-option"], "x")
    assert check_command(["python", "examples/no_such_example.py"], "x")
    assert check_command(["pip", "install", "-e", ".[no_such_extra]"], "x")
    assert check_command(["make", "all"], "x")
    assert check_command(["minigrad", "run", "--explore", "2", "train.py", "--own", "args"], "x") == []


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_every_python_snippet_parses_and_the_whole_ones_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # what a snippet writes lands here
    namespace = {"__name__": "__docs__"}
    for language, code, first, parsed_only in fenced_blocks(page):
        if language != "python":
            continue
        where = f"{page.name}:{first}"
        tree = ast.parse(code, where)  # a SyntaxError names the page and line
        whole = tree.body and isinstance(tree.body[0], (ast.Import, ast.ImportFrom))
        if whole and not parsed_only:
            exec(compile(tree, where, "exec"), namespace)


def slug(heading):
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_anchors_are_githubs():
    assert slug("Run a PyTorch script unchanged: `minigrad run`") == "run-a-pytorch-script-unchanged-minigrad-run"
    assert slug("Why divide by √d_k") == "why-divide-by-d_k"


def anchors(page):
    return {slug(line.lstrip("#")) for line in page.read_text().splitlines() if re.match(r"^#{1,6} ", line)}


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_every_relative_link_resolves(page):
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # links inside code are not links
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading with that anchor")
    assert broken == []


def test_the_readme_opens_with_the_main_job_and_the_test_command_that_ci_runs():
    blocks = [code.strip() for language, code, _, _ in fenced_blocks(ROOT / "README.md") if language == "bash"]
    assert blocks[0].splitlines() == ['pip install -e ".[progress]" && minigrad train copy',
                                      'pip install -e ".[test]" && python -m pytest -q']
    with_torch = 'pip install -e ".[dev]" && python -m pytest -q'
    assert blocks[1] == with_torch
    ci = (ROOT / ".ci" / "run").read_text()
    without_torch = blocks[0].splitlines()[1]
    assert re.search(r'python3 -m venv .*\n.*' + re.escape(without_torch), ci)  # first, in a venv of its own
    assert ci.rstrip().endswith(with_torch)
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    dev = config["options.extras_require"]["dev"].split()
    assert "torch==2.13.0" in dev and "torch==2.13.0" not in config["options.extras_require"]["test"]


def test_the_readme_stays_a_front_page():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 155  # "at most about 150 lines" (issue 35); the rest lives in docs/
