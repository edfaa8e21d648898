"""Run a script written for PyTorch on minigrad, unchanged:

    minigrad run train.py --config config.json            # as `python train.py --config config.json`
    python -m minigrad run train.py --config config.json  # the same, without the console script
    minigrad run --explore 3 train.py                     # and write the page of its 3rd backward()

The script runs as `python SCRIPT ARGS` runs it: `__name__ == "__main__"`, `sys.argv` is
[SCRIPT, *ARGS], `sys.path[0]` is the script's folder (so its own modules import), the working
folder stays where it was (so its relative paths mean what they meant), and its exit status is the
run's. The one difference: `torch` names minigrad before the script's first line, so `import torch`,
`import torch.nn as nn` and `from torch.utils.data import DataLoader` give minigrad's own modules
(torch_compat/import_alias.py).

Where the script reaches something minigrad does not have (a torch name it lacks, a module it does
not provide, a NotImplementedError from minigrad), the run ends with one line on stderr naming the
missing thing, the line of the script that asked for it, and the page of differences; `--traceback`
shows Python's whole traceback instead. Any other error prints its traceback, as Python does.

`--explore STEP` records the forward pass that leads to the script's STEP-th `backward()` call (the
model the script trains: its modules named by their attribute paths, as `named_modules()` gives
them), runs that backward through `viz.explore` (a real backward: the gradients land in `.grad` as
usual), writes the page, says where on stderr, and lets the script go on.
"""
import argparse
import os
import re
import sys
import traceback
import types
from pathlib import Path

import minigrad
from .. import function as _function
from ..tensor import Tensor
from ..torch_compat.import_alias import RELOCATED
from ..viz.explore import explore
from ..viz.recording import Recorder

PROG = "minigrad run"
_PACKAGE_DIR = Path(minigrad.__file__).resolve().parent
_DIFFERENCES = _PACKAGE_DIR.parent / "docs" / "pytorch_surface.md"


def differences_page():
    """Where the page of differences from PyTorch is: the file itself in a source checkout."""
    return str(_DIFFERENCES) if _DIFFERENCES.exists() else "docs/pytorch_surface.md in minigrad's repository"


def add_arguments(parser):
    """The options of `minigrad run` (and of `python -m minigrad run`); they come before SCRIPT, and
    everything after SCRIPT is the script's own."""
    parser.add_argument("--explore", type=_positive_int, metavar="STEP",
                        help="write the explore page of the script's STEP-th backward() call (1 is the first)")
    parser.add_argument("--explore-out", metavar="PAGE",
                        help="where the page goes (default runs/explore-SCRIPT-stepSTEP.html)")
    parser.add_argument("--traceback", action="store_true",
                        help="on something minigrad lacks, show the whole traceback, not one line")
    parser.add_argument("script", help="the Python file to run, as `python SCRIPT ARGS` would")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments")
    return parser


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer (1 is the first backward), got {value}")
    return value


def main(argv=None):
    """`minigrad run [--explore STEP] [--traceback] SCRIPT [ARGS...]`; returns the exit status."""
    parser = add_arguments(argparse.ArgumentParser(
        prog="minigrad run", description="Run a PyTorch script with `torch` bound to minigrad."))
    return run_from_args(parser.parse_args(argv))


def run_from_args(args):
    return run_script(args.script, args.args, explore_step=args.explore, explore_out=args.explore_out,
                      full_traceback=args.traceback)


def run_script(script, args=(), *, explore_step=None, explore_out=None, full_traceback=False):
    """Run `script` as the __main__ module with `torch` bound to minigrad; returns the exit status
    (a SystemExit from the script propagates, as from any Python program). What it changes in this
    process (sys.argv, sys.path[0], the modules `__main__` and `torch`) is put back when it returns."""
    if not os.path.isfile(script):
        what = "is a folder" if os.path.isdir(script) else "no such file"
        print(f"{PROG}: cannot run {script!r}: {what}", file=sys.stderr)
        return 2  # what python says of a script it cannot open
    path = os.path.abspath(script)  # __main__.__file__ is absolute, as python makes it
    watch = _ExploreAt(explore_step, explore_out or _default_page(script, explore_step), script) \
        if explore_step else None
    saved_argv, saved_path = sys.argv, sys.path[:1]
    saved_modules = {n: m for n, m in sys.modules.items() if n in ("__main__", "torch") or n.startswith("torch.")}
    sys.argv = [script, *args]
    sys.path[:1] = [os.path.dirname(os.path.realpath(script))]  # python puts the script's own folder first
    for name in saved_modules:
        if name.startswith("torch."):
            del sys.modules[name]  # a PyTorch imported before in this process steps aside
    sys.modules["torch"] = minigrad  # `import torch.X` now finds minigrad.X (import_alias's finder)
    main = sys.modules["__main__"] = types.ModuleType("__main__")
    main.__file__ = path
    try:
        with open(path, "rb") as source:
            code = compile(source.read(), path, "exec")
        if watch:
            watch.start()
        exec(code, main.__dict__)
    except Exception as error:  # noqa: BLE001  (SystemExit and KeyboardInterrupt pass on, as in python)
        lack = None if full_traceback else missing(error)
        if lack is None:
            _print_traceback(error, path)
        else:
            print(f"{PROG}: {lack}", file=sys.stderr)
        return 1
    finally:
        if watch:
            watch.stop()
        sys.argv, sys.path[:1] = saved_argv, saved_path
        for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
            del sys.modules[name]
        sys.modules.update(saved_modules)
    return 0


