"""The first hardening round's promises with the command line as the writer
(issue 25): ``remora`` without a server opens the project in its own process
and writes the store, so a hostile reply and a deleted store meet it there.

- Bounds on model output: a 10 MB tool argument is refused and the store
  keeps its size, sha256 and first kilobytes — ``.remora`` grows < 1 MB.
- One writer per store: while ``remora ask`` holds the store, ``remora mcp``
  reads but may not write.
- No silent loss: ``.remora`` deleted while ``remora ask`` runs (what
  ``git clean -fdx`` in another terminal does): the command's close puts the
  store back, so the node ids and the proposal it made are still there, and
  the person is told.

Run as a person runs it: the ``remora`` command line, a scripted model.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import sqlite3
from typing import Any

import yaml

from remora_lsp.testing.model_server import ModelServer, Reply
from tests.lsp.test_agent_runs import NEW_HELPER, settings
from tests.lsp.test_command_line import HELPER, remora
from tests.mcp.test_mcp_server import host_client, result_of


def store_bytes(root) -> int:
    return sum(p.stat().st_size for p in (root / ".remora").rglob("*") if p.is_file())


def use(model: ModelServer, person_files) -> None:
    config = person_files / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.yaml").write_text(yaml.safe_dump(settings(model)))


async def test_a_ten_megabyte_argument_through_the_cli_keeps_the_store_small(
    workspace, person_files
):
    with ModelServer() as model:
        use(model, person_files)
        code, _out, err = await remora(workspace, "nodes", "--json")
        assert code == 0, err
        before = store_bytes(workspace)
        huge = "z" * 10_000_000
        model.reply_tool_call("send_message", {"to": "pkg/service.py", "content": huge})
        model.reply_text("Done.")
        code, _out, err = await remora(workspace, "ask", HELPER, "Tell all", "--json")
    assert code == 0, err
    assert store_bytes(workspace) - before < 1_000_000


async def test_a_store_deleted_while_the_cli_writes_keeps_ids_and_proposal(
    workspace, person_files
):
    def responder(request: dict[str, Any]) -> Reply:
        if len(model.requests) == 1:  # the store goes while the model thinks
            shutil.rmtree(workspace / ".remora")
            return Reply(tool_calls=[("rewrite_self", {"new_source": NEW_HELPER})])
        return Reply(text="Added a docstring.")

    with ModelServer(responder) as model:
        use(model, person_files)
        code, out, err = await remora(workspace, "nodes", "--json")
        assert code == 0, err
        ids = {n["qualified_name"]: n["id"] for n in json.loads(out)}
        code, out, err = await remora(
            workspace, "ask", HELPER, "Docstring please", "--json"
        )
        assert code == 0, err
        [made] = json.loads(out)["proposals"]
        assert "was deleted while" in err, err  # said, not silent

        code, out, err = await remora(workspace, "nodes", "--json")
        assert code == 0, err
        assert {n["qualified_name"]: n["id"] for n in json.loads(out)} == ids
        code, out, err = await remora(workspace, "proposals", "--json")
        assert code == 0, err
        assert [p["id"] for p in json.loads(out)] == [made["proposal_id"]]


async def test_one_writer_when_the_cli_holds_the_store_and_an_mcp_host_asks(
    workspace, person_files
):
    """One writer per store, with the command line and ``remora mcp`` as the
    two writers: while ``remora ask`` holds the store (its model thinking), an
    MCP host reads the project but its request to an agent is refused, naming
    the owner; the store ends whole, every ``seq`` once.
    """
    with ModelServer() as model:
        use(model, person_files)
        model.reply_delay(4.0, Reply(text="Thought about it."))
        asking = asyncio.ensure_future(remora(workspace, "ask", HELPER, "Think"))
        lock = workspace / ".remora" / "owner.lock"
        deadline = asyncio.get_running_loop().time() + 30
        while not model.requests:  # the CLI owns the store and is waiting
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.1)
        owner = json.loads(lock.read_text())["pid"]
        async with host_client(workspace) as client:
            card = result_of(await client.call_tool("node_card", {"node": HELPER}))
            assert card["qualified_name"] == "Service.helper"
            refused = await client.call_tool(
                "ask_node", {"node": HELPER, "message": "Me too", "wait_s": 5}
            )
        assert refused.is_error
        assert f"pid {owner}" in refused.content[0].text
        code, out, err = await asking
    assert code == 0, err
    assert "Thought about it." in out
    with contextlib.closing(sqlite3.connect(workspace / ".remora" / "remora.db")) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        seqs = [r[0] for r in db.execute("SELECT seq FROM events ORDER BY seq")]
    assert seqs == list(range(1, len(seqs) + 1))
