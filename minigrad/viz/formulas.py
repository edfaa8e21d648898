"""An op's formulas, read from the op's own source: the one place where each formula is written.

Every op in minigrad/ops/ states the calculus of its backward in a comment at the top of the
backward (softmax: `# dy_i/dx_j = y_i (delta_ij - y_j)  =>  dx = y * (g - sum(g * y))`). Pages
and messages that show a formula take it from there, with inspect, so they cannot disagree with
the code that runs: change the comment and the page changes with it.

    formulas(Softmax)  ->  OpFormulas(forward=..., backward="dy_i/dx_j = ...", forward_source=...,
                                       backward_source=..., where="minigrad/kernels/softmax.py:48")

Where each text comes from, in order (the first that exists):
    backward   the comment lines that open backward's body; else its first comment line
    forward    the comment lines that open forward's body; the first line of the op's docstring; the
               part of the backward formula before "=>" (`y = x W^T + b  =>  dx = ...`); else
               nothing, and a reader sees forward's source, which is there in any case.
"""
import inspect
import os
import textwrap
from dataclasses import dataclass


@dataclass
class OpFormulas:
    forward: str            # the forward formula, "" when the source states none
    backward: str           # the backward formula, "" when the source states none
    forward_source: str     # the source of forward(), dedented ("" if it cannot be read)
    backward_source: str    # the source of backward()
    where: str              # "file:line" of backward ("" if unknown)


def formulas(op_class):
    """The formulas of a Function subclass (an op), or of a PyTorch-style autograd.Function."""
    forward, forward_line = _source(op_class, "forward")
    backward, backward_line = _source(op_class, "backward")
    backward_formula = " ".join(_opening_comments(backward)) or _first_comment(backward)
    forward_formula = (" ".join(_opening_comments(forward)) or _docstring_line(op_class)
                       or _before_implication(backward_formula))
    return OpFormulas(forward_formula, backward_formula, forward, backward, backward_line)


def _source(op_class, method):
    """(dedented source of op_class.<method>, "file:line"), or ("", "") where inspect cannot read it."""
    function = _defined(op_class, method)
    if function is None:
        return "", ""
    try:
        lines, start = inspect.getsourcelines(function)
        path = inspect.getsourcefile(function) or ""
    except (OSError, TypeError):  # defined in an interactive session, or a builtin
        return "", ""
    return textwrap.dedent("".join(lines)), f"{short_path(path)}:{start}"


def _defined(op_class, method):
    """The method as defined by the op itself (not minigrad.function.Function's placeholder)."""
    for klass in op_class.__mro__:
        if method in klass.__dict__:
            if klass.__module__ in ("minigrad.function", "minigrad.autograd.function") and \
                    klass.__name__ in ("Function",):
                return None
            found = klass.__dict__[method]
            return getattr(found, "__func__", found)
    return None


def _body_lines(source):
    """The stripped lines after the `def` line (a signature may span lines: up to the line ending in ':')."""
    lines = source.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip().startswith("def ") or line.lstrip().startswith("async def "):
            j = i
            while j < len(lines) and not lines[j].split("#")[0].rstrip().endswith(":"):
                j += 1
            return [line.strip() for line in lines[j + 1:]]
    return []


def _opening_comments(source):
    """The comment lines before the first statement of the body (a docstring is skipped)."""
    comments = []
    in_docstring = False
    for line in _body_lines(source):
        if in_docstring:
            in_docstring = not (line.endswith('"""') or line.endswith("'''"))
            continue
        if line.startswith(('"""', "'''")):
            closed = len(line) > 3 and line.endswith(line[:3])
            in_docstring = not closed
            continue
        if line.startswith("#"):
            comments.append(line.lstrip("#").strip())
        elif line:
            break
    return comments


def _first_comment(source):
    for line in _body_lines(source):
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return ""


def _docstring_line(op_class):
    doc = op_class.__dict__.get("__doc__")
    return doc.strip().splitlines()[0] if doc and doc.strip() else ""


def _before_implication(formula):
    """"y = x W^T + b" out of "y = x W^T + b  =>  dx = g W, ...": what the op computes, where stated."""
    if "=>" not in formula:
        return ""
    left = formula.split("=>")[0].strip()
    return left if "=" in left and not left.startswith("d") else ""


def short_path(path):
    """A path as a reader finds it: from the folder holding the package (minigrad/kernels/softmax.py)."""
    path = os.path.abspath(path)
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    if not relative.startswith(".."):
        return relative
    parts = path.split(os.sep)
    for package in ("minigrad", "minigrad_models"):
        if package in parts:
            return "/".join(parts[len(parts) - 1 - parts[::-1].index(package):])
    return path
