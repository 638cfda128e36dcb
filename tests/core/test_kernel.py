"""Agent turns through the real kernel, pydantic-ai and OpenAI client, against a
scripted OpenAI-compatible server: prompts, proposals, events, both protocols.
"""

from __future__ import annotations

import pytest

from remora_lsp.testing.model_server import ModelServer
from tests.core.agent_support import AgentHarness, of_type

NEW_TOTAL = '''def total(prices):
    """Sum of the prices."""
    return sum(prices)'''


@pytest.fixture(params=[False, True], ids=["plain", "streamed"])
async def shop(request, tmp_path):
    with ModelServer() as server:
        harness = AgentHarness(tmp_path / "shop", server)
        harness.stream = request.param
        yield harness
        await harness.stop()


async def test_rewrite_self_through_native_tools(shop):
    shop.server.reply_tool_call("rewrite_self", {"new_source": NEW_TOTAL})
    shop.server.reply_text("I added a docstring.")
    project = await shop.start(model={"protocol": "tools", "stream": shop.stream})
    events = await shop.ask("total", "Add a docstring.")

    kinds = [e.type for e in events]
    assert kinds.index("agent_started") < kinds.index("model_request")
    assert kinds.index("tool_called") < kinds.index("rewrite_proposed")
    assert kinds[-1] == "agent_completed"
    assert of_type(events, "agent_completed")[0].result == "I added a docstring."
    proposed = of_type(events, "rewrite_proposed")[0]
    assert proposed.node_id == shop.id("total")
    assert '+    """Sum of the prices."""' in proposed.diff
    result = of_type(events, "tool_result")[0]
    assert result.tool == "rewrite_self" and result.ok
    responses = of_type(events, "model_response")
    assert len(responses) == 2 and responses[0].usage["input_tokens"] == 10

    proposal = project.agents.services.proposals.get(proposed.proposal_id)
    assert proposal.status == "pending"
    assert proposal.new_source == NEW_TOTAL

    first = shop.server.requests[0]
    assert first.get("stream", False) is shop.stream
    system = first["messages"][0]["content"]
    assert shop.id("total") in system and "def total(prices):" in system
    assert "Called by: Cart.add" in system
    tools = {t["function"]["name"] for t in first["tools"]}
    assert {"rewrite_self", "read_node", "ask_user", "kv_set"} <= tools
    assert first["messages"][-1]["content"] == "Add a docstring."


async def test_fenced_reply_becomes_a_proposal(shop):
    shop.server.reply_text(f"Here it is:\n```python\n{NEW_TOTAL}\n```\n")
    await shop.start(model={"protocol": "fenced", "stream": shop.stream})
    events = await shop.ask("total", "Add a docstring.")

    assert "tools" not in shop.server.requests[0]
    assert "```python" in shop.server.requests[0]["messages"][0]["content"]
    called = of_type(events, "tool_called")[0]
    assert called.tool == "rewrite_self"
    assert called.arguments["new_source"] == NEW_TOTAL
    assert of_type(events, "rewrite_proposed")
    assert of_type(events, "agent_completed")[0].result == "Here it is:"
    assert len(shop.server.requests) == 1


async def test_fenced_invalid_code_gets_one_retry(shop):
    shop.server.reply_text("```python\ndef total(prices:\n    return 1\n```")
    shop.server.reply_text(f"```python\n{NEW_TOTAL}\n```")
    await shop.start(model={"protocol": "fenced"})
    events = await shop.ask("total", "Add a docstring.")

    results = of_type(events, "tool_result")
    assert [r.ok for r in results] == [False, True]
    assert "parse" in results[0].summary.lower()
    # The retry asks again with the reason; the refused reply is left out (a
    # small model shown its own reply sends it again).
    retry = shop.server.messages(1)
    assert [m["role"] for m in retry] == ["system", "user"]
    assert retry[-1]["content"].startswith(
        "Add a docstring.\n\nYour last reply was refused: your code does not parse"
    )
    assert "corrected complete source" in retry[-1]["content"]
    assert of_type(events, "rewrite_proposed")


async def test_fenced_read_directive_continues_with_the_source(shop):
    await shop.start(model={"protocol": "fenced"})
    tax_id = shop.id("tax")
    shop.server.reply_text(f"READ: {tax_id}")
    shop.server.reply_text("tax multiplies the amount by the rate.")
    events = await shop.ask("total", "What does tax do?")

    assert "return amount * rate" in shop.server.messages(1)[-1]["content"]
    result = of_type(events, "agent_completed")[0].result
    assert result == "tax multiplies the amount by the rate."


async def test_fenced_malformed_directive_gets_a_clear_retry(shop):
    await shop.start(model={"protocol": "fenced"})
    shop.server.reply_text("MESSAGE tax please round")
    shop.server.reply_text("Fine, nothing to do.")
    events = await shop.ask("total", "Coordinate with tax.")

    retry = shop.server.messages(1)[-1]["content"]
    assert "MESSAGE rm_xxxxxxxx: your request" in retry
    assert of_type(events, "agent_completed")


