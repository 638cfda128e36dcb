"""Hostile files against the real server: bounded work, a clear answer soon,
and an outline that keeps answering meanwhile (issue 25, class 6).

A YAML "billion laughs" (aliases of aliases, under 500 bytes) as a graph
file, given by name to the server and as a file to ``remora graph run`` with
a server running; a glob that a backtracking matcher takes minutes over
(``*a`` twelve times against a long name), as a graph's path glob and as a
repository's ``discovery.exclude``. Each must be answered within
:data:`ANSWER_S` with at most :data:`GROWTH_MB` more memory in the server
(its peak resident set, ``VmHWM``, against its size before), while the
outline of a file is asked for again and again and keeps answering.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path

import pytest
import yaml

from remora_lsp.pygls_private import server_process
from tests.fakes.model_server import ModelServer
from tests.lsp.conftest import EDITORS, session
from tests.lsp.helpers import symbols, uri
from tests.lsp.test_agent_runs import command, settings
from tests.lsp.test_command_line import REMORA

pytestmark = [
    pytest.mark.workspace("batch"),
    pytest.mark.skipif(sys.platform != "linux", reason="reads /proc for memory"),
]

ANSWER_S = 5.0
GROWTH_MB = 100
SESSION_S = 60.0
HOSTILE_GLOB = "*a" * 12 + "*b"
LONG_NAME = "a" * 34 + ".py"


def laughs(levels: int = 7) -> str:
    """A graph whose ``error_policy`` is ``9**levels`` strings through aliases
    (7 levels: 4.8 million, 440-odd bytes of YAML).
    """
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, levels):
        refs = ",".join([f"*l{level - 1}"] * 9)
        lines.append(f"l{level}: &l{level} [{refs}]")
    lines.append("name: laughs")
    lines.append(f"error_policy: *l{levels - 1}")
    lines.append("steps: [{id: s, bundle: docstring, targets: {path: '*'}}]")
    return "\n".join(lines) + "\n"


def memory_mb(pid: int, field: str) -> float:
    """``VmRSS`` (now) or ``VmHWM`` (peak) of a process, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no {field} for {pid}")


@contextlib.asynccontextmanager
async def hostile_session(workspace: Path, model: ModelServer):
    """A session whose server is killed when the test fails, within
    :data:`SESSION_S` in any case: a server stuck on a hostile file answers no
    shutdown, and its end may never be seen either.
    """
    async with (
        asyncio.timeout(SESSION_S),
        session(EDITORS[0], workspace, settings(model)) as client,
    ):
        try:
            yield client
        except BaseException:
            server = server_process(client)
            if server is not None and server.returncode is None:
                server.kill()
            raise


async def within(awaitable, seconds: float = ANSWER_S):
    """The result of ``awaitable`` if it comes within ``seconds``, else an
    AssertionError; the request is left pending (cancelling a request to a
    stuck server could wait for it too).
    """
    task = asyncio.ensure_future(awaitable)
    done, _ = await asyncio.wait({task}, timeout=seconds)
    assert done, f"no answer within {seconds} s"
    return task.result()


@contextlib.asynccontextmanager
async def outline_keeps_answering(client, relative: str):
    """Ask for the outline of ``relative`` over and over while the body runs;
    every answer must come within :data:`ANSWER_S` (a stuck loop fails it).
    """
    answered: list[int] = []

    async def ask() -> None:
        while True:
            tree = await within(symbols(client, uri(client, relative)))
            answered.append(len(tree or []))
            await asyncio.sleep(0.1)

    asking = asyncio.ensure_future(ask())
    try:
        yield answered
        assert not asking.done(), asking.exception()  # an outline came too late
    finally:
        asking.cancel()
        with contextlib.suppress(asyncio.CancelledError, AssertionError):
            await asking


async def refused_soon(client, argument) -> str:
    """The error message of ``remora.graph.run`` on ``argument``."""
    with pytest.raises(Exception) as refused:
        await within(command(client, "remora.graph.run", {"graph": argument}))
    assert not isinstance(refused.value, AssertionError), refused.value
    return str(refused.value)


