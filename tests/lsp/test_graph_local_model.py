"""A batch graph on the embedded local model, on the README's example project.

The real server, zero model configuration beyond ``provider: local``, and a
small graph — a ``docstring`` step on two functions of
``examples/inventory`` — so that it stays cheap (two agent runs). A 0.5B model
may or may not write a good docstring: what is asserted is what a person sees
either way, and that every node ends clearly — a proposal to review that only
adds a docstring, an answer without one, or a failure that says why.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from remora_core.agents.local import local_extra_installed

from tests.lsp.conftest import EDITORS, session
from tests.lsp.helpers import Buffer, eventually
from tests.lsp.test_agent_runs import (
    LOCAL_RUN_S,
    command,
    ended,
    node_of,
    of_type,
    progress_runs,
)

REPO = Path(__file__).resolve().parents[2]
GRAPH = {
    "name": "document-pricing",
    # One at a time: two requests at once on the embedded model of a 2-core
    # machine each take twice as long (and risk its request timeout).
    "max_concurrency": 1,
    "error_policy": "continue",
    "steps": [
        {
            "id": "docs",
            "bundle": "docstring",
            "targets": {"path": "inventory/pricing.py", "kind": "function"},
            "instruction": "Add a one-line docstring to this function.",
        }
    ],
}


@pytest.mark.slow
@pytest.mark.skipif(
    not local_extra_installed(),
    reason="the 'local' extra (xllamacpp + the model wheels) is not installed",
)
async def test_a_docstring_graph_on_the_example_project_with_the_embedded_model(
    tmp_path,
):
    project = tmp_path / "inventory"
    shutil.copytree(
        REPO / "examples" / "inventory",
        project,
        ignore=shutil.ignore_patterns(".remora"),
    )
    pricing = project / "inventory" / "pricing.py"
    before = pricing.read_text(encoding="utf-8")
    local = {"model": {"provider": "local"}, "swarm": {"cooldown_ms": 0}}
    async with session(EDITORS[0], project, local) as client:
        buffer = Buffer(client, "inventory/pricing.py")
        wanted = {
            await node_of(client, buffer, "def discount"): "discount",
            await node_of(client, buffer, "def with_vat"): "with_vat",
        }
        # Only two of pricing.py's functions: the third, quote, is left out.
        spec = {**GRAPH, "steps": [{**GRAPH["steps"][0]}]}
        spec["steps"][0]["targets"] = {"ids": sorted(wanted)}
        started = await command(client, "remora.graph.run", {"graph": spec})
        graph_run_id = started["graph_run_id"]
        [done] = await eventually(
            lambda: of_type(client, "graph_completed", graph_run_id=graph_run_id),
            timeout=2 * LOCAL_RUN_S,
        )

        # The graph's events: started with both nodes, a step per node, the end.
        [begun] = of_type(client, "graph_started", graph_run_id=graph_run_id)
        assert begun["node_count"] == 2
        assert sorted(begun["targets"]["docs"]) == sorted(wanted)
        steps = of_type(client, "graph_step_finished", graph_run_id=graph_run_id)
        assert sorted(s["node_id"] for s in steps) == sorted(wanted)
        assert done["outcome"] == "completed"  # "continue": a failure goes on
        assert sum(done["counts"].values()) == 2
        assert set(done["counts"]) <= {"completed", "failed"}

        # One progress for the graph: "k/N", then the outcome.
        ((_token, reports),) = await eventually(
            lambda: [
                run
                for run in progress_runs(client, "Remora: document-pricing")
                if ended(run[1])
            ]
        )
        messages = [getattr(r, "message", None) for r in reports]
        assert "document-pricing 2/2" in messages
        assert messages[-1] == "completed"

        # Each node ended clearly.
        pending = await command(client, "remora.proposals.list", {"status": "pending"})
        by_node = {p["node_id"]: p for p in pending}
        status = await command(
            client, "remora.graph.status", {"graph_run_id": graph_run_id}
        )
        for step in steps:
            node = step["node_id"]
            if step["outcome"] == "failed":
                assert step["detail"].strip(), f"{wanted[node]} failed silently"
                assert node not in by_node
            elif step["proposal_id"] is not None:
                proposal = by_node[node]
                assert proposal["id"] == step["proposal_id"]
                assert status["proposals"][node] == proposal["id"]
                diff = await command(
                    client, "remora.proposal.diff", {"proposal_id": proposal["id"]}
                )
                assert diff["new_source"].startswith(f"def {wanted[node]}(")
                guard = next(c for c in diff["checks"] if "docstring" in c["name"])
                assert guard["ok"] is True, guard
            else:  # completed without proposing: its answer is the detail
                [answered] = [
                    e
                    for e in of_type(client, "agent_completed", agent_id=node)
                    if e["run_id"]
                ]
                assert step["detail"] == answered["result"][:500]
                assert node not in by_node
            assert status["steps"][0]["nodes"][node] == step["outcome"]
        assert set(by_node) <= set(wanted)
    # Nothing is written without a person accepting it.
    assert pricing.read_text(encoding="utf-8") == before