async def test_a_proposal_and_the_run_survive_a_restart(shop):
    shop.server.reply_tool_call("rewrite_self", {"new_source": NEW_TOTAL})
    shop.server.reply_tool_call("rewrite_self", {"new_source": NEW_TOTAL + "  # v2"})
    shop.server.reply_text("Done.")
    await shop.start(model={"protocol": "tools"})
    events = await shop.ask("total", "Add a docstring.")
    first, second = (e.proposal_id for e in of_type(events, "rewrite_proposed"))
    run_id = of_type(events, "agent_completed")[0].run_id
    await shop.stop()

    project = await shop.start(model={"protocol": "tools"})
    proposals = project.agents.services.proposals
    assert proposals.get(first).status == "superseded"
    assert proposals.get(second).status == "pending"
    assert proposals.get(second).new_source.endswith("# v2")
    assert await project.swarm.runs.status(run_id) == "completed"


async def test_fenced_code_refused_twice_fails_the_run_with_the_reason(shop):
    shop.server.reply_text("```python\ndef total(prices:\n```")
    shop.server.reply_text("```python\nx = 1\n```")
    await shop.start(model={"protocol": "fenced"})
    events = await shop.ask("total", "Add a docstring.")

    assert [r.ok for r in of_type(events, "tool_result")] == [False, False]
    failed = of_type(events, "agent_failed")[0]
    assert failed.error.startswith("No proposal: the agent's new source was refused")
    assert "def" in failed.error  # the reason names what was expected
    assert not of_type(events, "rewrite_proposed")


async def test_a_method_sees_its_source_and_others_at_column_zero(shop):
    # The file indents a method's body twice; the model is shown (and writes
    # back) a definition at column 0, the way it would write it anywhere.
    await shop.start(model={"protocol": "fenced"})
    checkout = shop.id("Cart.checkout")
    shop.server.reply_text(f"READ: {checkout}")
    shop.server.reply_text(
        "```python\ndef add(self, price):\n    self.items.append(price)\n"
        "    return len(self.items)\n```"
    )
    events = await shop.ask("Cart.add", "Return how many items there are.")

    system = shop.server.requests[0]["messages"][0]["content"]
    assert (
        "```python\ndef add(self, price):\n    self.items.append(price)\n"
        "    return total(self.items)\n```" in system
    )
    read = shop.server.messages(1)[-1]["content"]
    assert "def checkout(self):\n    subtotal = total(self.items)\n" in read
    (proposed,) = of_type(events, "rewrite_proposed")
    assert "+        return len(self.items)" in proposed.diff


TESTS_OF_TOTAL = """from shop import total


def test_total():
    assert total([1, 2]) == 3"""
NEW_TAX = """def tax(amount, rate=0.2):
    return round(amount * rate, 2)"""


async def test_fenced_create_file_makes_a_new_file_proposal(shop):
    shop.server.reply_text(
        f"Tests for total.\nCREATE_FILE: tests/test_shop.py\n```python\n"
        f"{TESTS_OF_TOTAL}\n```\n"
    )
    project = await shop.start(model={"protocol": "fenced", "stream": shop.stream})
    events = await shop.ask("total", "Write tests for yourself.")

    assert "CREATE_FILE: <path>" in shop.server.requests[0]["messages"][0]["content"]
    called = of_type(events, "tool_called")[0]
    assert called.tool == "create_file"
    assert called.arguments["path"] == "tests/test_shop.py"
    proposed = of_type(events, "rewrite_proposed")[0]
    proposal = project.agents.services.proposals.get(proposed.proposal_id)
    assert proposal.kind == "new_file" and proposal.reasoning == "Tests for total."
    assert proposal.new_source == TESTS_OF_TOTAL + "\n"
    assert not (shop.root / "tests").exists()


async def test_fenced_change_blocks_make_one_change_set(shop):
    await shop.start(model={"protocol": "fenced"})
    reply = (
        f"SUMMARY: round the tax\nCHANGE {shop.id('tax')}\n```python\n{NEW_TAX}\n```\n"
        f"CHANGE tests/test_tax.py\n```python\nfrom shop import tax\n\n\n"
        "def test_tax():\n    assert tax(10) == 2.0\n```\n"
    )
    shop.server.reply_text(reply)
    events = await shop.ask("tax", "Round the tax, with a test.")

    called = of_type(events, "tool_called")[0]
    assert called.tool == "propose_changes"
    proposed = of_type(events, "rewrite_proposed")[0]
    proposal = shop.project.agents.services.proposals.get(proposed.proposal_id)
    assert proposal.kind == "change_set" and proposal.summary == "round the tax"
    assert [(m.path, m.kind) for m in proposal.members] == [
        ("shop.py", "rewrite"),
        ("tests/test_tax.py", "new_file"),
    ]


async def test_a_fenced_line_naming_a_tool_the_bundle_lacks_does_nothing(shop):
    """A docstring agent (no message_node, no search_nodes in its bundle) that
    writes MESSAGE and SEARCH lines sends no message and searches nothing; the
    model is told the search is not one of its tools.
    """
    await shop.start(model={"protocol": "fenced"}, bundles={"function": "docstring"})
    tax_id = shop.id("tax")
    shop.server.reply_text(f"MESSAGE {tax_id}: please round\nSEARCH: tax")
    shop.server.reply_text("Nothing to change.")
    events = await shop.ask("total", "Coordinate with tax.")

    assert not of_type(events, "agent_message")
    assert not [e for e in of_type(events, "tool_called") if e.tool != "ask_user"]
    assert (
        "search_nodes is not one of your tools"
        in shop.server.messages(1)[-1]["content"]
    )
    assert of_type(events, "agent_completed")
