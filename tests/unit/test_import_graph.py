"""The import graph of ``playground`` and ``backends``: no circles, and a stdlib-only core.

The graph is built from the source with ``ast``, never by importing: every
``import`` and ``from ... import`` counts, at module level, inside functions
(lazy imports) and under ``if TYPE_CHECKING:`` alike, because a type-only
import still ties the two modules together and a lazy one still runs. So
does ``importlib.import_module("a.b")`` (or ``__import__``) with a literal
name; a name computed at run time cannot be seen, and the tree has none.

How an import becomes an edge:

- ``import a.b.c`` is an edge to ``a.b.c``.
- ``from a.b import name`` is an edge to ``a.b.name`` when that is a module of
  the tree, else to the package ``a.b`` itself (its ``__init__``), whose
  namespace the name comes from. Relative imports are resolved first.
- The parent packages Python runs on the way (``a`` and ``a.b`` for
  ``import a.b.c``) are **not** edges: the importer needs only the submodule,
  and a package's ``__init__`` re-exporting its submodules would otherwise
  close a "circle" with every module below it.
- A module that explicitly imports its own package (``from a.b import X``
  inside ``a/b/x.py``) **is** an edge to ``a.b``; when ``a/b/__init__.py``
  imports ``a.b.x`` back, that is a real circle (``X`` may not exist yet while
  ``x`` runs) and the test fails on it.

Only modules of the tree are nodes; imports of anything else are not edges.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("playground", "backends")
CORE = "playground.core"


@dataclass(frozen=True, slots=True)
class Import:
    """One import statement's target as written (absolute), with where it is."""

    source: str
    target: str
    names: tuple[str, ...]  # for ``from target import names``; empty for ``import target``
    line: int


def module_files() -> dict[str, Path]:
    """Every module of the tree by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports_of(name: str, path: Path) -> Iterator[Import]:
    """Every import statement in the module, wherever it sits, as absolute targets."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(name, alias.name, (), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                if node.level > 1:
                    base = base[: -(node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            yield Import(name, target, tuple(alias.name for alias in node.names), node.lineno)
        elif isinstance(node, ast.Call) and _is_import_call(node.func) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield Import(name, first.value, (), node.lineno)


def _is_import_call(func: ast.expr) -> bool:
    """``importlib.import_module``, a bare ``import_module`` or ``__import__``."""
    if isinstance(func, ast.Attribute):
        return func.attr == "import_module"
    return isinstance(func, ast.Name) and func.id in {"import_module", "__import__"}


def edges_of(imp: Import, modules: dict[str, Path]) -> Iterator[str]:
    """The tree modules one import statement depends on (see the module docstring)."""
    if not imp.names:
        if imp.target in modules:
            yield imp.target
        return
    for name in imp.names:
        submodule = f"{imp.target}.{name}"
        if submodule in modules:
            yield submodule
        elif imp.target in modules:
            yield imp.target


def import_graph() -> tuple[dict[str, set[str]], dict[tuple[str, str], int]]:
    """Module -> modules it imports, and the first line of each edge."""
    modules = module_files()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    lines: dict[tuple[str, str], int] = {}
    for name, path in modules.items():
        for imp in imports_of(name, path):
            for target in edges_of(imp, modules):
                graph[name].add(target)
                lines.setdefault((name, target), imp.line)
    return graph, lines


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def describe(component: list[str], graph: dict[str, set[str]], lines: dict[tuple[str, str], int]) -> str:
    """A circle's modules and the imports that tie them, ``a:line -> b``."""
    members = set(component)
    ties = [
        f"    {source}:{lines[source, target]} -> {target}"
        for source in component
        for target in sorted(graph[source] & members)
    ]
    return f"  {len(component)} modules: {', '.join(component)}\n" + "\n".join(ties)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    return [c for c in strongly_connected(graph) if len(c) > 1 or c[0] in graph[c[0]]]


def test_the_graph_sees_every_kind_of_import() -> None:
    """Guard the checker: lazy, type-only, relative and submodule imports are all edges."""
    graph, _ = import_graph()
    assert "playground.core.serve" in graph
    assert "backends.wasm.backend" in graph["backends.wasm"]  # package __init__ -> re-exported submodule
    assert "playground.core" in graph["playground.assembly"]  # `from playground.core import ...`
    assert "backends.wasm" in graph["playground.assembly"]  # imported inside a function
    assert "playground.core.result" in graph["playground.core.errors"]  # under `if TYPE_CHECKING:`
    assert "playground.serve" in graph["playground.app.service_controller"]  # importlib.import_module("...")


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d"}, "e": {"a"}}
    assert cycles(graph) == [["a", "b", "c"], ["d"]]


def test_no_import_cycles() -> None:
    graph, lines = import_graph()
    found = cycles(graph)
    report = "\n".join(describe(c, graph, lines) for c in found)
    assert not found, f"{len(found)} import circle(s):\n{report}"


def test_core_imports_only_the_stdlib_and_itself() -> None:
    """``playground.core`` stays stdlib-only, at import and lazily (e.g. when serving)."""
    modules = module_files()
    offenders = []
    for name, path in modules.items():
        if name != CORE and not name.startswith(CORE + "."):
            continue
        for imp in imports_of(name, path):
            top = imp.target.partition(".")[0]
            inside = imp.target == CORE or imp.target.startswith(CORE + ".")
            if not inside and top not in sys.stdlib_module_names:
                offenders.append(f"{name}:{imp.line} imports {imp.target}")
    assert not offenders, "the core imports outside the stdlib and itself:\n" + "\n".join(offenders)
