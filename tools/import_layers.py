"""The shape of minigrad's core, read from its source: import cycles, imports inside functions, entries.

    python tools/import_layers.py            # a report; exit status 1 if a limit is broken

Every `import` and `from ... import` inside minigrad/ is read with the ast module, at module level and
inside functions alike (an import inside a function still ties the two modules together). A cycle is
a strongly connected set of two or more modules in that graph, where importing a package counts as
importing its __init__. tests/test_layout.py asserts the limits of the textbook-core issue: no cycle,
at most 5 intra-package imports inside functions in tensor, function, engine, ops and autograd, at most
22 top-level entries in minigrad/ (20 for the layers, __main__.py: the command-line door, and views.py:
PyTorch's view and version semantics, out of tensor.py), no
`backward_differentiable`, and one Function base class.
"""
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "minigrad"
CORE = ("minigrad.tensor", "minigrad.function", "minigrad.engine", "minigrad.ops", "minigrad.autograd")


def module_name(path):
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules():
    return {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _resolve(name, level, current, is_package):
    if level == 0:
        return name
    base = current.split(".") if is_package else current.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def imports(known):
    """(importer, imported, inside a function?) for every import of a minigrad module."""
    edges = []
    for name, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        is_package = path.name == "__init__.py"
        parents = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                parents[child] = node
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(node.module or "", node.level, name, is_package)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
            else:
                continue
            inside, up = False, parents.get(node)
            while up is not None:
                if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    inside = True
                up = parents.get(up)
            for target in targets:
                while target and target not in known:
                    target = target.rpartition(".")[0]
                if target.startswith("minigrad") and target != name:
                    edges.append((name, target, inside))
    return edges


def cycles(known, edges):
    """Strongly connected components of two or more modules (Tarjan's algorithm, iterative)."""
    graph = {n: sorted({b for a, b, _ in edges if a == n}) for n in known}
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def report():
    known = modules()
    edges = imports(known)
    circles = cycles(known, edges)
    lazy = sorted((a, b) for a, b, inside in edges if inside and a.startswith(CORE))  # each occurrence
    entries = sorted(p.name for p in ROOT.iterdir() if not p.name.startswith((".", "__pycache__")))
    second_formulas = sorted(str(p.relative_to(ROOT.parent)) for p in ROOT.rglob("*.py")
                             if "def backward_differentiable" in p.read_text())
    function_bases = sorted(f"{module_name(p)}.Function" for p in ROOT.rglob("*.py")
                            if "\nclass Function:" in p.read_text() or "\nclass Function(object):" in p.read_text())
    return {"cycles": circles, "lazy_core_imports": lazy, "entries": entries,
            "backward_differentiable": second_formulas, "function_base_classes": function_bases}


def main():
    r = report()
    print(f"import cycles among minigrad's modules: {len(r['cycles'])}")
    for c in r["cycles"]:
        print("  " + " <-> ".join(c))
    print(f"intra-package imports inside functions in tensor/function/engine/ops/autograd: {len(r['lazy_core_imports'])}")
    for a, b in r["lazy_core_imports"]:
        print(f"  {a} -> {b}")
    print(f"top-level entries in minigrad/: {len(r['entries'])}: {' '.join(r['entries'])}")
    print(f"files defining backward_differentiable: {len(r['backward_differentiable'])}")
    print(f"Function base classes: {len(r['function_base_classes'])}: {' '.join(r['function_base_classes'])}")
    ok = (not r["cycles"] and len(r["lazy_core_imports"]) <= 5 and len(r["entries"]) <= 22
          and not r["backward_differentiable"] and len(r["function_base_classes"]) == 1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
