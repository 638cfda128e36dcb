"""Which of the project's tests reach a node (``review.run_tests: affected``).

Test files follow pytest's conventions: ``test_*.py`` or ``*_test.py``, under
``[tool.pytest.ini_options] testpaths`` of ``pyproject.toml`` (or
``[pytest] testpaths`` of ``pytest.ini``) when the project sets it, anywhere
otherwise. A test reaches a node when:

- it calls the node, directly or through callers of callers (the ``calls``
  edges of the code graph, :data:`MAX_DEPTH` steps up); or
- its source names the node (``\\bquote\\b``): a reference the graph cannot
  resolve (a fixture's parameter, ``getattr``, a string) still counts; or it
  names one of those callers and its file imports the caller's module (a
  method called on an instance, ``cart.checkout()``, has no edge).

A test is a ``test*`` function, at the top of its file or in a ``Test*``
class: its pytest id is ``path::Class::test_name``. When what reaches the node
in a test file is something else (a fixture, a helper), the whole file runs.
"""

from __future__ import annotations

import configparser
import logging
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from remora_core.globs import name_matches
from remora_core.model import NodeKind

if TYPE_CHECKING:
    from collections.abc import Callable

    from remora_core.index.codegraph import CodeGraph
    from remora_core.model import CodeNode

log = logging.getLogger(__name__)

MAX_DEPTH = 4
"""How many steps of callers lead from a test to the node."""
MAX_TEST_FILES = 2_000
"""Test files read for names (a bigger project is searched in its first ones)."""


@dataclass
class Selection:
    """The tests of one node."""

    ids: list[str] = field(default_factory=list)
    """pytest node ids (``tests/test_x.py::test_y``) or whole files."""
    test_files: int = 0
    """Test files in the project (0: the project has no tests)."""


def test_paths(root: Path) -> list[str]:
    """The project's ``testpaths`` (relative, ``/``-separated); [] if unset."""
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
        options = data.get("tool", {}).get("pytest", {}).get("ini_options", {})
        paths = options.get("testpaths")
        if isinstance(paths, str):
            paths = paths.split()
        if isinstance(paths, list) and paths:
            return [str(p).strip("/") for p in paths if isinstance(p, str)]
    except (OSError, ValueError, UnicodeDecodeError):
        pass
    parser = configparser.ConfigParser()
    try:
        parser.read(root / "pytest.ini", encoding="utf-8")
        return parser.get("pytest", "testpaths", fallback="").split()
    except (configparser.Error, UnicodeDecodeError):
        return []


def is_test_file(path: str, paths: list[str]) -> bool:
    """Whether ``path`` (relative) is a test file by pytest's conventions."""
    name = path.rsplit("/", 1)[-1]
    if not (name_matches(name, "test_*.py") or name_matches(name, "*_test.py")):
        return False
    return not paths or any(
        path == p or path.startswith(p.rstrip("/") + "/") for p in paths
    )


def _test_of(graph: CodeGraph, node: CodeNode) -> str | None:
    """The pytest id of the test ``node`` is (or is in); None if it is in none."""
    chain: list[CodeNode] = []
    current: CodeNode | None = node
    while current is not None and current.kind is not NodeKind.FILE:
        chain.append(current)
        current = graph.get(current.parent_id) if current.parent_id else None
    chain.reverse()  # outermost first
    if not chain:
        return None
    first = chain[0]
    if first.kind is NodeKind.FUNCTION and first.name.startswith("test"):
        return f"{node.file_path}::{first.name}"
    if (
        first.kind is NodeKind.CLASS
        and first.name.startswith("Test")
        and len(chain) > 1
        and chain[1].name.startswith("test")
    ):
        return f"{node.file_path}::{first.name}::{chain[1].name}"
    return None


def select_tests(
    graph: CodeGraph,
    node: CodeNode,
    paths: list[str],
    read: Callable[[str], bytes | None],
) -> Selection:
    """The tests that reach ``node``; ``read`` gives a file's current bytes."""
    files = [p for p in graph.paths() if is_test_file(p, paths)]
    selection = Selection(test_files=len(files))
    if not files:
        return selection
    found: dict[str, None] = {}
    reaching = _reaching(graph, node)
    for caller in reaching:
        if caller.file_path in files:
            found[_test_of(graph, caller) or caller.file_path] = None
    # Names the graph cannot follow (``cart.checkout()`` on an instance): a
    # test naming the node, or naming a caller of it in a file that imports
    # the caller's module.
    wanted = {path: {node.name} for path in files}
    for caller in reaching:
        if caller.file_path not in files and caller.kind is not NodeKind.FILE:
            for path in graph.importers(caller.file_path):
                wanted.get(path, set()).add(caller.name)
    for path in files[:MAX_TEST_FILES]:
        _search(graph, path, wanted[path], read, found)
    # A whole file covers its own tests.
    whole = {i for i in found if "::" not in i}
    selection.ids = [i for i in found if i.split("::")[0] not in whole or "::" not in i]
    return selection


def _search(
    graph: CodeGraph,
    path: str,
    names: set[str],
    read: Callable[[str], bytes | None],
    found: dict[str, None],
) -> None:
    """Add the tests of ``path`` whose source names one of ``names``."""
    alternatives = "|".join(re.escape(n) for n in sorted(names))
    word = re.compile(rf"\b(?:{alternatives})\b".encode())
    text = read(path)
    if text is None or not word.search(text):  # one read per file
        return
    for test in graph.file_nodes(path):
        test_id = _test_of(graph, test)
        if (
            test_id is not None
            and test_id.endswith("::" + test.name)  # the test, not inside it
            and test_id not in found
            and word.search(text[test.span.start_byte : test.span.end_byte])
        ):
            found[test_id] = None


def _reaching(graph: CodeGraph, node: CodeNode) -> list[CodeNode]:
    """``node``'s callers, their callers… up to :data:`MAX_DEPTH` steps."""
    seen = {node.id}
    frontier = [node]
    reached: list[CodeNode] = []
    for _ in range(MAX_DEPTH):
        upward: list[CodeNode] = []
        for current in frontier:
            for caller in graph.callers(current.id):
                if caller.id not in seen:
                    seen.add(caller.id)
                    upward.append(caller)
        reached.extend(upward)
        frontier = upward
    return reached
