"""Session lifecycle: restarts, store failures, settings, stdout and exit."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess

import pytest
from lsprotocol import types

from tests.lsp.conftest import EDITORS, SERVER, session
from tests.lsp.helpers import Buffer, flatten, node_id, symbols, uri


def ids(outline) -> dict[str, str]:
    return {name: node_id(symbol) for name, symbol in outline.items()}


@pytest.mark.parametrize("editor", EDITORS)
async def test_ids_survive_a_restart_and_edits_are_kept(editor, workspace):
    async with session(editor, workspace) as client:
        first = ids(flatten(await symbols(client, uri(client, "pkg/models.py"))))
        buffer = Buffer(client, "pkg/service.py")
        buffer.insert("def unused", "def saved_later():\n    return 0\n\n\n")
        edited = ids(await buffer.outline())
        (workspace / "pkg/service.py").write_text(buffer.text, encoding="utf-8")
        client.text_document_did_save(
            types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=buffer.uri)
            )
        )
    async with session(editor, workspace) as client:
        runs = [
            r
            for r in client.progress_reports.values()
            if r and getattr(r[0], "title", "") == "Remora: indexing"
        ]
        assert "0 parsed" in runs[-1][-1].message  # warm start: nothing re-parsed
        again = ids(flatten(await symbols(client, uri(client, "pkg/models.py"))))
        assert again == first
        assert (
            ids(flatten(await symbols(client, uri(client, "pkg/service.py")))) == edited
        )


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_corrupt_store_gives_one_message_and_memory_service(editor, workspace):
    store = workspace / ".remora" / "remora.db"
    store.parent.mkdir()
    garbage = b"this is not a database" * 100
    store.write_bytes(garbage)
    async with session(editor, workspace) as client:
        warnings = [m.message for m in client.messages if "remora.db" in m.message]
        assert len(warnings) == 1
        assert "damaged" in warnings[0] and "Serving from memory" in warnings[0]
        outline = flatten(await symbols(client, uri(client, "pkg/models.py")))
        assert "make_item" in outline
    assert store.read_bytes() == garbage  # nothing the user had is lost


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_locked_store_gives_one_message_and_memory_service(editor, workspace):
    store = workspace / ".remora" / "remora.db"
    store.parent.mkdir()
    holder = sqlite3.connect(store, isolation_level=None)
    holder.execute("CREATE TABLE other_tool (x)")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        async with session(editor, workspace) as client:
            warnings = [m.message for m in client.messages if "remora.db" in m.message]
            assert len(warnings) == 1 and "locked" in warnings[0]
            outline = flatten(await symbols(client, uri(client, "pkg/service.py")))
            assert "order" in outline
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@pytest.mark.parametrize("editor", EDITORS)
async def test_bad_settings_give_one_message_and_defaults(editor, workspace):
    (workspace / "remora.yaml").write_text(
        "swarm:\n  max_depth: -3\ndiscovery:\n  max_file_bytes: lots\nnonsense: 1\n",
        encoding="utf-8",
    )
    async with session(
        editor, workspace, {"ids": {"inline_comments": "maybe"}}
    ) as client:
        messages = [
            m.message for m in client.messages if "invalid settings" in m.message
        ]
        assert len(messages) == 1
        for key in (
            "swarm.max_depth",
            "discovery.max_file_bytes",
            "nonsense",
            "ids.inline_comments",
        ):
            assert key in messages[0]
        assert "make_item" in flatten(
            await symbols(client, uri(client, "pkg/models.py"))
        )


def read_messages(stream: bytes) -> list[dict]:
    """Split a stdout capture into JSON-RPC messages; fail on any other byte."""
    messages = []
    rest = stream
    while rest:
        header, separator, rest = rest.partition(b"\r\n\r\n")
        assert separator, f"stray bytes on stdout: {header[:200]!r}"
        fields = dict(
            line.split(": ", 1) for line in header.decode("ascii").split("\r\n")
        )
        length = int(fields["Content-Length"])
        body, rest = rest[:length], rest[length:]
        message = json.loads(body)
        assert message["jsonrpc"] == "2.0"
        messages.append(message)
    return messages


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def initialize(workspace) -> dict:
    """A bare ``initialize`` request (id 1) for ``workspace``."""
    params = {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


def test_stdout_carries_only_protocol_messages_and_exit_is_prompt(workspace, tmp_path):
    requests = [
        initialize(workspace),
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "workspace/symbol",
            "params": {"query": "order"},
        },
        {"jsonrpc": "2.0", "id": 3, "method": "shutdown", "params": None},
        {"jsonrpc": "2.0", "method": "exit", "params": None},
    ]
    stderr_file = (tmp_path / "stderr.log").open("w+b")
    process = subprocess.Popen(
        [str(SERVER), "-vv"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr_file,
    )
    # Keep stdin open after `exit`, as editors do: the server must not wait for EOF.
    process.stdin.write(b"".join(frame(r) for r in requests[:2]))
    process.stdin.flush()
    import time

    time.sleep(1.0)  # let indexing run, so its logs and progress happen too
    process.stdin.write(b"".join(frame(r) for r in requests[2:]))
    process.stdin.flush()
    code = process.wait(timeout=15)
    stdout = process.stdout.read()
    stderr_file.seek(0)
    stderr = stderr_file.read()
    process.stdin.close()
    assert code == 0
    messages = read_messages(stdout)
    answered = {m.get("id") for m in messages if "result" in m or "error" in m}
    assert {1, 2, 3} <= answered
    assert b"DEBUG" in stderr  # -vv logging went to stderr, not stdout


def test_requests_waiting_for_the_project_are_answered_when_it_shuts_down(
    workspace, tmp_path
):
    # No `initialized`: the project never starts loading, so every request that
    # needs its graph is still waiting when `shutdown` closes it. Each must get
    # exactly one answer (an error saying why), and the server must exit at once.
    waiting = [
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "workspace/symbol",
            "params": {"query": "order"},
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "textDocument/documentSymbol",
            "params": {"textDocument": {"uri": (workspace / "pkg/models.py").as_uri()}},
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "workspace/executeCommand",
            "params": {
                "command": "remora.node.get",
                "arguments": [{"node_id": "rm_abcdefgh"}],
            },
        },
    ]
    requests = [
        initialize(workspace),
        *waiting,
        {"jsonrpc": "2.0", "id": 5, "method": "shutdown", "params": None},
        {"jsonrpc": "2.0", "method": "exit", "params": None},
    ]
    process = subprocess.Popen(
        [str(SERVER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "stderr.log").open("wb"),
    )
    process.stdin.write(b"".join(frame(r) for r in requests))
    process.stdin.flush()
    code = process.wait(timeout=30)
    process.stdin.close()
    messages = read_messages(process.stdout.read())
    answers = [m for m in messages if "result" in m or "error" in m]
    assert sorted(m["id"] for m in answers) == [1, 2, 3, 4, 5]  # once each
    assert code == 0
    workspace_symbols = next(m for m in answers if m["id"] == 2)
    assert workspace_symbols.get("result") is None  # no project loaded: nothing found
    outline = next(m for m in answers if m["id"] == 3)
    assert (
        "closed (shutdown or restart) before it finished loading"
        in (outline["error"]["message"])
    )
    card = next(m for m in answers if m["id"] == 4)  # no project to ask: the same
    assert (
        "closed (shutdown or restart) before it finished loading"
        in card["error"]["message"]
    )


def test_exit_without_shutdown_ends_with_code_1(workspace):
    process = subprocess.Popen(
        [str(SERVER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    process.stdin.write(frame({"jsonrpc": "2.0", "method": "exit", "params": None}))
    process.stdin.flush()
    assert process.wait(timeout=15) == 1
    process.stdin.close()


def test_version_and_log_file(tmp_path):
    version = subprocess.run(
        [str(SERVER), "--version"], capture_output=True, text=True, check=True
    )
    assert version.stdout.strip()[0].isdigit()
    log = tmp_path / "server.log"
    process = subprocess.run(
        [str(SERVER), "-v", "--log-file", str(log)],
        input=frame({"jsonrpc": "2.0", "method": "exit", "params": None}),
        capture_output=True,
        timeout=15,
    )
    assert process.stdout == b""
    assert process.stderr == b""
    assert "starting on stdio" in log.read_text(encoding="utf-8")


async def test_tcp_transport(workspace, unused_tcp_port):
    process = await asyncio.create_subprocess_exec(
        str(SERVER),
        "--tcp",
        f"127.0.0.1:{unused_tcp_port}",
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                reader, writer = await asyncio.open_connection(
                    "127.0.0.1", unused_tcp_port
                )
                break
            except OSError:
                await asyncio.sleep(0.1)
        writer.write(
            frame(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "processId": None,
                        "rootUri": workspace.as_uri(),
                        "capabilities": {},
                    },
                }
            )
        )
        await writer.drain()
        header = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        length = int(header.split(b":")[1].split(b"\r\n")[0])
        body = json.loads(await reader.readexactly(length))
        assert body["result"]["serverInfo"]["name"] == "remora-lsp"
        writer.close()
    finally:
        process.kill()
        await process.wait()
