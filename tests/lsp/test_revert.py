"""A way back, end to end: revert a proposal, a graph run, a checkpoint's files.

The real server, the scripted model of ``test_graphs`` (a ``docs`` step adds
a docstring), both editors. A revert is a proposal: what is asserted is the
text in the buffer (unchanged until the person accepts; then the original,
with later hand edits kept) and the lines a revert refuses to overwrite.
"""

from __future__ import annotations

import pytest

from remora_lsp.testing import apply_workspace_edits
from tests.fakes.model_server import ModelServer
from tests.lsp.conftest import EDITORS, session
from tests.lsp.helpers import Buffer
from tests.lsp.test_agent_runs import command, node_of, settings
from tests.lsp.test_graphs import DOC, graph, respond, run_graph

pytestmark = pytest.mark.workspace("batch")

ORDERS = "def order(x):\n    return x\n"


def docs_on(*node_ids: str) -> dict:
    """A graph of one step: a docstring on each of ``node_ids``."""
    spec = graph("continue")
    step = spec["steps"][1]
    step["after"] = []
    step["targets"] = {"ids": list(node_ids)}
    spec["steps"] = [step]
    return spec


async def accepted_docs(client, *node_ids: str) -> tuple[str, list[str]]:
    """Run the docs graph on ``node_ids`` and accept its proposals."""
    graph_run_id, _ = await run_graph(client, docs_on(*node_ids))
    pending = await command(client, "remora.proposals.list", {"status": "pending"})
    ids = [p["id"] for p in pending]
    assert len(ids) == len(node_ids)
    results = await command(client, "remora.proposals.accept", {"proposal_ids": ids})
    assert all(r["applied"] for r in results), results
    return graph_run_id, ids


@pytest.mark.parametrize("editor", EDITORS)
async def test_revert_brings_the_original_back_keeps_hand_edits_refuses_overlaps(
    editor, workspace
):
    original = (workspace / "inventory" / "stock.py").read_text()
    with ModelServer(responder=respond) as model:
        async with session(editor, workspace, settings(model)) as client:
            buffer = Buffer(client, "inventory/stock.py")
            apply_workspace_edits(client)
            count = await node_of(client, buffer, "def count")
            _, [accepted] = await accepted_docs(client, count)
            assert f"def count(x):\n{DOC}" in buffer.text
            # Later hand edits: one in the function on a line the proposal
            # did not write, one elsewhere.
            buffer.replace_text("return len(x)", "return len(x)  # n")
            buffer.replace_text("    return x\n", "    return x or []\n")

            answer = await command(
                client, "remora.proposal.revert", {"proposal_id": accepted}
            )
            assert answer["reverted"] == [accepted]
            assert answer["refused"] == []
            [revert] = answer["proposal_ids"]
            # Nothing is written before the person accepts.
            assert DOC in buffer.text
            diff = await command(
                client, "remora.proposal.diff", {"proposal_id": revert}
            )
            assert f"-{DOC.rstrip()}" in diff["diff"]
            assert diff["status"] == "pending"
            done = await command(
                client, "remora.proposal.accept", {"proposal_id": revert}
            )
            assert done == {"applied": True}
            assert buffer.text == original.replace(
                "return len(x)", "return len(x)  # n"
            ).replace("    return x\n", "    return x or []\n")

            # An edit over what the proposal wrote: refused, lines named.
            total = await node_of(client, buffer, "def total")
            _, [second] = await accepted_docs(client, total)
            buffer.replace_text('"""Documented."""', '"""Documented well."""')
            before = buffer.text
            answer = await command(
                client, "remora.proposal.revert", {"proposal_id": second}
            )
            assert answer["proposal_ids"] == []
            [refused] = answer["refused"]
            line = before.splitlines().index('    """Documented well."""') + 1
            assert (refused["first_line"], refused["last_line"]) == (line, line)
            assert refused["path"] == "inventory/stock.py"
            assert "edited after" in refused["reason"]
            assert buffer.text == before


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_graph_run_is_reverted_as_one_set_over_two_files(editor, workspace):
    (workspace / "inventory" / "orders.py").write_text(ORDERS)
    stock = (workspace / "inventory" / "stock.py").read_text()
    with ModelServer(responder=respond) as model:
        async with session(editor, workspace, settings(model)) as client:
            first = Buffer(client, "inventory/stock.py")
            second = Buffer(client, "inventory/orders.py")
            apply_workspace_edits(client)
            count = await node_of(client, first, "def count")
            total = await node_of(client, first, "def total")
            order = await node_of(client, second, "def order")
            graph_run_id, ids = await accepted_docs(client, count, total, order)
            assert first.text.count(DOC) == 2 and DOC in second.text

            answer = await command(
                client, "remora.graph.revert", {"graph_run_id": graph_run_id}
            )
            assert sorted(answer["reverted"]) == sorted(ids)
            assert answer["refused"] == []
            reverts = answer["proposal_ids"]
            assert len(reverts) == 2  # one per file
            results = await command(
                client, "remora.proposals.accept", {"proposal_ids": reverts}
            )
            assert [r["applied"] for r in results] == [True, True]
            assert first.text == stock
            assert second.text == ORDERS


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_checkpoints_files_are_proposed_back(editor, workspace):
    original = (workspace / "inventory" / "stock.py").read_text()
    with ModelServer(responder=respond) as model:
        async with session(editor, workspace, settings(model)) as client:
            buffer = Buffer(client, "inventory/stock.py")
            apply_workspace_edits(client)
            count = await node_of(client, buffer, "def count")
            made = await command(client, "remora.checkpoint.create", {"label": "t"})
            await accepted_docs(client, count)
            buffer.replace_text("return x\n", "return x + 1\n")
            restored = await command(
                client,
                "remora.checkpoint.restore",
                {"checkpoint_id": made["checkpoint_id"], "files": True},
            )
            assert restored["restored"] is True
            assert restored["not_restored"] == []
            [proposal] = restored["proposal_ids"]
            assert DOC in buffer.text  # proposed, not written
            done = await command(
                client, "remora.proposal.accept", {"proposal_id": proposal}
            )
            assert done == {"applied": True}
            assert buffer.text == original
