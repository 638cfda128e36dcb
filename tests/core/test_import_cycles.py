"""No import cycles among the modules of ``remora_core`` nor of ``remora_lsp``.

A cycle means two modules that cannot be understood (or tested, or moved)
one without the other; the issue that introduced this test found ``project``,
``disk`` and ``agents/runtime`` in one, and 13 modules of ``remora_lsp`` in
another.

What counts as an import (decided here, for the whole code base):

- every ``import`` / ``from … import`` executed when the module or one of its
  functions runs — module level *and* inside functions (a function-local
  import is a cycle postponed, not removed);
- a module depends on the modules whose names it uses: ``import a.b`` and
  ``from a.b import name`` depend on ``a.b``; ``from a import b`` on ``a.b``
  when ``b`` is a submodule, else on ``a`` (its ``__init__``). Python runs the
  parent packages' ``__init__`` first, but a package re-exporting its
  submodules is their facade, not a dependency of theirs: that alone is not
  counted;
- imports under ``if TYPE_CHECKING:`` count too: they never run, but a type
  named in a signature is a module a reader (and a type checker) must follow,
  and "A holds a B, B's methods take an A" is the circle this test is about.
  A part that needs to name its owner names a protocol of what it uses instead
  (``parts_port.PartsPort``, ``swarm.turns.Swarm``, ``trust.Server``).

Before this test (issue 13), under these rules: ``remora_core`` had 2 cycles
covering 7 of its 76 modules (``project``/``disk``/``following``/
``agents.runtime``; ``swarm.engine``/``runner``/``turns``), ``remora_lsp`` one
cycle of 15 of its 22 modules (every feature and ``server``); runtime imports
alone formed none.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = {
    "remora_core": REPO / "core" / "remora_core",
    "remora_lsp": REPO / "remora_lsp",
    "remora_cli": REPO / "core" / "remora_cli",
}


def module_names(package: str, root: Path) -> dict[str, Path]:
    """Dotted module name → file, for every module of ``package``."""
    found = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join([package, *parts])] = path
    return found


def imports(module: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``module`` imports at run time."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names} & known
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, is_package, node)
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    found.add(f"{base}.{alias.name}")
                elif base in known:
                    found.add(base)
    found.discard(module)
    return found


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, node.module] if node.module else parts)


def module_graph(package: str) -> dict[str, set[str]]:
    """Module → the modules of the same package it imports."""
    modules = module_names(package, PACKAGES[package])
    known = set(modules)
    return {m: imports(m, p, known) for m, p in modules.items()}


def room_graph(package: str) -> dict[str, set[str]]:
    """Room → the rooms it imports, where a room is what sits directly in the
    package: a subpackage (with everything below it) or a loose module. The
    package's own ``__init__`` is its facade and belongs to no room.
    """

    def room(module: str) -> str | None:
        parts = module.split(".")
        return parts[1] if len(parts) > 1 else None

    rooms: dict[str, set[str]] = {}
    for module, targets in module_graph(package).items():
        source = room(module)
        if source is None:
            continue
        found = rooms.setdefault(source, set())
        found |= {r for t in targets if (r := room(t)) not in (None, source)}
    return rooms


def cycles(package: str) -> list[list[str]]:
    """Modules of ``package`` that import each other, in circles."""
    return strongly_connected(module_graph(package))


def room_cycles(package: str) -> list[list[str]]:
    """Rooms of ``package`` (subpackages, loose modules) in import circles."""
    return strongly_connected(room_graph(package))


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
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

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_cycles(package):
    found = cycles(package)
    described = "\n".join(" ↔ ".join(component) for component in found)
    assert not found, f"import cycles in {package}:\n{described}"


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_cycles_between_rooms(package):
    """A room (``index/``, ``review/``, ``agents/``, a loose module) is read
    and moved whole: two rooms that import each other are one room in two
    folders (issue 24 found ``agents/`` ↔ ``review`` ↔ ``verification/`` ↔
    ``workspace``, ``events/`` ↔ ``store/`` and ``front/`` ↔ ``app``).
    """
    found = room_cycles(package)
    described = "\n".join(" ↔ ".join(component) for component in found)
    assert not found, f"import cycles between the rooms of {package}:\n{described}"


def test_the_check_sees_a_cycle(tmp_path, monkeypatch):
    """The detector itself: two modules importing each other are reported,
    a function-local import and a TYPE_CHECKING one included.
    """
    package = tmp_path / "demo"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from demo import b\n")
    (package / "b.py").write_text("def f():\n    from demo.a import x\n")
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from demo import d\n"
    )
    (package / "d.py").write_text("import demo.c\n")
    (package / "e.py").write_text("from demo.a import x\n")  # no cycle
    monkeypatch.setitem(PACKAGES, "demo", package)
    assert cycles("demo") == [["demo.a", "demo.b"], ["demo.c", "demo.d"]]


def test_the_check_sees_a_cycle_between_rooms(tmp_path, monkeypatch):
    """Rooms: ``low/`` imports ``high.py`` and ``high.py`` imports ``low/``
    through different modules — no module circle, one room circle; a module
    inside ``low/`` importing its sibling is no room circle.
    """
    package = tmp_path / "rooms"
    (package / "low").mkdir(parents=True)
    (package / "__init__.py").write_text("from rooms import high\n")
    (package / "low" / "__init__.py").write_text("")
    (package / "low" / "a.py").write_text("from rooms.high import x\n")
    (package / "low" / "b.py").write_text("from rooms.low import a\n")
    (package / "low" / "c.py").write_text("")
    (package / "high.py").write_text("from rooms.low import c\n")
    (package / "top.py").write_text("from rooms.low import b\n")
    monkeypatch.setitem(PACKAGES, "rooms", package)
    assert cycles("rooms") == []
    assert room_cycles("rooms") == [["high", "low"]]
