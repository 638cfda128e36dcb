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


async def test_asking_for_a_docstring_ends_in_a_proposal_or_a_refusal(tmp_path):
    with ModelServer() as unused:  # the harness wants one; nothing talks to it
        shop = AgentHarness(tmp_path / "shop", unused)
        project = await shop.start(
            model={"provider": "local", "base_url": None, "name": None},
            agents={"run_timeout_s": 240},
        )
        try:
            events = await shop.ask(
                "total", "Add a docstring to this function.", timeout=600
            )
        finally:
            await shop.stop()
    assert not unused.requests

    kinds = [e.type for e in events]
    assert "model_request" in kinds and "model_response" in kinds
    assert of_type(events, "model_response")[0].usage["output_tokens"] > 0
    assert kinds[-1] in ("agent_completed", "agent_failed")
    proposed = of_type(events, "rewrite_proposed")
    refused = [r for r in of_type(events, "tool_result") if not r.ok]
    assert proposed or refused, kinds
    if proposed:
        proposal = project.agents.services.proposals.get(proposed[-1].proposal_id)
        tree = ast.parse(proposal.new_source)
        assert [type(n).__name__ for n in tree.body] == ["FunctionDef"]
        assert proposal.status == "pending" and proposal.diff.startswith("---")
    else:
        assert refused[-1].tool == "rewrite_self" and refused[-1].summary
