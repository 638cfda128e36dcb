"""``remora graph``, ``checkpoint``, ``blame`` and ``trailers`` as a person runs
them in a terminal: without a server (the CLI opens the project itself), and
with a ``remora-lsp`` owning the project (the CLI goes through its control
socket; what it does shows in the editor, an accept edits the editor's buffer).
"""

from __future__ import annotations

import asyncio
import json
import re

import pytest
import yaml

from tests.fakes.model_server import ModelServer
from tests.gitrepo import commit_all
from tests.lsp.conftest import EDITORS, session
from tests.lsp.helpers import Buffer, eventually
from tests.lsp.test_agent_runs import LONG_S, EditorEdits, node_of, of_type, settings
from tests.lsp.test_command_line import remora
from tests.lsp.test_graphs import DOC, respond

pytestmark = pytest.mark.workspace("batch")

GRAPH = {
    "name": "docs",
    "steps": [
        {
            "id": "docs",
            "bundle": "docstring",
            "targets": {"path": "inventory/*.py", "name": "count"},
            "instruction": "ADD_DOCS",
        }
    ],
}


async def check_blame_and_trailers(workspace, node: str, proposal_id: str) -> None:
    """The docstring accepted on line 2 is the node's, and waits for a commit."""
    code, out, err = await remora(workspace, "blame", "inventory/stock.py")
    assert code == 0, err
    [row] = out.splitlines()[1:]
    assert row.split()[:3] == ["2-2", node, proposal_id]
    code, out, err = await remora(workspace, "trailers")
    assert code == 0, err
    assert out == f"Remora-Agent: {node} ({proposal_id})\n"


async def test_graph_checkpoint_blame_and_trailers_from_the_command_line(
    workspace, person_files
):
    commit_all(workspace)
    original = (workspace / "inventory/stock.py").read_text()
    graphs = workspace / ".remora" / "graphs"
    graphs.mkdir(parents=True)
    (graphs / "docs.yaml").write_text(yaml.safe_dump(GRAPH))
    with ModelServer(responder=respond) as model:
        config = person_files / "config"
        config.mkdir(parents=True, exist_ok=True)
        (config / "config.yaml").write_text(yaml.safe_dump(settings(model)))

        code, out, err = await remora(workspace, "graph", "run", "docs", "--json")
        assert code == 0, err
        status = json.loads(out)
        assert status["status"] == "completed"
        [[node, proposal_id]] = status["proposals"].items()
        assert status["steps"][0]["nodes"] == {node: "completed"}

        code, out, err = await remora(workspace, "checkpoint", "create", "mine")
        assert code == 0, err
        checkpoint_id = out.strip()
        code, out, err = await remora(workspace, "checkpoint", "list", "--json")
        labels = [c["label"] for c in json.loads(out)]
        assert labels[0] == "mine" and labels[1].startswith("before graph docs")

        code, out, err = await remora(workspace, "accept", proposal_id)
        assert code == 0, err
        assert DOC in (workspace / "inventory/stock.py").read_text()
        await check_blame_and_trailers(workspace, node, proposal_id)

        code, out, err = await remora(workspace, "checkpoint", "restore", checkpoint_id)
        assert code == 0, err
        assert out.splitlines() == [
            f"restored {checkpoint_id}",
            "differs from the checkpoint: inventory/stock.py",
        ]

        # remora revert G: a proposal undoing the graph run, accepted by hand.
        code, out, err = await remora(workspace, "revert", status["graph_run_id"])
        assert code == 0, err
        proposed, hint = out.splitlines()
        revert_id = proposed.split()[1].rstrip(":")
        assert proposed == f"proposed {revert_id}: review with remora diff {revert_id}"
        assert hint == f"accept it: remora accept {revert_id}"
        assert DOC in (workspace / "inventory/stock.py").read_text()
        code, out, err = await remora(workspace, "accept", revert_id)
        assert code == 0, err
        assert (workspace / "inventory/stock.py").read_text() == original


# ---- a server owns the project: the verbs go through its control socket ----------


