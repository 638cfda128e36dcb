"""One writer per store: two real servers on one project, end to end.

The first server owns ``.remora/remora.db``; a second one (another editor on
the same folder) serves the owner's store read-only — the same ids, no writes,
no agents — says so once, and takes over when the owner stops. A store that
cannot be written at all is read as it is, its ids kept. Every test ends by
checking the store itself: ``PRAGMA integrity_check``, ``seq`` without gap or
duplicate, no node twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
import sqlite3
import subprocess
import threading
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig

from remora_lsp.testing.model_server import ModelServer, Reply
from tests.lsp.conftest import (
    EDITORS,
    SERVER,
    initialize_params,
    record_server_messages,
    session,
)
from tests.lsp.helpers import (
    Buffer,
    eventually,
    flatten,
    node_id,
    symbols,
    uri,
    wait_indexed,
)
from tests.lsp.test_agent_runs import (
    LONG_S,
    NEW_HELPER,
    chat,
    code_actions,
    command,
    finished,
    node_of,
    of_type,
    propose,
    settings,
)

FILES = ("pkg/models.py", "pkg/service.py", "scripts/tool.py")
OWNS = "owns the store"


def other(editor: str) -> str:
    """The other editor: the two servers of a test run as different clients."""
    return EDITORS[1 - EDITORS.index(editor)]


async def ids_of(client, relative: str) -> dict[str, str]:
    """``{qualified name: id}`` as the outline (documentSymbol details) shows."""
    outline = flatten(await symbols(client, uri(client, relative)))
    return {name: node_id(symbol) for name, symbol in outline.items()}


async def all_ids(client) -> dict[str, dict[str, str]]:
    return {relative: await ids_of(client, relative) for relative in FILES}


def owner_messages(client) -> list[str]:
    return [m.message for m in client.messages if OWNS in m.message]


def check_store(root: Path) -> list[tuple[int, str]]:
    """The store is sound; its (seq, type) rows."""
    with contextlib.closing(sqlite3.connect(root / ".remora" / "remora.db")) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = db.execute("SELECT seq, type FROM events ORDER BY seq").fetchall()
        # One definition stored under two ids: two active rows at one place.
        twice = db.execute(
            "SELECT file_path, qualified_name, start_byte, COUNT(*) FROM nodes "
            "WHERE status = 'active' GROUP BY 1, 2, 3 HAVING COUNT(*) > 1"
        ).fetchall()
    seqs = [seq for seq, _ in rows]
    assert seqs == list(range(1, len(seqs) + 1)), "a seq missing or used twice"
    assert twice == [], f"nodes stored twice: {twice}"
    return rows


def stored_runs(root: Path) -> dict[str, str]:
    with contextlib.closing(sqlite3.connect(root / ".remora" / "remora.db")) as db:
        return dict(db.execute("SELECT id, status FROM runs").fetchall())


def save(client, buffer: Buffer, relative: str) -> None:
    """The editor writes the buffer to disk."""
    (client.root / relative).write_text(buffer.text, encoding="utf-8")  # type: ignore[attr-defined]
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=buffer.uri)
        )
    )


class HeldModel:
    """A scripted model whose first reply waits until :meth:`release`."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.server = ModelServer(responder=self._reply)

    def _reply(self, request: dict) -> Reply:
        self.gate.wait(timeout=LONG_S)
        return Reply(text="Done.")

    def release(self) -> None:
        self.gate.set()