def _default_page(script, step):
    return os.path.join("runs", f"explore-{Path(script).stem}-step{step}.html")


def _print_traceback(error, path):
    """Python's traceback from the script's first frame on (the runner's own frames left out)."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != path:
        tb = tb.tb_next
    traceback.print_exception(type(error), error, tb or error.__traceback__)


# ---- what minigrad lacks, said in one line -----------------------------------------------------
def missing(error):
    """The one-line message for an error that means "minigrad does not have this" (None for others):
    the missing name as PyTorch spells it, where the script asked for it, and the page of differences."""
    what = _what_is_missing(error)
    if what is None:
        return None
    where = _user_line(error.__traceback__)
    return f"{where}: {what}; what minigrad has and lacks of PyTorch: {differences_page()} " \
           f"(--traceback shows the whole traceback)"


def _what_is_missing(error):
    if isinstance(error, AttributeError) and error.name is not None and _is_minigrads(error.obj):
        name = f"{_torch_name(error.obj)}.{error.name}"
        if isinstance(error.obj, minigrad.nn.Module):  # a layer: the script may name a part it does not hold
            return f"{name}: this {type(error.obj).__name__} has no {error.name!r}; either minigrad lacks it or " \
                   f"the script names something the module does not hold"
        own = str(error)  # minigrad's own refusal says why (nn.SyncBatchNorm: distributed training is a non-goal)
        because = "" if own.startswith(("module ", "type object ", f"'{type(error.obj).__name__}' object")) \
            else f" ({own})"
        return f"{name} is not in minigrad{because}"
    if isinstance(error, ModuleNotFoundError) and error.name:
        name = _as_torch(error.name)
        if name.split(".")[0] == "torch":
            return f"the module {name} is not in minigrad"
        if name.startswith("torch"):  # torchvision, torchaudio, ...: built on PyTorch, not part of it
            return f"No module named {name!r}: minigrad stands in for torch itself, not for the packages built on it"
        return None
    if isinstance(error, ImportError):
        found = re.match(r"cannot import name '(\w+)' from '([\w.]+)'", str(error))
        if found and found.group(2).split(".")[0] in ("minigrad", "torch"):
            return f"{_as_torch(found.group(2))}.{found.group(1)} is not in minigrad"
        return None
    if isinstance(error, NotImplementedError) and _raised_in_minigrad(error.__traceback__):
        return f"not in minigrad: {error}"
    return None


def _is_minigrads(obj):
    """A minigrad module, class or object (the script's own subclasses are the script's)."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__.split(".")[0] == "minigrad"
    cls = obj if isinstance(obj, type) else type(obj)
    return cls.__module__.split(".")[0] == "minigrad"


def _torch_name(obj):
    """How the script spelled the object: torch.nn.functional, torch.Tensor, torch.nn.Linear."""
    if isinstance(obj, types.ModuleType):
        return _as_torch(obj.__name__)
    cls = obj if isinstance(obj, type) else type(obj)
    if issubclass(cls, Tensor):
        return "torch.Tensor"
    for public in ("nn", "optim", "utils.data"):
        space = minigrad
        for part in public.split("."):
            space = getattr(space, part)
        if getattr(space, cls.__name__, None) is cls:
            return f"torch.{public}.{cls.__name__}"
    return f"torch.{cls.__name__}" if getattr(minigrad, cls.__name__, None) is cls else cls.__name__