@pytest.mark.parametrize("editor", EDITORS)
async def test_the_batch_verbs_through_a_running_server(editor, workspace, tmp_path):
    commit_all(workspace)
    graphs = workspace / ".remora" / "graphs"
    graphs.mkdir(parents=True)
    (graphs / "docs.yaml").write_text(yaml.safe_dump(GRAPH))
    slow = {**GRAPH, "name": "slow"}
    slow["steps"] = [{**GRAPH["steps"][0], "instruction": "ADD_DOCS SLOW"}]
    slow_file = tmp_path / "slow.yaml"  # a graph file outside the project
    slow_file.write_text(yaml.safe_dump(slow))
    with ModelServer(responder=respond) as model:
        async with session(editor, workspace, settings(model)) as client:
            sock = workspace / ".remora" / "control.sock"
            await eventually(lambda: sock.exists() or sock.is_symlink())
            buffer = Buffer(client, "inventory/stock.py")
            edits = EditorEdits(client, buffer)
            count = await node_of(client, buffer, "def count")

            # graph run: the server runs it; the editor sees it happen.
            code, out, err = await remora(workspace, "graph", "run", "docs")
            assert code == 0, err
            assert "via server" in err
            graph_run_id = out.strip()
            assert re.fullmatch(r"gr_[0-9a-f]{12}", graph_run_id)
            [done] = await eventually(
                lambda: of_type(client, "graph_completed", graph_run_id=graph_run_id),
                timeout=LONG_S,
            )
            assert done["outcome"] == "completed"
            assert done["counts"] == {"completed": 1}
            code, out, err = await remora(
                workspace, "graph", "status", graph_run_id, "--json"
            )
            assert code == 0, err
            status = json.loads(out)
            assert status["status"] == "completed"
            assert status["steps"] == [{"step": "docs", "nodes": {count: "completed"}}]
            proposal_id = status["proposals"][count]
            code, out, err = await remora(workspace, "graph", "status", graph_run_id)
            assert code == 0, err
            assert out.splitlines()[0] == f"{graph_run_id} docs: completed"
            assert out.splitlines()[2].split() == [
                "docs",
                count,
                "completed",
                proposal_id,
            ]

            # checkpoints: one taken before the graph, one by hand.
            code, out, err = await remora(workspace, "checkpoint", "create", "mine")
            assert code == 0, err
            checkpoint_id = out.strip()
            await eventually(
                lambda: of_type(
                    client, "checkpoint_created", checkpoint_id=checkpoint_id
                )
            )
            code, out, err = await remora(workspace, "checkpoint", "list")
            assert code == 0, err
            rows = out.splitlines()[1:]
            assert rows[0].startswith(checkpoint_id) and rows[0].endswith("mine")
            assert f"before graph docs ({graph_run_id})" in rows[1]

            # accept the graph run's proposals through the editor, then blame
            # and trailers see the buffer.
            code, out, err = await remora(
                workspace, "accept", "--graph-run", graph_run_id
            )
            assert code == 0, err
            assert out == f"accepted {proposal_id}: applied\n"
            assert len(edits.requests) == 1
            assert DOC in buffer.text
            await check_blame_and_trailers(workspace, count, proposal_id)

            code, out, err = await remora(
                workspace, "checkpoint", "restore", checkpoint_id
            )
            assert code == 0, err
            assert out.splitlines()[0] == f"restored {checkpoint_id}"
            await eventually(
                lambda: of_type(
                    client, "checkpoint_restored", checkpoint_id=checkpoint_id
                )
            )

            # graph run --wait from a file, cancelled from another terminal.
            waiting = asyncio.ensure_future(
                remora(workspace, "graph", "run", str(slow_file), "--wait")
            )
            [started] = await eventually(
                lambda: of_type(client, "graph_started", name="slow"), timeout=LONG_S
            )
            slow_id = started["graph_run_id"]
            await eventually(lambda: of_type(client, "agent_started", agent_id=count))
            code, out, err = await remora(workspace, "graph", "cancel", slow_id)
            assert (code, out) == (0, "cancelled\n"), err
            code, out, err = await waiting
            assert code == 1, err  # a waited-for graph that did not complete
            assert out.splitlines()[0] == f"{slow_id} slow: cancelled"
            assert out.splitlines()[2].split() == ["docs", count, "cancelled"]
            code, out, err = await remora(workspace, "graph", "cancel", slow_id)
            assert (code, out) == (0, "not running\n"), err

            # What a person typed wrong is said plainly.
            code, out, err = await remora(
                workspace, "graph", "status", "gr_000000000000"
            )
            assert code == 1 and "no graph run gr_000000000000" in err
            code, out, err = await remora(workspace, "graph", "run", "nothing")
            assert code == 2 and "no graph named 'nothing'" in err
            code, out, err = await remora(workspace, "checkpoint", "restore")
            assert code == 2 and "needs a checkpoint id" in err

    # After the server is gone, the past run's status is still there.
    code, out, err = await remora(workspace, "graph", "status", graph_run_id, "--json")
    assert code == 0, err
    assert "via local" in err
    assert json.loads(out) == status


# ---- accepting several proposals ------------------------------------------------


async def test_accept_a_graph_runs_proposals_and_several_ids(workspace, person_files):
    """``remora accept --graph-run G`` accepts the run's pending proposals and
    ``remora accept P P…`` several; one line per proposal, exit 1 when any was
    not applied.
    """
    two = {**GRAPH, "name": "two"}
    two["steps"] = [
        {**GRAPH["steps"][0], "targets": {"path": "inventory/*.py", "name": "[ct]o*"}}
    ]
    graphs = workspace / ".remora" / "graphs"
    graphs.mkdir(parents=True)
    (graphs / "two.yaml").write_text(yaml.safe_dump(two))
    with ModelServer(responder=respond) as model:
        config = person_files / "config"
        config.mkdir(parents=True, exist_ok=True)
        (config / "config.yaml").write_text(yaml.safe_dump(settings(model)))
        code, out, err = await remora(workspace, "graph", "run", "two", "--json")
        assert code == 0, err
        status = json.loads(out)
        graph_run_id = status["graph_run_id"]
        proposals = sorted(status["proposals"].values())
        assert len(proposals) == 2

        code, out, err = await remora(workspace, "accept", "--graph-run", graph_run_id)
        assert code == 0, err
        assert sorted(out.splitlines()) == [f"accepted {p}: applied" for p in proposals]
        assert (workspace / "inventory/stock.py").read_text().count(DOC) == 2

        code, out, err = await remora(workspace, "accept", "--graph-run", graph_run_id)
        assert code == 0, err
        assert out == f"graph run {graph_run_id} has no pending proposals\n"

        code, out, err = await remora(
            workspace, "accept", *proposals, "pr_000000000000", "--json"
        )
        assert code == 1, err
        answers = json.loads(out)
        assert [a["proposal_id"] for a in answers] == [*proposals, "pr_000000000000"]
        assert [a["applied"] for a in answers] == [False, False, False]
        code, out, err = await remora(workspace, "accept", *proposals)
        assert code == 1, err
        assert out.splitlines() == [
            f"not accepted {p}: proposal {p} is already accepted" for p in proposals
        ]

        code, out, err = await remora(workspace, "accept")
        assert code == 2 and "proposal id or --graph-run" in err
