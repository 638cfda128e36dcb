"""One agent turn on the embedded local model (extra ``local``): the real
pipeline from a person's request to a validated proposal or a clear refusal.

The model's wording is not asserted, only what the pipeline makes of it.
"""

from __future__ import annotations

import ast

import pytest
from remora_core.agents.local import local_extra_installed

from remora_lsp.testing.model_server import ModelServer
from tests.core.agent_support import AgentHarness, of_type

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not local_extra_installed(), reason="the 'local' extra is not installed"
    ),
]


async def ask_local(tmp_path, name: str, request: str):
    """Ask one node of the shop on the embedded model; (project, events)."""
    with ModelServer() as unused:  # the harness wants one; nothing talks to it
        shop = AgentHarness(tmp_path / "shop", unused)
        project = await shop.start(
            model={"provider": "local", "base_url": None, "name": None},
            agents={"run_timeout_s": 240},
        )
        try:
            events = await shop.ask(name, request, timeout=600)
        finally:
            await shop.stop()
    assert not unused.requests
    return project, events


async def test_asking_for_a_docstring_proposes_it_with_the_code_kept(tmp_path):
    # The guarded turn is written under a grammar that keeps the code: llama.cpp
    # takes the grammar, and the model can only write the docstring.
    project, events = await ask_local(tmp_path, "total", "Add a docstring.")

    kinds = [e.type for e in events]
    assert "model_request" in kinds and "model_response" in kinds
    assert of_type(events, "model_response")[0].usage["output_tokens"] > 0
    assert kinds[-1] == "agent_completed", of_type(events, "agent_failed")
    (proposed,) = of_type(events, "rewrite_proposed")
    proposal = project.agents.services.proposals.get(proposed.proposal_id)
    (definition,) = ast.parse(proposal.new_source).body
    assert isinstance(definition, ast.FunctionDef) and ast.get_docstring(definition)
    assert ast.dump(definition.body[-1]) == ast.dump(
        ast.parse("return sum(prices)").body[0]
    )
    guard = proposal.check("docstring-only")
    assert guard is not None and guard.ok is True
    assert proposal.status == "pending" and proposal.diff.startswith("---")


async def test_a_free_request_ends_in_a_proposal_or_a_refusal(tmp_path):
    # Not guarded: the protocol's grammar (the reply ends at its code block).
    project, events = await ask_local(
        tmp_path, "total", "Return 0 when prices is empty."
    )

    kinds = [e.type for e in events]
    assert kinds[-1] in ("agent_completed", "agent_failed")
    failed = of_type(events, "agent_failed")
    assert not failed or "HTTP" not in failed[0].error, failed[0].error
    proposed = of_type(events, "rewrite_proposed")
    refused = [r for r in of_type(events, "tool_result") if not r.ok]
    assert proposed or refused, kinds
    if proposed:
        proposal = project.agents.services.proposals.get(proposed[-1].proposal_id)
        tree = ast.parse(proposal.new_source)
        assert [type(n).__name__ for n in tree.body] == ["FunctionDef"]
    else:
        assert refused[-1].tool == "rewrite_self" and refused[-1].summary