async def test_a_billion_laughs_graph_is_refused_soon_in_little_memory(workspace):
    graphs = workspace / ".remora" / "graphs"
    graphs.mkdir(parents=True)
    (graphs / "laughs.yaml").write_text(laughs())
    assert len(laughs()) < 500
    with ModelServer() as model:
        async with hostile_session(workspace, model) as client:
            pid = server_process(client).pid
            before = memory_mb(pid, "VmRSS")
            async with outline_keeps_answering(client, "inventory/stock.py") as seen:
                message = await refused_soon(client, "laughs")
                await asyncio.sleep(0.5)
            assert seen and all(count == 3 for count in seen)
            assert "alias" in message
            assert len(message) < 1000
            assert memory_mb(pid, "VmHWM") - before < GROWTH_MB


async def test_a_backtracking_path_glob_is_matched_in_linear_time(workspace):
    (workspace / LONG_NAME).write_text("def long():\n    return 1\n")
    graph = {
        "name": "slow-glob",
        "steps": [
            {"id": "s", "bundle": "docstring", "targets": {"path": HOSTILE_GLOB}},
        ],
    }
    with ModelServer() as model:
        async with hostile_session(workspace, model) as client:
            async with outline_keeps_answering(client, "inventory/stock.py") as seen:
                message = await refused_soon(client, graph)
                await asyncio.sleep(0.5)
            assert seen
            assert "step 's': its targets match no node" in message
            assert not model.requests


async def test_a_backtracking_exclude_glob_does_not_hold_up_indexing(workspace):
    (workspace / LONG_NAME).write_text("def long():\n    return 1\n")
    (workspace / "remora.yaml").write_text(
        yaml.safe_dump({"discovery": {"exclude": [HOSTILE_GLOB, ".remora"]}})
    )
    with ModelServer() as model:
        loop = asyncio.get_running_loop()
        started = loop.time()
        async with hostile_session(workspace, model) as client:
            async with outline_keeps_answering(client, LONG_NAME) as seen:
                await asyncio.sleep(1.0)
            assert loop.time() - started < 3 * ANSWER_S  # start, index, answers
            assert seen and seen[-1] == 1  # long() is indexed: not excluded


async def run_cli(root: Path, *args: str) -> tuple[int, str, float]:
    """``remora --project root ARGS`` within :data:`ANSWER_S`: its exit code,
    its stderr and its peak memory (MB).
    """
    process = await asyncio.create_subprocess_exec(
        str(REMORA),
        "--project",
        str(root),
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    reading = asyncio.ensure_future(process.stderr.read())
    loop = asyncio.get_running_loop()
    deadline = loop.time() + ANSWER_S
    peak = 0.0
    while process.returncode is None and loop.time() < deadline:
        with contextlib.suppress(OSError, AssertionError):
            peak = max(peak, memory_mb(process.pid, "VmHWM"))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), 0.05)
    if process.returncode is None:
        process.kill()
        await process.wait()
        raise AssertionError(f"remora {' '.join(args)} gave no answer in time")
    return process.returncode, (await reading).decode(), peak


async def test_remora_graph_run_on_a_billion_laughs_file_with_a_server(
    workspace, tmp_path
):
    hostile = tmp_path / "laughs.yaml"
    hostile.write_text(laughs())
    with ModelServer() as model:
        async with hostile_session(workspace, model) as client:
            pid = server_process(client).pid
            code, err, baseline = await run_cli(workspace, "graph", "status", "nope")
            before = memory_mb(pid, "VmRSS")
            async with outline_keeps_answering(client, "inventory/stock.py"):
                code, err, peak = await run_cli(workspace, "graph", "run", str(hostile))
            assert code != 0
            assert "alias" in err
            assert len(err.strip().splitlines()) == 1, err
            assert len(err) < 1000
            assert peak - baseline < GROWTH_MB
            assert memory_mb(pid, "VmHWM") - before < GROWTH_MB
    assert os.path.exists(hostile)


async def test_remora_graph_run_on_a_billion_laughs_file_without_a_server(
    workspace, tmp_path
):
    hostile = tmp_path / "laughs.yaml"
    hostile.write_text(laughs(9))  # 9**9 strings: the CLI opens the project itself
    code, err, peak = await run_cli(workspace, "graph", "run", str(hostile))
    assert code == 2
    assert err.startswith(f"remora: {hostile}: not a graph file: line 2, column")
    assert "aliases (*name) are not allowed" in err
    assert len(err.strip().splitlines()) == 1, err
    assert peak < 400  # the CLI's own size: nothing expanded
