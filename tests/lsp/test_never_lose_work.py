"""Never losing work silently, end to end with the real server.

- ``rm -rf .remora`` while the server runs: it notices, says so once, and
  rebuilds the store from what it holds; a restart finds every id, the pending
  proposal and the agents' state.
- A full disk in the middle of a run (SQLite's ``max_page_count``, set by the
  ``store.max_mb`` setting, with the file grown past it by another connection
  while the model "thinks"): every event of the run still reaches the editor,
  marked ``persisted: false`` from the failed write on, its progress ends, the
  person is told once, and the log on disk is exactly what was persisted.
- A crash (``SIGKILL``) between the editor applying an accepted edit and the
  server recording it: the next start records the proposal ``accepted``.
- Accept and reject of one proposal sent together: one decision wins, and the
  record matches the buffer.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sqlite3
import threading

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
from tests.lsp.helpers import Buffer, eventually, open_file, wait_indexed
from tests.lsp.test_agent_runs import (
    LONG_S,
    NEW_HELPER,
    apply_edits,
    chat,
    command,
    ended,
    finished,
    node_of,
    of_type,
    progress_runs,
    propose,
    settings,
)
from tests.lsp.test_one_writer import all_ids, check_store, stop_client


def connect(root):
    return contextlib.closing(
        sqlite3.connect(root / ".remora" / "remora.db", timeout=30)
    )


# ---- the store deleted under a running server ---------------------------------------


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_deleted_store_is_rebuilt_from_what_the_server_holds(editor, workspace):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            buffer = Buffer(client, "pkg/service.py")
            helper = await node_of(client, buffer, "def helper")
            runner = await node_of(client, buffer, "def run")
            # The agents' state: memory, a subscription, a conversation ...
            model.reply_tool_call("kv_set", {"key": "note", "value": "keep me"})
            model.reply_tool_call(
                "subscribe", {"nodes": [runner], "event_types": ["content_changed"]}
            )
            model.reply_text("Noted.")
            run_id = await chat(client, helper, "Remember this")
            assert (await finished(client, run_id))["type"] == "agent_completed"
            # ... and a proposal waiting for the person.
            _run, proposal_id = await propose(client, model, helper, NEW_HELPER)
            ids_before = await all_ids(client)

            shutil.rmtree(workspace / ".remora")  # what git clean -fdx does

            told_once = await eventually(
                lambda: [
                    m.message for m in client.messages if "was deleted" in m.message
                ],
                timeout=LONG_S,
            )
            assert len(told_once) == 1 and "rebuilt" in told_once[0]
            assert (workspace / ".remora" / "remora.db").is_file()
            # Work after the rebuild lands in the new store.
            buffer.insert("def unused", "def added_later():\n    return 1\n\n\n")
            (workspace / "pkg/service.py").write_text(buffer.text, encoding="utf-8")
            client.text_document_did_save(
                types.DidSaveTextDocumentParams(
                    text_document=types.TextDocumentIdentifier(uri=buffer.uri)
                )
            )
            added = (await buffer.outline())["added_later"].detail.split(" ")[0]
            await asyncio.sleep(1.0)  # once, rather than a debounce timer to chase
            assert len([m for m in client.messages if "was deleted" in m.message]) == 1

    async with session(editor, workspace, settings(model)) as client:
        ids_after = await all_ids(client)
        for relative, ids in ids_before.items():
            assert {k: ids_after[relative][k] for k in ids} == ids, relative
        assert ids_after["pkg/service.py"]["added_later"] == added
        pending = await command(client, "remora.proposals.list", {"status": "pending"})
        assert [p["id"] for p in pending] == [proposal_id]
    check_store(workspace)
    with connect(workspace) as db:
        (history,) = db.execute(
            "SELECT chat_history FROM agent_state WHERE agent_id = ?", (helper,)
        ).fetchone()
        assert "Remember this" in history
        assert db.execute(
            "SELECT value FROM kv WHERE agent_id = ? AND key = 'note'", (helper,)
        ).fetchone() == ('"keep me"',)
        assert (
            db.execute(
                "SELECT COUNT(*) FROM subscriptions WHERE agent_id = ?", (helper,)
            ).fetchone()[0]
            == 1
        )


# ---- a full disk in the middle of a run ---------------------------------------------


class FillingModel:
    """A scripted model that, at its first request, waits for the disk to be
    filled; then a few tool calls and a long answer.
    """

    def __init__(self) -> None:
        self.filled = threading.Event()
        self.asked = threading.Event()
        self.replies = [
            Reply(tool_calls=[("get_my_callers", {})]),
            Reply(tool_calls=[("get_my_callees", {})]),
            Reply(tool_calls=[("kv_get", {"key": "anything"})]),
            Reply(text="A long answer. " * 1500),
        ]
        self.server = ModelServer(responder=self._reply)

    def _reply(self, request: dict) -> Reply:
        self.asked.set()
        self.filled.wait(timeout=LONG_S)
        return self.replies.pop(0) if self.replies else Reply(text="Done.")


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_full_disk_mid_run_loses_no_event_and_says_so_once(editor, workspace):
    filling = FillingModel()
    with filling.server as model:
        options = {**settings(model), "store": {"max_mb": 1}}
        async with session(editor, workspace, options) as client:
            buffer = Buffer(client, "pkg/service.py")
            helper = await node_of(client, buffer, "def helper")
            run_id = await chat(client, helper, "Tell me everything")
            await asyncio.to_thread(filling.asked.wait, LONG_S)
            # The disk fills up while the model thinks: another program grows
            # the file past the limit, so the server's next new page fails.
            with connect(workspace) as db:
                db.execute("CREATE TABLE someone_elses (data BLOB)")
                db.execute("INSERT INTO someone_elses VALUES (zeroblob(2000000))")
                db.commit()
            filling.filled.set()

            end = await finished(client, run_id)
            assert end["type"] == "agent_completed", end
            events = list(client.events)
            run = [e for e in events if e.get("run_id") == run_id]
            kinds = [e["type"] for e in run]
            for kind in ("agent_started", "model_request", "tool_called"):
                assert kind in kinds, kinds
            # From the failed write on, nothing is persisted; before it, all is.
            flags = [e.get("persisted", True) for e in events]
            assert False in [e.get("persisted", True) for e in run]
            first_lost = flags.index(False)
            assert all(flags[:first_lost]) and not any(flags[first_lost:])
            # seq still only rises, no duplicate.
            seqs = [e["seq"] for e in events]
            assert seqs == sorted(set(seqs))
            # The run's progress ended; the person was told once.
            runs = await eventually(
                lambda: [
                    r
                    for _t, r in progress_runs(client, "Remora: Service.helper")
                    if ended(r)
                ]
            )
            assert len(runs) == 1
            full = [m.message for m in client.messages if "disk is full" in m.message]
            assert len(full) == 1, [m.message for m in client.messages]
            persisted = {e["id"] for e in events if e.get("persisted", True)}
    check_store(workspace)
    with connect(workspace) as db:
        stored = {row[0] for row in db.execute("SELECT id FROM events")}
    assert stored == persisted


# ---- a crash between the editor applying an acceptance and the server recording it --


@pytest.mark.parametrize("saved", [False, True], ids=["unsaved", "saved"])
@pytest.mark.parametrize("editor", EDITORS)
async def test_an_acceptance_applied_just_before_a_crash_is_recorded(
    editor, saved, workspace
):
    with ModelServer() as model:
        client = await ClientServerConfig(server_command=[str(SERVER), "-v"]).start()
        try:
            client.editor = editor  # type: ignore[attr-defined]
            client.root = workspace  # type: ignore[attr-defined]
            record_server_messages(client)
            killed = asyncio.Event()
            state: dict = {}
            converter = client.protocol._converter

            @client.feature(types.WORKSPACE_APPLY_EDIT)
            def apply_edit(params: types.ApplyWorkspaceEditParams):
                # The editor applies the edit, and the server dies right then,
                # before it hears back.
                apply_edits(state["buffer"], converter.unstructure(params.edit))
                client._server.kill()
                killed.set()
                return types.ApplyWorkspaceEditResult(applied=True)

            await client.initialize_session(
                initialize_params(
                    editor, workspace, initialization_options=settings(model)
                )
            )
            await wait_indexed(client)
            buffer = state["buffer"] = Buffer(client, "pkg/service.py")
            helper = await node_of(client, buffer, "def helper")
            _run, proposal_id = await propose(client, model, helper, NEW_HELPER)
            accepting = asyncio.ensure_future(
                command(client, "remora.proposal.accept", {"proposal_id": proposal_id})
            )
            await asyncio.wait_for(killed.wait(), LONG_S)
            await client._server.wait()
            accepting.cancel()
            text = buffer.text
            assert NEW_HELPER in text
        finally:
            await stop_client(client)
        if saved:
            (workspace / "pkg/service.py").write_text(text, encoding="utf-8")

        async with session(editor, workspace, settings(model)) as client:
            if not saved:  # the editor opens its buffer in the new server
                open_file(client, "pkg/service.py", text)
            await eventually(
                lambda: of_type(client, "rewrite_applied", proposal_id=proposal_id),
                timeout=LONG_S,
            )
            accepted = await command(
                client, "remora.proposals.list", {"status": "accepted"}
            )
            assert [p["id"] for p in accepted] == [proposal_id]
            assert not of_type(client, "rewrite_stale", proposal_id=proposal_id)
    check_store(workspace)


# ---- accept and reject at the same moment -------------------------------------------


@pytest.mark.parametrize("editor", EDITORS)
async def test_accept_and_reject_together_one_decision_matching_the_buffer(
    editor, workspace
):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            buffer = Buffer(client, "pkg/service.py")
            converter = client.protocol._converter

            @client.feature(types.WORKSPACE_APPLY_EDIT)
            async def apply_edit(params: types.ApplyWorkspaceEditParams):
                await asyncio.sleep(0.3)  # the editor takes a moment
                apply_edits(buffer, converter.unstructure(params.edit))
                return types.ApplyWorkspaceEditResult(applied=True)

            helper = await node_of(client, buffer, "def helper")
            _run, proposal_id = await propose(client, model, helper, NEW_HELPER)
            argument = {"proposal_id": proposal_id}
            # Both sent before either is answered.
            accepting = asyncio.ensure_future(
                command(client, "remora.proposal.accept", argument)
            )
            rejecting = asyncio.ensure_future(
                command(
                    client, "remora.proposal.reject", {**argument, "feedback": "no"}
                )
            )
            accept, reject = await asyncio.gather(
                accepting, rejecting, return_exceptions=True
            )
            listed = await command(client, "remora.proposals.list", {})
            (record,) = [p for p in listed if p["id"] == proposal_id]
            if record["status"] == "accepted":
                assert accept == {"applied": True}
                assert isinstance(reject, JsonRpcException)
                assert "already accepted" in str(reject)
                assert NEW_HELPER in buffer.text
                assert not of_type(client, "rewrite_rejected", proposal_id=proposal_id)
            else:
                assert record["status"] == "rejected"
                assert isinstance(reject, dict) and reject.get("run_id")
                assert accept["applied"] is False
                assert NEW_HELPER not in buffer.text
                assert not of_type(client, "rewrite_applied", proposal_id=proposal_id)
    check_store(workspace)
