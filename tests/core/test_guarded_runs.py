"""Guarded runs: a request for a docstring cannot become a change of behaviour.

The project, the kernel, pydantic-ai and the OpenAI client are real; the model
is the scripted server. Asserted: what the model is told when its rewrite is
refused, the ``agent_failed`` a person sees after a second refusal, that no
proposal is left pending, and the check a passing proposal carries.
"""

from __future__ import annotations

import pytest

from tests.core.agent_support import of_type

DOCUMENTED = '''def total(prices):
    """Sum of the prices."""
    return sum(prices)'''
CHANGED = '''def total(prices):
    """Sum of the prices."""
    return sum(prices) * 2'''
REFUSAL = (
    "you changed the code: line 3 `return sum(prices) * 2` differs from the "
    "original `return sum(prices)`; only docstrings and comments may change."
)


def fenced(source: str) -> str:
    return f"Here:\n```python\n{source}\n```"


def reply(shop, protocol: str, source: str) -> None:
    if protocol == "tools":
        shop.server.reply_tool_call("rewrite_self", {"new_source": source})
    else:
        shop.server.reply_text(fenced(source))


def told_to_model(shop, index: int) -> str:
    messages = shop.server.requests[index]["messages"]
    return "\n".join(str(m.get("content") or "") for m in messages[-2:])


@pytest.mark.parametrize("protocol", ["tools", "fenced"])
async def test_a_docstring_request_that_changes_code_is_refused_then_fails(
    shop, protocol
):
    reply(shop, protocol, CHANGED)
    reply(shop, protocol, CHANGED)
    project = await shop.start(model={"protocol": protocol})
    events = await shop.ask("total", "Add a docstring.")

    assert REFUSAL in told_to_model(shop, 1)  # the one more attempt, with why
    failed = of_type(events, "agent_failed")
    assert failed, [e.type for e in events]
    error = failed[0].error
    assert error.startswith("No proposal: asked “Add a docstring.”, where only ")
    assert "docstrings and comments may change" in error
    assert "line 3 `return sum(prices) * 2` differs" in error
    assert not of_type(events, "rewrite_proposed")
    assert project.agents.services.proposals.pending() == []


@pytest.mark.parametrize("protocol", ["tools", "fenced"])
async def test_a_refused_rewrite_corrected_becomes_a_checked_proposal(shop, protocol):
    reply(shop, protocol, CHANGED)
    reply(shop, protocol, DOCUMENTED)
    if protocol == "tools":
        shop.server.reply_text("Added a docstring.")
    project = await shop.start(model={"protocol": protocol})
    events = await shop.ask("total", "Please add a docstring")

    assert of_type(events, "agent_completed")
    (proposal,) = project.agents.services.proposals.pending()
    assert proposal.new_source == DOCUMENTED
    guard = proposal.check("docstring-only")
    assert guard is not None and guard.ok is True
    assert guard.detail == "code unchanged except docstrings"


async def test_a_free_request_is_not_guarded(shop):
    shop.server.reply_tool_call("rewrite_self", {"new_source": CHANGED})
    shop.server.reply_text("Doubled.")
    project = await shop.start(model={"protocol": "tools"})
    await shop.ask("total", "Add a docstring and double the result")

    (proposal,) = project.agents.services.proposals.pending()
    assert proposal.new_source == CHANGED
    assert proposal.check("docstring-only") is None


async def test_the_docstring_bundle_guards_whatever_is_asked(shop):
    shop.server.reply_tool_call("rewrite_self", {"new_source": CHANGED})
    shop.server.reply_tool_call("rewrite_self", {"new_source": CHANGED})
    project = await shop.start(
        model={"protocol": "tools"}, bundles={"function": "docstring"}
    )
    events = await shop.ask("total", "Make it better")

    (failed,) = of_type(events, "agent_failed")
    assert "asked “the docstring bundle: " in failed.error
    assert project.agents.services.proposals.pending() == []


async def test_a_guarded_agent_cannot_add_definitions(shop):
    shop.server.reply_tool_call(
        "propose_new_node",
        {"kind": "function", "name": "cents", "source": "def cents(x):\n    return x"},
    )
    shop.server.reply_text("Sorry.")
    project = await shop.start(model={"protocol": "tools"})
    events = await shop.ask("tax", "Document yourself")

    (result,) = of_type(events, "tool_result")
    assert not result.ok
    assert "you proposed a new definition" in result.summary
    assert project.agents.services.proposals.pending() == []


async def test_its_own_code_sent_back_ends_the_run_at_once_saying_so(shop):
    """A fenced reply with the code unchanged ("Hello" to a function's agent on
    the embedded model): the model saw nothing to change, so it is not asked
    again (it sends the same, and pressed it might invent a change); the
    person is told in one request what happened and what to do.
    """
    shop.server.reply_text(fenced("def total(prices):\n    return sum(prices)"))
    shop.server.reply_text(fenced(DOCUMENTED))  # never asked for
    project = await shop.start(model={"protocol": "fenced"})
    events = await shop.ask("total", "Hello")

    assert len(shop.server.requests) == 1
    (failed,) = of_type(events, "agent_failed")
    assert failed.error == (
        "No proposal: the model sent the code back unchanged. Ask for the "
        "change in other words, or ask a question for an answer in words."
    )
    assert project.agents.services.proposals.pending() == []