# ---- a second server follows the owner ----------------------------------------------


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_second_server_serves_the_owners_store_read_only(editor, workspace):
    held = HeldModel()
    with held.server as model:
        async with session(editor, workspace, settings(model)) as first:
            owner_pid = first._server.pid
            service = Buffer(first, "pkg/service.py")
            helper = await node_of(first, service, "def helper")
            run_id = await chat(first, helper, "Hello")
            await eventually(lambda: model.requests, timeout=LONG_S)  # in flight

            async with session(other(editor), workspace, settings(model)) as second:
                # Said once, naming the owner.
                told = await eventually(lambda: owner_messages(second))
                assert len(told) == 1 and f"pid {owner_pid}" in told[0]
                # The same ids everywhere.
                assert await all_ids(second) == await all_ids(first)

                # Writes attempted on both sides: edits (unsaved and saved) ...
                models = Buffer(second, "pkg/models.py")
                models.insert(
                    "def make_item", "def added_in_second():\n    return 2\n\n\n"
                )
                shown = await models.outline()
                assert "added_in_second" in shown
                service.insert(
                    "def unused", "def added_in_first():\n    return 1\n\n\n"
                )
                save(first, service, "pkg/service.py")
                # ... and chats: the second server runs no agent, and says who does.
                with pytest.raises(JsonRpcException) as refused:
                    await chat(second, helper, "Hello from the other editor")
                assert f"pid {owner_pid}" in str(refused.value)
                with pytest.raises(JsonRpcException):
                    await command(second, "remora.agent.forget", {"node_id": helper})

                # The owner's run, in flight while the second server started, is
                # not marked interrupted: it completes.
                held.release()
                end = await finished(first, run_id)
                assert end["type"] == "agent_completed", end

                # The second server shows the owner's new function with the
                # owner's id (it follows the store, it does not mint its own).
                added = (await ids_of(first, "pkg/service.py"))["added_in_first"]

                async def followed():
                    shown = await ids_of(second, "pkg/service.py")
                    return shown.get("added_in_first") == added

                await eventually(followed, timeout=LONG_S)
                assert not of_type(second, "run_interrupted")
                # Its own unsaved edit kept its own outline, ids of the rest kept.
                again = await ids_of(second, "pkg/models.py")
                before = (await all_ids(first))["pkg/models.py"]
                assert {k: again[k] for k in before} == before
            assert not of_type(first, "run_interrupted")

    rows = check_store(workspace)
    assert "run_interrupted" not in {kind for _, kind in rows}
    assert stored_runs(workspace) == {run_id: "completed"}
    with contextlib.closing(sqlite3.connect(workspace / ".remora" / "remora.db")) as db:
        names = {r[0] for r in db.execute("SELECT qualified_name FROM nodes")}
    assert "added_in_first" in names and "added_in_second" not in names


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_follower_offers_no_edit_of_the_owners_proposals(editor, workspace):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as first:
            owner_pid = first._server.pid
            service = Buffer(first, "pkg/service.py")
            helper = await node_of(first, service, "def helper")
            _run, proposal_id = await propose(first, model, helper, NEW_HELPER)

            async with session(other(editor), workspace, settings(model)) as second:
                await eventually(lambda: owner_messages(second))
                mirror = Buffer(second, "pkg/service.py")
                line, _ = mirror.position("def helper")
                actions = await code_actions(second, mirror.uri, line)
                accepts = [a for a in actions if a["title"].startswith("Accept")]
                if other(editor) == "neovim":  # announces no disabledSupport
                    assert accepts == []  # never a field it did not announce
                else:
                    (accept,) = accepts
                    assert "edit" not in accept and "data" not in accept
                    assert f"pid {owner_pid}" in accept["disabled"]["reason"]
                with pytest.raises(JsonRpcException) as refused:
                    await command(
                        second, "remora.proposal.accept", {"proposal_id": proposal_id}
                    )
                assert f"pid {owner_pid}" in str(refused.value)
                assert mirror.text == service.text  # nothing was applied

            pending = await command(
                first, "remora.proposals.list", {"status": "pending"}
            )
            assert [p["id"] for p in pending] == [proposal_id]
    check_store(workspace)


# ---- two servers started together on a fresh project -----------------------------


async def start_client(editor: str, root: Path, options: dict | None = None):
    """A session started by hand (no waiting for indexing)."""
    client = await ClientServerConfig(server_command=[str(SERVER), "-v"]).start()
    client.editor = editor  # type: ignore[attr-defined]
    client.root = root  # type: ignore[attr-defined]
    record_server_messages(client)
    await client.initialize_session(
        initialize_params(editor, root, initialization_options=options)
    )
    return client


async def stop_client(client) -> None:
    """End a hand-started session's process, however the test went."""
    if client._server is not None and client._server.returncode is None:
        client._server.kill()
    await client.stop()


GENERATED = 300
"""Extra modules, so that both servers are still indexing when the other starts."""


