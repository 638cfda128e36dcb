"""Batch graphs end to end: the real server, a scripted model, both editors.

The scripted model answers by what it is asked: a step whose instruction says
``ADD_HINTS`` rewrites the source it is shown with ``x: list``, one saying
``ADD_DOCS`` adds a docstring; the node ``broken``'s requests always fail
(HTTP 400, not retried). What is asserted is what a person sees: the graph's
events, its progress, the proposals to review, the text that lands.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import signal
import sqlite3
from pathlib import Path

import pytest
from pytest_lsp import ClientServerConfig

from tests.fakes.model_server import ModelServer, Reply
from tests.gitrepo import commit_all
from tests.lsp.conftest import (
    EDITORS,
    SERVER,
    initialize_params,
    record_server_messages,
    session,
)
from tests.lsp.helpers import Buffer, eventually, wait_indexed
from tests.lsp.test_agent_runs import (
    LONG_S,
    EditorEdits,
    chat,
    command,
    finished,
    node_of,
    of_type,
    progress_runs,
    settings,
)
from tests.lsp.test_one_writer import stop_client

pytestmark = pytest.mark.workspace("batch")

SOURCE = re.compile(r"```python\n(.*?)\n```", re.S)
DOC = '    """Documented."""\n'


def respond(body: dict) -> Reply:
    """The model: rewrite what it is shown as the step says, then say done."""
    messages = body["messages"]
    if messages[-1].get("role") == "tool":
        return Reply(text="Done.")
    system = " ".join(
        str(m.get("content")) for m in messages if m.get("role") == "system"
    )
    user = str(messages[-1].get("content"))
    if "`broken`" in system:
        return Reply(status=400, body=b'{"error": {"message": "model broke"}}')
    source = SOURCE.search(system).group(1)
    if "ADD_HINTS" in user:
        source = source.replace("(x)", "(x: list)", 1)
    if "ADD_DOCS" in user:
        head, rest = source.split("\n", 1)
        source = f"{head}\n{DOC}{rest}"
    if "SLOW" in user:
        return Reply(tool_calls=[("rewrite_self", {"new_source": source})], delay_s=60)
    return Reply(tool_calls=[("rewrite_self", {"new_source": source})])


def graph(policy: str = "skip_downstream", retries: int = 0, **extra) -> dict:
    targets = {"path": "inventory/**/*.py", "kind": ["function"]}
    return {
        "name": "doc-inventory",
        "max_concurrency": 2,
        "error_policy": policy,
        "steps": [
            {
                "id": "hints",
                "bundle": "type_hints",
                "targets": targets,
                "instruction": "ADD_HINTS",
                "retries": retries,
            },
            {
                "id": "docs",
                "bundle": "docstring",
                "after": ["hints"],
                "targets": targets,
                "instruction": "ADD_DOCS",
            },
        ],
        **extra,
    }


async def run_graph(client, spec) -> tuple[str, dict]:
    started = await command(client, "remora.graph.run", {"graph": spec})
    graph_run_id = started["graph_run_id"]
    done = await eventually(
        lambda: of_type(client, "graph_completed", graph_run_id=graph_run_id),
        timeout=LONG_S,
    )
    return graph_run_id, done[0]


def step_outcomes(client, graph_run_id: str, node: str) -> dict[str, str]:
    return {
        e["step"]: e["outcome"]
        for e in of_type(client, "graph_step_finished", graph_run_id=graph_run_id)
        if e["node_id"] == node
    }


@pytest.mark.parametrize("editor", EDITORS)
async def test_two_steps_give_one_combined_proposal_per_node_and_accept_all(
    editor, workspace
):
    with ModelServer(responder=respond) as model:
        async with session(editor, workspace, settings(model)) as client:
            buffer = Buffer(client, "inventory/stock.py")
            edits = EditorEdits(client, buffer)
            count = await node_of(client, buffer, "def count")
            total = await node_of(client, buffer, "def total")
            graph_run_id, done = await run_graph(client, graph())
            assert done["outcome"] == "completed"
            assert done["counts"] == {"completed": 4, "failed": 1, "skipped": 1}
            # A checkpoint was taken before the graph started.
            kinds = [e["type"] for e in client.events]
            assert kinds.index("checkpoint_created") < kinds.index("graph_started")
            assert step_outcomes(client, graph_run_id, count) == {
                "hints": "completed",
                "docs": "completed",
            }
            # One pending proposal per node, with both steps' changes.
            pending = await command(
                client, "remora.proposals.list", {"status": "pending"}
            )
            by_node = {p["node_id"]: p for p in pending}
            assert sorted(by_node) == sorted([count, total])
            assert by_node[count]["new_source"] == (
                f"def count(x: list):\n{DOC}    return len(x)"
            )
            superseded = await command(
                client, "remora.proposals.list", {"status": "superseded"}
            )
            assert len(superseded) == 2
            status = await command(
                client, "remora.graph.status", {"graph_run_id": graph_run_id}
            )
            assert status["status"] == "completed"
            assert status["steps"][1]["nodes"][count] == "completed"
            # One progress for the graph, "k/N" reports, ended.
            runs = progress_runs(client, "Remora: doc-inventory")
            if client.editor == "visual-studio-code" or runs:
                reports = runs[0][1]
                assert reports[-2].message == "doc-inventory 6/6"
                assert reports[-1].message == "completed"

            # Accept all, after a hand edit made one proposal stale.
            buffer.replace_text("return sum(x)", "return sum(x) + 0")
            stale_id = by_node[total]["id"]
            await eventually(lambda: of_type(client, "rewrite_stale"))
            results = await command(
                client,
                "remora.proposals.accept",
                {"proposal_ids": [by_node[count]["id"], stale_id]},
            )
            assert results[0] == {"proposal_id": by_node[count]["id"], "applied": True}
            assert results[1]["applied"] is False
            assert "stale" in results[1]["reason"] or "changed" in results[1]["reason"]
            assert len(edits.requests) == 1
            assert f"def count(x: list):\n{DOC}    return len(x)" in buffer.text
            assert "return sum(x) + 0" in buffer.text


@pytest.mark.parametrize("editor", EDITORS)
@pytest.mark.parametrize("policy", ["stop_graph", "skip_downstream", "continue"])
async def test_a_node_whose_model_keeps_failing_under_each_policy(
    editor, policy, workspace
):
    with ModelServer(responder=respond) as model:
        async with session(editor, workspace, settings(model)) as client:
            buffer = Buffer(client, "inventory/stock.py")
            broken = await node_of(client, buffer, "def broken")
            graph_run_id, done = await run_graph(client, graph(policy, retries=1))
            failed_runs = of_type(client, "agent_failed", agent_id=broken)
            assert len(failed_runs) >= 2 if policy != "continue" else 3
            outcomes = step_outcomes(client, graph_run_id, broken)
            assert outcomes["hints"] == "failed"
            if policy == "stop_graph":
                assert done["outcome"] == "stopped"
                assert "docs" not in outcomes
            elif policy == "skip_downstream":
                assert done["outcome"] == "completed"
                assert outcomes["docs"] == "skipped"
                assert done["counts"]["completed"] == 4
            else:
                assert done["outcome"] == "completed"
                assert outcomes["docs"] == "failed"
                # hints twice (one retry), docs once (no retries).
                assert len(failed_runs) == 3


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_graph_that_cannot_run_says_every_problem_and_runs_nothing(
    editor, workspace
):
    with ModelServer(responder=respond) as model:
        async with session(editor, workspace, settings(model)) as client:
            bad = graph()
            bad["steps"][0]["bundle"] = "no_such_bundle"
            bad["steps"][1]["targets"] = {"path": "nowhere/*.py"}
            with pytest.raises(Exception) as problem:
                await command(client, "remora.graph.run", {"graph": bad})
            message = str(problem.value)
            assert "no bundle named 'no_such_bundle'" in message
            assert "step 'docs': its targets match no node" in message
            cyclic = graph()
            cyclic["steps"][0]["after"] = ["docs"]
            with pytest.raises(Exception) as problem:
                await command(client, "remora.graph.run", {"graph": cyclic})
            assert "cycle: hints → docs → hints" in str(problem.value)
            with pytest.raises(Exception) as problem:
                await command(client, "remora.graph.run", {"graph": graph("sometimes")})
            assert "error_policy: must be one of stop_graph" in str(problem.value)
            assert not of_type(client, "graph_started")
            assert not model.requests


async def test_the_project_graphs_and_past_graph_runs_are_listed(workspace):
    folder = workspace / ".remora" / "graphs"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "doc-inventory.yaml").write_text(json.dumps(graph()))
    (folder / "typo.yaml").write_text("name: typo\nstepz: []\n")
    with ModelServer(responder=respond) as model:
        async with session("neovim", workspace, settings(model)) as client:
            listed = await command(client, "remora.graphs.list", {})
            assert [g["name"] for g in listed] == ["doc-inventory", "typo"]
            assert listed[0] == {
                "name": "doc-inventory",
                "steps": ["hints", "docs"],
                "problems": [],
            }
            assert listed[1]["steps"] == []
            assert any("stepz" in problem for problem in listed[1]["problems"])
            assert await command(client, "remora.graph.runs", {}) == []

            graph_run_id, _ = await run_graph(client, "doc-inventory")
            runs = await command(client, "remora.graph.runs", {"limit": 5})
            assert [r["graph_run_id"] for r in runs] == [graph_run_id]
            assert runs[0]["name"] == "doc-inventory"
            assert runs[0]["status"] == "completed"
            assert runs[0]["counts"] == {"completed": 4, "failed": 1, "skipped": 1}
            assert len(runs[0]["proposals"]) == 2


@pytest.mark.parametrize("editor", EDITORS)
async def test_cancel_a_graph_mid_run(editor, workspace):
    with ModelServer(responder=respond) as model:
        async with session(editor, workspace, settings(model)) as client:
            spec = graph("continue")
            spec["steps"][0]["instruction"] = "ADD_HINTS SLOW"
            started = await command(client, "remora.graph.run", {"graph": spec})
            graph_run_id = started["graph_run_id"]
            await eventually(lambda: of_type(client, "agent_started"))
            cancelled = await command(
                client, "remora.graph.cancel", {"graph_run_id": graph_run_id}
            )
            assert cancelled == {"cancelled": True}
            done = await eventually(
                lambda: of_type(client, "graph_completed", graph_run_id=graph_run_id)
            )
            assert done[0]["outcome"] == "cancelled"
            assert of_type(client, "agent_cancelled")
            assert not of_type(client, "rewrite_proposed")
            again = await command(
                client, "remora.graph.cancel", {"graph_run_id": graph_run_id}
            )
            assert again == {"cancelled": False}


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_graph_killed_mid_run_is_reported_interrupted_at_the_next_start(
    editor, workspace
):
    with ModelServer(responder=respond) as model:
        spec = graph("continue", max_concurrency=1)
        spec["steps"][1]["instruction"] = "ADD_DOCS SLOW"
        client = await ClientServerConfig(server_command=[str(SERVER), "-v"]).start()
        try:
            record_server_messages(client)
            await client.initialize_session(
                initialize_params(
                    editor, workspace, initialization_options=settings(model)
                )
            )
            await wait_indexed(client)
            started = await command(client, "remora.graph.run", {"graph": spec})
            graph_run_id = started["graph_run_id"]
            # The first node's hints step ends; its docs step hangs on the model.
            await eventually(
                lambda: of_type(client, "graph_step_finished", step="hints"),
                timeout=LONG_S,
            )
            client._server.send_signal(signal.SIGKILL)
            await client._server.wait()
        finally:
            await stop_client(client)
        async with session(editor, workspace, settings(model)) as client:
            # Counted only now: the docs step's request, sent just before the
            # kill, may reach the model after it (counting before the kill
            # once failed: 3 == 2).
            requests = len(model.requests)
            done = await eventually(
                lambda: of_type(client, "graph_completed", graph_run_id=graph_run_id),
                timeout=LONG_S,
            )
            assert done[0]["outcome"] == "interrupted"
            assert done[0]["finished_nodes"] == []
            assert done[0]["counts"] == {"completed": 1}
            # Its status is still there, from the log: which steps ended, on
            # which nodes, and that the rest was interrupted.
            status = await command(
                client, "remora.graph.status", {"graph_run_id": graph_run_id}
            )
            assert status["status"] == "interrupted"
            assert status["counts"] == {"completed": 1, "interrupted": 5}
            hints, docs = status["steps"]
            assert hints["step"] == "hints" and docs["step"] == "docs"
            assert sorted(hints["nodes"].values()) == [
                "completed",
                "interrupted",
                "interrupted",
            ]
            assert set(docs["nodes"].values()) == {"interrupted"}
            assert set(docs["nodes"]) == set(hints["nodes"])
            # Nothing runs again unasked.
            assert not of_type(client, "agent_started")
            assert len(model.requests) == requests


# ---- attribution ---------------------------------------------------------------


@pytest.mark.parametrize("editor", EDITORS)
async def test_blame_after_accept_and_after_a_later_hand_edit(editor, workspace):
    commit_all(workspace)
    with ModelServer(responder=respond) as model:
        async with session(editor, workspace, settings(model)) as client:
            buffer = Buffer(client, "inventory/stock.py")
            EditorEdits(client, buffer)
            count = await node_of(client, buffer, "def count")
            spec = graph()
            spec["steps"] = spec["steps"][1:]
            spec["steps"][0]["after"] = []
            spec["steps"][0]["targets"] = {"ids": [count]}
            await run_graph(client, spec)
            pending = await command(
                client, "remora.proposals.list", {"status": "pending"}
            )
            proposal_id = pending[0]["id"]
            results = await command(
                client, "remora.proposals.accept", {"proposal_ids": [proposal_id]}
            )
            assert results[0]["applied"] is True
            blame = await command(client, "remora.attribution", {"uri": buffer.uri})
            # Only the docstring line was written by the agent.
            lines = [
                (b["range"]["start"]["line"], b["range"]["end"]["line"]) for b in blame
            ]
            assert lines == [(1, 2)]
            assert blame[0]["agent_id"] == count
            assert blame[0]["proposal_id"] == proposal_id
            trailers = await command(client, "remora.trailers", {})
            assert trailers == {"trailers": [f"Remora-Agent: {count} ({proposal_id})"]}

            # A person rewrites that line: it is no longer the agent's.
            buffer.replace_text('"""Documented."""', '"""Counted by hand."""')
            blame = await command(client, "remora.attribution", {"uri": buffer.uri})
            assert blame == []


# ---- checkpoints ---------------------------------------------------------------


@pytest.mark.parametrize("editor", EDITORS)
async def test_checkpoint_restore_brings_agent_state_back_and_writes_no_file(
    editor, workspace
):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            buffer = Buffer(client, "inventory/stock.py")
            count = await node_of(client, buffer, "def count")
            model.reply_tool_call("kv_set", {"key": "colour", "value": "blue"})
            model.reply_tool_call(
                "rewrite_self", {"new_source": "def count(x):\n    return len(x or [])"}
            )
            model.reply_text("Remembered.")
            first = await chat(client, count, "Remember blue")
            await finished(client, first)
            kept = await command(client, "remora.proposals.list", {"status": "pending"})
            created = await command(client, "remora.checkpoint.create", {"label": "ok"})
            checkpoint_id = created["checkpoint_id"]
            listed = await command(client, "remora.checkpoint.list", {})
            assert [c["checkpoint_id"] for c in listed] == [checkpoint_id]
            assert listed[0]["label"] == "ok"

            # Things go wrong: the agent forgets, proposes something else, and
            # a person edits the file.
            await command(client, "remora.agent.forget", {"node_id": count})
            model.reply_tool_call(
                "rewrite_self", {"new_source": "def count(x):\n    return 0"}
            )
            model.reply_text("Broke it.")
            await finished(client, await chat(client, count, "Break yourself"))
            buffer.replace_text("return sum(x)", "return sum(x) * 2")
            on_disk = (workspace / "inventory/stock.py").read_text()

            restored = await command(
                client, "remora.checkpoint.restore", {"checkpoint_id": checkpoint_id}
            )
            assert restored == {
                "restored": True,
                "files_differing": ["inventory/stock.py"],
            }
            assert (workspace / "inventory/stock.py").read_text() == on_disk
            pending = await command(
                client, "remora.proposals.list", {"status": "pending"}
            )
            assert [p["id"] for p in pending] == [kept[0]["id"]]
            assert of_type(client, "checkpoint_restored", checkpoint_id=checkpoint_id)

            # The agent remembers its conversation and its memory again.
            model.reply_tool_call("kv_get", {"key": "colour"})
            model.reply_text("Blue.")
            await finished(client, await chat(client, count, "What colour?"))
            seen = model.text_of(-1)
            assert "Remember blue" in seen
            assert "blue" in seen.split("What colour?")[-1]


def checkpoint_in_the_old_shape(database: Path, checkpoint_id: str) -> None:
    """Store the checkpoint's pending proposals as a checkpoint taken before
    migration 8 did: ``SELECT *`` rows as bare lists, without ``checks`` (nor
    the ``parts`` of migration 12).
    """
    with contextlib.closing(sqlite3.connect(database)) as db, db:
        (manifest,) = db.execute(
            "SELECT manifest FROM checkpoints WHERE id = ?", (checkpoint_id,)
        ).fetchone()
        manifest = json.loads(manifest)
        (body,) = db.execute(
            "SELECT body FROM blobs WHERE hash = ?", (manifest["proposals"],)
        ).fetchone()
        part = json.loads(body)
        assert part["columns"][-2:] == ["checks", "parts"] and part["rows"]
        old = json.dumps(
            [row[:-2] for row in part["rows"]], separators=(",", ":"), sort_keys=True
        ).encode()
        digest = hashlib.sha256(old).hexdigest()
        db.execute(
            "INSERT OR IGNORE INTO blobs (hash, body) VALUES (?, ?)", (digest, old)
        )
        manifest["proposals"] = digest
        db.execute(
            "UPDATE checkpoints SET manifest = ? WHERE id = ?",
            (json.dumps(manifest), checkpoint_id),
        )


async def test_a_checkpoint_taken_before_the_checks_column_restores_its_proposals(
    workspace,
):
    with ModelServer() as model:
        async with session("neovim", workspace, settings(model)) as client:
            buffer = Buffer(client, "inventory/stock.py")
            count = await node_of(client, buffer, "def count")
            model.reply_tool_call(
                "rewrite_self", {"new_source": "def count(x):\n    return len(x or [])"}
            )
            model.reply_text("Handled.")
            await finished(client, await chat(client, count, "Handle None"))
            [kept] = await command(
                client, "remora.proposals.list", {"status": "pending"}
            )
            created = await command(
                client, "remora.checkpoint.create", {"label": "old"}
            )
            checkpoint_id = created["checkpoint_id"]
            model.reply_tool_call(
                "rewrite_self", {"new_source": "def count(x):\n    return 0"}
            )
            model.reply_text("Broke it.")
            await finished(client, await chat(client, count, "Break yourself"))
        checkpoint_in_the_old_shape(workspace / ".remora" / "remora.db", checkpoint_id)

        async with session("neovim", workspace, settings(model)) as client:
            restored = await command(
                client, "remora.checkpoint.restore", {"checkpoint_id": checkpoint_id}
            )
            assert restored == {"restored": True, "files_differing": []}
            pending = await command(
                client, "remora.proposals.list", {"status": "pending"}
            )
            assert [p["id"] for p in pending] == [kept["id"]]
            diff = await command(
                client, "remora.proposal.diff", {"proposal_id": kept["id"]}
            )
            assert diff["status"] == "pending"
            assert diff["new_source"] == "def count(x):\n    return len(x or [])"
            assert of_type(client, "checkpoint_restored", checkpoint_id=checkpoint_id)
