"""The engine knows nothing of LSP (CONVENTIONS §1).

``remora_core`` must never import pygls, lsprotocol or ``remora_lsp`` — not at
the top, not inside a function, not under ``TYPE_CHECKING`` — so it can be
driven by other front ends and tested without a protocol stack.
"""

from __future__ import annotations

import ast
from pathlib import Path

FORBIDDEN = ("pygls", "lsprotocol", "remora_lsp")
CORE = Path(__file__).resolve().parents[2] / "core" / "remora_core"


def imported_modules(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", None))
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def offending(path: Path) -> list[str]:
    return [
        f"{path.relative_to(CORE.parent)}:{line} imports {module}"
        for line, module in imported_modules(path)
        if module.split(".")[0] in FORBIDDEN
    ]


def test_the_engine_imports_nothing_from_the_lsp_side():
    sources = sorted(CORE.rglob("*.py"))
    assert len(sources) > 10  # we are looking at the real package
    problems = [problem for path in sources for problem in offending(path)]
    assert problems == []


def test_the_check_catches_every_kind_of_import(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\n"
        "import os, pygls.server\n"
        "if TYPE_CHECKING:\n"
        "    from lsprotocol import types\n"
        "def late():\n"
        "    from remora_lsp.server import RemoraLanguageServer\n"
        "    importlib.import_module('pygls')\n",
        encoding="utf-8",
    )
    modules = [m for _, m in imported_modules(sample)]
    assert [m for m in modules if m.split(".")[0] in FORBIDDEN] == [
        "pygls.server",
        "lsprotocol",
        "remora_lsp.server",
        "pygls",
    ]