@pytest.mark.parametrize("editor", EDITORS)
async def test_two_servers_started_together_show_the_same_ids(editor, workspace):
    assert not (workspace / ".remora").exists()
    for n in range(GENERATED):
        body = "".join(f"def f{n}_{k}(x):\n    return x + {k}\n\n\n" for k in range(8))
        (workspace / "pkg" / f"gen_{n}.py").write_text(body, encoding="utf-8")
    clients = await asyncio.gather(
        start_client(editor, workspace), start_client(other(editor), workspace)
    )
    try:
        first, second = clients

        async def agree():
            one, two = await all_ids(first), await all_ids(second)
            return one == two and all(one.values())

        await eventually(agree, timeout=LONG_S)
        generated = "pkg/gen_7.py"
        assert await ids_of(first, generated) == await ids_of(second, generated)
        followers = [c for c in clients if owner_messages(c)]
        assert len(followers) == 1  # exactly one of them owns the store
        owner = clients[1 - clients.index(followers[0])]
        for client in (owner, followers[0]):
            await client.shutdown_session()
    finally:
        for client in clients:
            await stop_client(client)
    check_store(workspace)


# ---- the owner stops: the follower takes over ---------------------------------------


@pytest.mark.parametrize("editor", EDITORS)
async def test_when_the_owner_stops_the_follower_takes_over(editor, workspace):
    with ModelServer() as model:
        first = await start_client(editor, workspace, settings(model))
        try:
            await wait_indexed(first)
            owner_pid = first._server.pid
            before = await all_ids(first)
            async with session(other(editor), workspace, settings(model)) as second:
                await eventually(lambda: owner_messages(second))
                await first.shutdown_session()

                def took_over():
                    return [
                        m.message for m in second.messages if "owns it now" in m.message
                    ]

                (told,) = await eventually(took_over, timeout=LONG_S)
                assert f"pid {owner_pid}" in told
                # A warm start: not one id changed.
                assert await all_ids(second) == before
                # Agents run here now, and what they do is stored.
                service = Buffer(second, "pkg/service.py")
                helper = await node_of(second, service, "def helper")
                run_id = await chat(second, helper, "Hello")
                end = await finished(second, run_id)
                assert end["type"] == "agent_completed", end
                assert "persisted" not in end
        finally:
            await stop_client(first)
    rows = check_store(workspace)
    assert "agent_completed" in {kind for _, kind in rows}
    assert stored_runs(workspace) == {run_id: "completed"}


# ---- a store that cannot be written ------------------------------------------------


def read_only_command(store: Path) -> list[str] | None:
    """A server command that sees ``store`` read-only, or None if this machine
    cannot make one (root ignores file modes: a read-only bind mount in a new
    mount namespace does it).
    """
    if os.geteuid() != 0:
        return [str(SERVER), "-v"]  # file modes suffice (set by the caller)
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && exec "$2" -v'
    command = [unshare, "-rm", "sh", "-c", script, "sh", str(store), str(SERVER)]
    probe = subprocess.run(
        [
            unshare,
            "-rm",
            "sh",
            "-c",
            script.replace('exec "$2" -v', "true"),
            "sh",
            str(store),
            "true",
        ],
        capture_output=True,
        check=False,
    )
    return command if probe.returncode == 0 else None


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_read_only_store_is_read_and_its_ids_kept(editor, workspace):
    async with session(editor, workspace) as client:
        before = await all_ids(client)
    store = workspace / ".remora"
    command_line = read_only_command(store)
    if command_line is None:
        pytest.skip("cannot make a read-only store here (no unshare)")
    database = store / "remora.db"
    fingerprint = digest(database)
    modes = {p: p.stat().st_mode for p in (store, *store.iterdir())}
    if os.geteuid() != 0:
        for path in modes:
            path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        async with session(editor, workspace, command=command_line) as client:
            told = [
                m.message for m in client.messages if "cannot be written" in m.message
            ]
            assert len(told) == 1, [m.message for m in client.messages]
            assert await all_ids(client) == before
            # Edits work (in memory), and nothing is written.
            buffer = Buffer(client, "pkg/service.py")
            buffer.insert("def unused", "def added():\n    return 1\n\n\n")
            assert "added" in await buffer.outline()
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
    assert digest(database) == fingerprint
    check_store(workspace)
