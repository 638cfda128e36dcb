"""The ``remora`` command line, both ways: with a ``remora-lsp`` serving the
project (a real server started by a pytest-lsp client; the CLI goes through its
control socket) and without one (the CLI opens the project itself).

The CLI runs as a subprocess, as a person runs it; what is asserted is its
output and exit code, what the editor receives, and what lands in the file.
"""

from __future__ import annotations

import asyncio
import json
import os
import pty
import signal
import socket
import stat
import sys
from pathlib import Path

import pytest
import yaml

from remora_lsp.testing.model_server import ModelServer
from tests.lsp.conftest import EDITORS, session
from tests.lsp.helpers import Buffer, eventually
from tests.lsp.test_agent_runs import (
    LONG_S,
    NEW_HELPER,
    EditorEdits,
    of_type,
    settings,
)

REMORA = Path(sys.executable).with_name("remora")
HELPER = "pkg/service.py::Service.helper"
DOCSTRING = '"""Order two b\'s."""'


async def remora(root: Path, *args: str, timeout: float = LONG_S * 2):
    """Run ``remora --project root ARGS``; (exit code, stdout, stderr)."""
    process = await asyncio.create_subprocess_exec(
        str(REMORA),
        "-v",
        "--project",
        str(root),
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout)
    return process.returncode, out.decode(), err.decode()


def script_rewrite(model: ModelServer) -> None:
    model.reply_tool_call("rewrite_self", {"new_source": NEW_HELPER})
    model.reply_text("Added a docstring.")


# ---- a server owns the project ---------------------------------------------------


@pytest.mark.parametrize("editor", EDITORS)
async def test_via_the_server_a_cli_proposal_reaches_the_editor_and_accept_edits_it(
    editor, workspace
):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            sock = workspace / ".remora" / "control.sock"
            await eventually(lambda: sock.exists() or sock.is_symlink())
            assert stat.S_IMODE(os.stat(sock).st_mode) == 0o600

            code, out, err = await remora(workspace, "nodes", "Service", "--json")
            assert code == 0, err
            assert "via server" in err
            names = {n["qualified_name"] for n in json.loads(out)}
            assert {"Service", "Service.helper", "Service.run"} <= names

            script_rewrite(model)
            code, out, err = await remora(
                workspace, "ask", HELPER, "Docstring please", "--wait", "--json"
            )
            assert code == 0, err
            answer = json.loads(out)
            assert answer["outcome"] == "completed"
            assert answer["answer"] == "Added a docstring."
            [made] = answer["proposals"]
            proposal_id = made["proposal_id"]
            # The editor saw the proposal at once: its event and a diagnostic.
            await eventually(
                lambda: of_type(client, "rewrite_proposed", proposal_id=proposal_id)
            )

            buffer = Buffer(client, "pkg/service.py")  # now open in the editor
            edits = EditorEdits(client, buffer)
            code, out, err = await remora(workspace, "proposals")
            assert code == 0, err
            assert proposal_id in out and "Service.helper" in out

            code, out, err = await remora(workspace, "accept", proposal_id[:8])
            assert code == 0, err
            assert "applied" in out
            assert len(edits.requests) == 1  # applied through the editor
            assert DOCSTRING in buffer.text
            assert DOCSTRING not in (workspace / "pkg/service.py").read_text()
            await eventually(
                lambda: of_type(client, "rewrite_applied", proposal_id=proposal_id)
            )
    assert not (sock.exists() or sock.is_symlink())  # removed on exit


def from_a_terminal(program: Path) -> list[str]:
    """The command line that runs ``program`` with Ctrl-C at its default, as in
    a person's terminal: a test run started in the background of a shell
    without job control inherits SIGINT ignored, and so would ``program``.
    """
    reset = (
        "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
        "os.execv(sys.argv[1], sys.argv[1:])"
    )
    return [sys.executable, "-c", reset, str(program)]