def _as_torch(name):
    """minigrad.torch_compat.cuda.amp -> torch.cuda.amp; minigrad.nn -> torch.nn."""
    head, _, rest = name.partition(".")
    if head not in ("minigrad", "torch"):
        return name
    for path, home in RELOCATED.items():
        if rest == f"torch_compat.{home}" or rest.startswith(f"torch_compat.{home}."):
            rest = path + rest[len(f"torch_compat.{home}"):]
            break
    return "torch" + (f".{rest}" if rest else "")


def _frames(tb):
    while tb is not None:
        yield tb.tb_frame.f_code.co_filename, tb.tb_lineno
        tb = tb.tb_next


def _outside_minigrad(filename):
    return not filename.startswith("<") and not os.path.abspath(filename).startswith(str(_PACKAGE_DIR) + os.sep)


def _user_line(tb):
    """FILE:LINE of the innermost frame in the script's own code (its modules included)."""
    frames = [(f, n) for f, n in _frames(tb) if _outside_minigrad(f) ]
    if not frames:
        return "the script"
    filename, line = frames[-1]
    shown = os.path.relpath(filename) if not os.path.relpath(filename).startswith("..") else filename
    return f"{shown}, line {line}"


def _raised_in_minigrad(tb):
    frames = list(_frames(tb))
    return bool(frames) and not _outside_minigrad(frames[-1][0])


# ---- --explore STEP ---------------------------------------------------------------------------------
class _ModelFindingRecorder(Recorder):
    """viz.record_modules' recorder, for a model it is not given: the first module with parameters that
    the script calls from outside any module is the model, named as its named_modules() name it."""

    def __init__(self):
        super().__init__(None, keep_inputs=True, keep_lines=True)
        self.model = None

    def enter(self, module):
        if self.model is None and not self.stack and id(module) not in self.names and \
                next(iter(module.parameters()), None) is not None:
            self.model = module
            self.names.update({id(m): name for name, m in module.named_modules()})
        super().enter(module)


class _ExploreAt:
    """Counts the script's backward() calls; records the forward pass before the STEP-th and runs that
    backward through viz.explore, writing the page."""

    def __init__(self, step, page, script):
        self.step, self.page, self.script = step, page, script
        self.calls = 0
        self.recorder = None
        self.written = False

    def start(self):
        self._original = Tensor.backward
        watch = self

        def backward(tensor, gradient=None, retain_graph=None, create_graph=False, inputs=None):
            return watch.backward(tensor, gradient, retain_graph, create_graph, inputs)

        backward.__doc__ = self._original.__doc__
        Tensor.backward = backward
        if self.step == 1:
            self._record()

    def stop(self):
        self._stop_recording()
        Tensor.backward = self._original
        if not self.written:
            print(f"{PROG}: --explore {self.step}: the script called backward() {self.calls} time(s); "
                  "no page written", file=sys.stderr)

    def _record(self):
        self.recorder = _ModelFindingRecorder()
        self._previous = _function._recorder
        _function._recorder = self.recorder

    def _stop_recording(self):
        if self.recorder is not None and _function._recorder is self.recorder:
            _function._recorder = self._previous

    def backward(self, tensor, gradient, retain_graph, create_graph, inputs):
        self.calls += 1
        if self.calls != self.step:
            done = self._original(tensor, gradient, retain_graph, create_graph, inputs)
            if self.calls == self.step - 1:
                self._record()  # the next forward pass is the one the page shows
            return done
        self._stop_recording()
        plain = gradient is None and not create_graph and inputs is None and tensor.numel() == 1
        if not plain or tensor.grad_fn is None:
            why = "it has gradient=, create_graph= or inputs=" if not plain else "its tensor has no graph"
            print(f"{PROG}: --explore {self.step}: this backward() cannot be explored ({why}); it runs as usual, "
                  "and no page is written", file=sys.stderr)
            self.written = True  # said once; the run goes on
            return self._original(tensor, gradient, retain_graph, create_graph, inputs)
        os.makedirs(os.path.dirname(os.path.abspath(self.page)), exist_ok=True)
        model = self.recorder.model
        title = f"{os.path.basename(self.script)}: backward() call {self.step}, loss {tensor.item():.4g}"
        report = explore(tensor, self.page, model=model, title=title, retain_graph=bool(retain_graph))
        self.written = True
        named = f" of {type(model).__name__}" if model is not None else ""
        print(f"{PROG}: wrote the backward pass{named} at backward() call {self.step}: {report}\n"
              f"{PROG}: open it in a browser (it needs no network): file://{os.path.abspath(self.page)}",
              file=sys.stderr, flush=True)
