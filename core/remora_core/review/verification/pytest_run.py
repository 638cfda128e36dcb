"""One pytest run in a project copy: a subprocess with a time limit.

The run uses the project's own interpreter (``.venv/bin/python`` or
``venv/bin/python`` in the project, else the server's), starts in its own
process group with no stdin, and has its output captured (at most
:data:`MAX_OUTPUT` bytes kept) — never the server's stdout, which is the LSP
stream. At the time limit the whole group is killed (tests that start
processes of their own go too). Its environment is an allow-list
(``environment.py``); ``PYTHONPATH`` starts with the copy (and its ``src/``),
so the copy's code wins over an editable install of the person's tree.
Results are read from pytest's JUnit XML report, which pytest writes itself;
its exit code tells a failed test from a run that could not start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

MAX_OUTPUT = 1_000_000
"""Bytes of a run's output kept."""
EXIT_NO_TESTS = 5


@dataclass
class Failure:
    """One failing test (or a file that failed to import)."""

    test: str
    message: str
    """The assertion or error line pytest reported."""
    details: str = ""
    """The short traceback."""


@dataclass
class RunResult:
    """What one pytest run found."""

    ran: bool
    """pytest ran (even if tests failed); False: it could not start."""
    passed: int = 0
    failures: list[Failure] = field(default_factory=list)
    errors: list[Failure] = field(default_factory=list)
    """Collection errors: a test file that could not be imported."""
    timed_out: bool = False
    problem: str = ""
    """Why it could not run."""
    output: str = ""


def interpreter(root: Path) -> str:
    """The project's own Python, else the server's."""
    for candidate in (
        ".venv/bin/python",
        "venv/bin/python",
        ".venv/Scripts/python.exe",
    ):
        path = root / candidate
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return sys.executable


async def _read(stream: asyncio.StreamReader | None) -> bytes:
    kept = bytearray()
    if stream is None:
        return b""
    while chunk := await stream.read(65536):
        if len(kept) < MAX_OUTPUT:
            kept += chunk[: MAX_OUTPUT - len(kept)]
    return bytes(kept)


async def run_pytest(
    python: str, copy: Path, ids: list[str], timeout_s: float, env: dict[str, str]
) -> RunResult:
    """Run the tests ``ids`` in ``copy`` with the variables ``env``
    (``environment.py``: never the person's whole environment); what happened.
    """
    report = copy / ".remora-junit.xml"
    command = [
        python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--color=no",
        "--tb=short", "--continue-on-collection-errors",
        "-o", "junit_family=xunit2", f"--junitxml={report}", *ids,
    ]  # fmt: skip
    try:
        process = await asyncio.create_subprocess_exec(
            *command,
            cwd=copy,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # its own process group, killed as one
        )
    except OSError as error:
        return RunResult(False, problem=f"cannot start {python}: {error}")
    reading = asyncio.ensure_future(_read(process.stdout))
    try:
        async with asyncio.timeout(timeout_s):
            await process.wait()
    except TimeoutError:
        _kill_group(process.pid)
        await process.wait()
        output = await reading
        return RunResult(True, timed_out=True, output=output.decode("utf-8", "replace"))
    except asyncio.CancelledError:
        _kill_group(process.pid)
        raise
    output = (await reading).decode("utf-8", "replace")
    return _result(process.returncode or 0, report, output, python)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _result(code: int, report: Path, output: str, python: str) -> RunResult:
    if "No module named pytest" in output:
        return RunResult(False, problem=f"pytest is not installed for {python}")
    if code == EXIT_NO_TESTS:
        return RunResult(True, output=output)
    try:
        tree = ElementTree.parse(report)
    except (OSError, ElementTree.ParseError):
        last = output.strip().splitlines()[-1:] or [f"exit code {code}"]
        return RunResult(
            False, problem=f"pytest stopped: {last[0][:200]}", output=output
        )
    result = RunResult(True, output=output)
    for case in tree.iter("testcase"):
        test = _test_id(case)
        problem = case.find("failure")
        error = case.find("error")
        if problem is not None:
            result.failures.append(_failure(test, problem))
        elif error is not None:
            collecting = not case.get("classname") or (
                error.get("message") == "collection failure"
            )
            target = result.errors if collecting else result.failures
            target.append(_failure(test, error))
        elif case.find("skipped") is None:
            result.passed += 1
    return result


def _test_id(case: ElementTree.Element) -> str:
    """``tests/test_x.py::test_y`` (a file that failed to import: its path)."""
    module, name = case.get("classname", ""), case.get("name", "")
    if not module:
        return name.replace(".", "/") + ".py"
    parts = module.split(".")
    # classname is the module's dotted path, then any Test* classes.
    split = next((i for i, part in enumerate(parts) if part[:1].isupper()), len(parts))
    path = "/".join(parts[:split]) + ".py"
    return "::".join([path, *parts[split:], name])


def _failure(test: str, element: ElementTree.Element) -> Failure:
    message = (element.get("message") or "").strip()
    details = (element.text or "").strip()
    if not message or message == "collection failure":
        lines = [line for line in details.splitlines() if line.startswith("E ")]
        message = lines[-1][1:].strip() if lines else "failed"
    return Failure(test, message.splitlines()[0][:300], details[-2000:])