async def test_logs_follow_shows_live_events_and_ctrl_c_ends_it_cleanly(workspace):
    with ModelServer() as model:
        async with session("neovim", workspace, settings(model)) as client:
            sock = workspace / ".remora" / "control.sock"
            await eventually(lambda: sock.exists() or sock.is_symlink())
            follower = await asyncio.create_subprocess_exec(
                *from_a_terminal(REMORA),
                "--project",
                str(workspace),
                "logs",
                "-f",
                "--json",
                "--type",
                "agent_*",
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            # No wait for it to subscribe: whenever it starts, it lists the
            # run's events so far and follows from there.
            model.reply_text("I am fine.")
            code, out, err = await remora(workspace, "ask", HELPER, "How are you?")
            assert code == 0, err
            run_id = out.strip()
            seen: list[dict] = []
            while not any(e["type"] == "agent_completed" for e in seen):
                line = await asyncio.wait_for(follower.stdout.readline(), LONG_S)
                assert line, "logs -f ended by itself"
                event = json.loads(line)
                if event.get("run_id") == run_id:
                    seen.append(event)
            assert next(e["type"] for e in seen) == "agent_started"
            follower.send_signal(signal.SIGINT)
            assert await asyncio.wait_for(follower.wait(), LONG_S) == 0
            assert client.events  # the editor's stream is unaffected


# ---- no server ----------------------------------------------------------------------


async def test_without_a_server_the_cli_opens_the_project_and_accept_writes_the_file(
    workspace, person_files
):
    with ModelServer() as model:
        config = person_files / "config"
        config.mkdir(parents=True, exist_ok=True)
        (config / "config.yaml").write_text(yaml.safe_dump(settings(model)))
        script_rewrite(model)
        code, out, err = await remora(
            workspace, "ask", HELPER, "Docstring please", "--json"
        )
        assert code == 0, err
        assert "via local" in err
        [made] = json.loads(out)["proposals"]
        proposal_id = made["proposal_id"]

        code, out, err = await remora(workspace, "proposals", "--json")
        assert code == 0, err
        assert [p["id"] for p in json.loads(out)] == [proposal_id]
        code, out, err = await remora(workspace, "diff", proposal_id)
        assert code == 0 and f"+        {DOCSTRING}" in out

        code, out, err = await remora(workspace, "accept", proposal_id)
        assert code == 0, err
        text = (workspace / "pkg/service.py").read_text()
        assert DOCSTRING in text
        assert not list((workspace / "pkg").glob(".*remora-tmp"))  # no temp left
        # As over LSP: rewrite_applied first, then the content_changed of the
        # written file that triggers subscribers (DESIGN §9).
        events = await logged(workspace)
        [applied] = [e for e in events if e["type"] == "rewrite_applied"]
        [changed] = [e for e in events if e["type"] == "content_changed"]
        assert applied["seq"] < changed["seq"]
        assert changed["path"] == "pkg/service.py"
        assert applied["node_id"] in changed["node_ids"]
        code, out, err = await remora(workspace, "accept", proposal_id)
        assert code == 1 and "accepted" in err
        code, out, err = await remora(workspace, "logs", "--type", "rewrite_applied")
        assert code == 0 and proposal_id in out


async def logged(root: Path) -> list[dict]:
    """Every event of the project, as ``remora logs --json`` prints them."""
    code, out, err = await remora(root, "logs", "--json", "--limit", "1000")
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


async def ask_for_a_proposal(root: Path, model: ModelServer) -> str:
    """``remora ask`` the helper for a rewrite; the proposal's id."""
    script_rewrite(model)
    code, out, err = await remora(root, "ask", HELPER, "Docstring please", "--json")
    assert code == 0, err
    [made] = json.loads(out)["proposals"]
    return made["proposal_id"]


async def test_reject_without_feedback_asks_at_a_terminal_else_does_not_retry(
    workspace, person_files
):
    with ModelServer() as model:
        config = person_files / "config"
        config.mkdir(parents=True, exist_ok=True)
        (config / "config.yaml").write_text(yaml.safe_dump(settings(model)))

        # No terminal (a script): rejected without a retry, and said so.
        first = await ask_for_a_proposal(workspace, model)
        code, out, err = await remora(workspace, "reject", first)
        assert code == 0, err
        assert f"rejected {first}; no feedback, so the agent does not try" in out
        rejected = next(
            e
            for e in await logged(workspace)
            if e["type"] == "rewrite_rejected" and e["proposal_id"] == first
        )
        assert rejected["feedback"] == "" and rejected["to_agent"] is None

        # At a terminal: the person is asked, and the agent retries with it.
        second = await ask_for_a_proposal(workspace, model)
        leader, follower = pty.openpty()
        process = await asyncio.create_subprocess_exec(
            str(REMORA),
            "--project",
            str(workspace),
            "reject",
            second,
            stdin=follower,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        os.close(follower)
        try:
            os.write(leader, b"Keep it to one line\n")
            out, err = await asyncio.wait_for(process.communicate(), LONG_S * 2)
        finally:
            os.close(leader)
        assert process.returncode == 0, err
        assert "What should the agent do differently?" in err.decode()
        assert f"rejected {second}; the agent retries as run_" in out.decode()
        rejected = next(
            e
            for e in await logged(workspace)
            if e["type"] == "rewrite_rejected" and e["proposal_id"] == second
        )
        assert rejected["feedback"] == "Keep it to one line"
        assert rejected["to_agent"] == rejected["node_id"]


async def test_ambiguous_prefix_lists_candidates_and_exits_2(workspace):
    code, _out, err = await remora(workspace, "ask", "rm_", "hello")
    assert code == 2
    assert "matches" in err and "Service.helper" in err
    code, _out, err = await remora(workspace, "ask", "pkg/service.py::nope", "hi")
    assert code == 1 and "no definition nope in pkg/service.py" in err
    code, _out, err = await remora(workspace / "missing", "ps")
    assert code == 3


async def test_a_stale_socket_of_a_killed_server_is_replaced(workspace):
    (workspace / ".remora").mkdir(exist_ok=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path = workspace / ".remora" / "control.sock"
    short = len(os.fsencode(path)) <= 100
    if short:
        stale.bind(str(path))  # bound, never listening: what a killed server leaves
    stale.close()
    code, out, err = await remora(workspace, "ps")
    assert code == 0 and "via local" in err
    async with session("visual-studio-code", workspace) as client:
        await eventually(lambda: path.exists() or path.is_symlink())
        code, out, err = await remora(workspace, "nodes", "helper")
        assert code == 0 and "via server" in err, err
        assert "Service.helper" in out
        assert client.events is not None
