"""Judging a multi-module task by running what landed in its project's files.

The judges of set ``c`` (``bench/agent_task_set_c.py``) never trust what a
proposal says it did: they read the files on disk after the accepted edit was
saved, import the modules in a fresh interpreter (so a broken import or a
caller left calling a name that is gone shows), run the tests a task wrote with
pytest, and break the function under test in a copy of the project to see the
new tests fail (a test that passes whatever the function does tests nothing).

Each helper raises ``AssertionError`` saying what is wrong; that sentence is
the benchmark's "why not".
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

RUN_TIMEOUT_S = 60.0
"""A judge's interpreter or pytest run (generous: the machine is shared)."""


def _last_line(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def _run(root: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(root)}
    try:
        return subprocess.run(
            [sys.executable, *args],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as error:
        raise AssertionError(f"took longer than {RUN_TIMEOUT_S:g} s") from error


def behaves(root: Path, code: str) -> None:
    """Run ``code`` (asserts) in a fresh interpreter in the project."""
    done = _run(root, ["-c", code])
    if done.returncode != 0:
        raise AssertionError(_last_line(done.stderr) or "the check failed")


def module(root: Path, path: str) -> ast.Module:
    """The parsed module ``path`` of the project."""
    file = root / path
    assert file.exists(), f"{path} is missing"
    try:
        return ast.parse(file.read_text(encoding="utf-8"))
    except SyntaxError as error:
        raise AssertionError(f"{path} does not parse: {error}") from error


def definition(tree: ast.Module, qualified: str) -> ast.AST:
    """The function or class called ``qualified`` (dotted) in a module."""
    scope: list[ast.stmt] = tree.body
    found: ast.AST | None = None
    for part in qualified.split("."):
        found = next(
            (
                s
                for s in scope
                if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and s.name == part
            ),
            None,
        )
        assert found is not None, f"{qualified} not found"
        scope = found.body  # type: ignore[attr-defined]
    assert found is not None
    return found


def calls(tree: ast.AST, name: str) -> list[ast.Call]:
    """Calls of ``name`` (``name(...)`` or ``x.name(...)``) under ``tree``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else None
            )
            if called == name:
                found.append(node)
    return found


def names(tree: ast.AST) -> set[str]:
    """Every identifier used or imported under ``tree`` (names, attributes,
    imported names).
    """
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.alias):
            found.add(node.name.rsplit(".", 1)[-1])
            if node.asname:
                found.add(node.asname)
    return found


def new_test_files(root: Path, before: dict[str, str]) -> list[str]:
    """Test files (``test_*.py`` / ``*_test.py``) that were not in the project."""
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative.startswith(".") or "/." in relative or relative in before:
            continue
        if path.name.startswith("test_") or path.name.endswith("_test.py"):
            found.append(relative)
    assert found, "no new test file"
    return found


def pytest(root: Path, files: list[str]) -> tuple[bool, str]:
    """Run pytest on ``files`` in ``root``: (passed, its last line)."""
    done = _run(root, ["-m", "pytest", "-q", "-p", "no:cacheprovider", *files])
    passed = done.returncode == 0
    return passed, _last_line(done.stdout) or _last_line(done.stderr)


def tests_pass(root: Path, files: list[str]) -> None:
    """The tests in ``files`` run and pass."""
    passed, last = pytest(root, files)
    assert passed, f"the new tests fail: {last}"
    assert " passed" in last, f"no test ran: {last}"


def tests_catch(
    root: Path, files: list[str], path: str, qualified: str, broken: str
) -> None:
    """The tests in ``files`` fail once ``qualified`` in ``path`` is replaced
    by ``broken`` (in a copy of the project).
    """
    with tempfile.TemporaryDirectory(prefix="remora-bench-mutant-") as tmp:
        copy = Path(tmp) / "project"
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".remora", ".git"))
        file = copy / path
        text = file.read_text(encoding="utf-8")
        node = definition(ast.parse(text), qualified)
        lines = text.splitlines(keepends=True)
        first = min(
            [node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]  # type: ignore[attr-defined]
        )
        indent = lines[first - 1][
            : len(lines[first - 1]) - len(lines[first - 1].lstrip())
        ]
        replacement = "".join(
            indent + line if line.strip() else line
            for line in broken.splitlines(keepends=True)
        )
        lines[first - 1 : node.end_lineno] = [replacement]  # type: ignore[attr-defined]
        file.write_text("".join(lines), encoding="utf-8")
        passed, last = pytest(copy, files)
    assert not passed, f"the tests pass even with {qualified} broken: {last}"


def written_tests(
    root: Path, before: dict[str, str], path: str, qualified: str, broken: str
) -> list[str]:
    """The new tests exist, pass, and fail on a broken ``qualified``."""
    files = new_test_files(root, before)
    tests_pass(root, files)
    tests_catch(root, files, path, qualified, broken)
    return files
