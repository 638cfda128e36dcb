"""Every core tool, called by a scripted model through the real client code.

The project, the kernel, pydantic-ai and the OpenAI client are real; the model
is a scripted OpenAI-compatible server. Each test checks what a person (or the
model) would notice: the events of the run, the proposals in the store and what
the next request to the model carried.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

import pytest

from remora_lsp.testing.model_server import Reply
from tests.core.agent_support import AgentHarness, of_type

CENTS = """def cents(amount):
    return round(amount * 100)"""


class PerAgent:
    """A responder scripted per agent, so concurrent agents never race for
    replies; an agent with nothing scripted answers "Done.".
    """

    def __init__(self, shop: AgentHarness) -> None:
        self.shop = shop
        self.scripts: dict[str, deque[Reply]] = {}

    def add(self, agent_id: str, *replies: Reply) -> None:
        self.scripts.setdefault(agent_id, deque()).extend(replies)

    def __call__(self, request: dict[str, Any]) -> Reply:
        system = str(request["messages"][0].get("content") or "")
        for agent_id, script in self.scripts.items():
            if speaks_as(self.shop, system, agent_id) and script:
                return script.popleft()
        return Reply(text="Done.")


def speaks_as(shop: AgentHarness, system: str, agent_id: str) -> bool:
    """Whether ``system`` is the system prompt of ``agent_id``'s turns: the
    tools protocol shows the agent's id, the fenced one (no ids) its name.
    """
    if f"(id {agent_id})" in system:
        return True
    node = shop.project.graph.get(agent_id) if shop.project else None
    return node is not None and f"`{node.qualified_name}` in " in system


def call(name: str, arguments: Any) -> Reply:
    """A reply calling one tool."""
    return Reply(tool_calls=[(name, arguments)])


def requests_of(shop: AgentHarness, agent_id: str) -> list[dict[str, Any]]:
    """The requests an agent's turns sent (told apart by their system prompt)."""
    return [
        r
        for r in shop.server.requests
        if speaks_as(shop, str(r["messages"][0].get("content") or ""), agent_id)
    ]


def last_tool_message(request: dict[str, Any]) -> str:
    """The content of the last tool message of a request (a tool's answer)."""
    tools = [m for m in request["messages"] if m.get("role") == "tool"]
    assert tools, f"no tool message in {request['messages']}"
    return str(tools[-1]["content"])


def text_of(request: dict[str, Any]) -> str:
    """Every message's content of a request, joined."""
    return "\n".join(str(m.get("content") or "") for m in request["messages"])


async def start(shop: AgentHarness, *, stream: bool = False, **sections: Any):
    """Start the project with the native tools protocol."""
    model = {"protocol": "tools", "stream": stream, **sections.pop("model", {})}
    return await shop.start(model=model, **sections)


# ---- rewrite_self / propose_new_node -----------------------------------------------


NEW_TOTAL = '''def total(prices):
    """Sum of the prices."""
    return sum(prices)'''


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
async def test_rewrite_self_with_bad_source_tells_the_model_why(shop, stream):
    shop.server.reply_tool_call("rewrite_self", {"new_source": "def total(prices:\n"})
    shop.server.reply_tool_call("rewrite_self", {"new_source": NEW_TOTAL})
    shop.server.reply_text("Added a docstring.")
    project = await start(shop, stream=stream)
    events = await shop.ask("total", "Add a docstring.")

    bad, good = of_type(events, "tool_result")
    assert bad.tool == "rewrite_self" and not bad.ok
    assert "does not parse" in bad.summary and "line" in bad.summary
    told = last_tool_message(shop.server.requests[1])
    assert told.startswith("Error: your code does not parse")
    assert good.ok
    (proposed,) = of_type(events, "rewrite_proposed")
    (proposal,) = project.agents.services.proposals.pending()
    assert proposal.id == proposed.proposal_id and proposal.node_id == shop.id("total")
    assert proposal.new_source == NEW_TOTAL
    assert '+    """Sum of the prices."""' in proposed.diff
    assert proposal.id in last_tool_message(shop.server.requests[2])
    assert of_type(events, "agent_completed")[0].result == "Added a docstring."


async def test_propose_new_node_after_the_agent(shop):
    shop.server.reply_tool_call(
        "propose_new_node", {"kind": "function", "name": "cents", "source": CENTS}
    )
    shop.server.reply_text("Added cents.")
    project = await start(shop)
    events = await shop.ask("tax", "Add a helper that converts to cents.")

    result = of_type(events, "tool_result")[0]
    assert result.tool == "propose_new_node" and result.ok
    proposed = of_type(events, "rewrite_proposed")[0]
    assert "+def cents(amount):" in proposed.diff
    assert "+    return round(amount * 100)" in proposed.diff
    proposal = project.agents.services.proposals.get(proposed.proposal_id)
    assert proposal.kind == "new_node" and proposal.status == "pending"
    assert "def cents(amount):" in proposal.new_source
    text = (shop.root / "shop.py").read_bytes()
    tax_end = text.index(b"return amount * rate") + len(b"return amount * rate")
    assert tax_end <= proposal.start_byte < text.index(b"class Cart")
    assert proposal.id in last_tool_message(shop.server.requests[1])


# ---- reading the graph -------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
async def test_read_node_shows_the_source_to_the_model(shop, stream):
    await start(shop, stream=stream)
    shop.server.reply_tool_call("read_node", {"node_id": shop.id("tax")})
    shop.server.reply_tool_call("read_node", {"node_id": "rm_zzzzzzzz"})
    shop.server.reply_text("tax multiplies.")
    events = await shop.ask("total", "What does tax do?")

    assert "return amount * rate" in last_tool_message(shop.server.requests[1])
    unknown = last_tool_message(shop.server.requests[2])
    assert unknown.startswith("Error: no node with id 'rm_zzzzzzzz'")
    assert [r.ok for r in of_type(events, "tool_result")] == [True, False]
    assert of_type(events, "agent_completed")[0].result == "tax multiplies."


async def test_callers_and_callees(shop):
    await start(shop)
    shop.server.reply_tool_call("get_my_callers", {})
    shop.server.reply_text("Two callers.")
    await shop.ask("total", "Who calls you?")
    callers = json.loads(last_tool_message(shop.server.requests[1]))
    assert {c["qualified_name"] for c in callers} == {"Cart.add", "Cart.checkout"}
    assert {c["id"] for c in callers} == {shop.id("Cart.add"), shop.id("Cart.checkout")}

    shop.server.reply_tool_call("get_my_callees", {})
    shop.server.reply_text("total and tax.")
    await shop.ask("Cart.checkout", "What do you call?")
    callees = json.loads(last_tool_message(shop.server.requests[-1]))
    assert {c["qualified_name"] for c in callees} == {"total", "tax"}

    shop.server.reply_tool_call("get_my_callers", {})
    shop.server.reply_text("Nobody.")
    await shop.ask("Cart.checkout", "Who calls you?")
    assert last_tool_message(shop.server.requests[-1]) == "No callers."


# ---- messages ----------------------------------------------------------------------


async def test_message_node_runs_the_target_agent(shop):
    script = PerAgent(shop)
    shop.server.responder = script
    await start(shop)
    total, tax = shop.id("total"), shop.id("tax")
    script.add(
        total,
        call("message_node", {"node_id": tax, "request": "Please round to cents."}),
        Reply(text="Asked tax."),
        # tax's answer comes back to total: its last turn.
        Reply(text="Asked tax."),
    )
    script.add(tax, Reply(text="I will round."))
    events = await shop.ask("total", "Make tax round.")

    message = of_type(events, "agent_message")[0]
    assert (message.from_agent, message.to_agent) == (total, tax)
    assert message.message == "Please round to cents."
    assert f"Sent to {tax}." == last_tool_message(requests_of(shop, total)[1])
    (request,) = requests_of(shop, tax)
    assert "Please round to cents." in request["messages"][-1]["content"]
    assert "Message from total" in request["messages"][-1]["content"]
    done = {e.agent_id: e.result for e in of_type(events, "agent_completed")}
    assert done == {total: "Asked tax.", tax: "I will round."}


async def test_message_node_to_an_unknown_id(shop):
    await start(shop)
    shop.server.reply_tool_call(
        "message_node", {"node_id": "rm_nothere", "request": "hello"}
    )
    shop.server.reply_text("Nobody there.")
    events = await shop.ask("total", "Say hello.")

    assert not of_type(events, "agent_message")
    told = last_tool_message(shop.server.requests[1])
    assert told.startswith("Error: no node with id 'rm_nothere'")


async def test_ask_parent_messages_the_class(shop):
    script = PerAgent(shop)
    shop.server.responder = script
    await start(shop)
    add, cart = shop.id("Cart.add"), shop.id("Cart")
    script.add(
        add,
        call("ask_parent", {"request": "May I keep items in a dict?"}),
        Reply(text="Asked Cart."),
    )
    events = await shop.ask("Cart.add", "Store items by name.")

    message = of_type(events, "agent_message")[0]
    assert (message.from_agent, message.to_agent) == (add, cart)
    (request,) = requests_of(shop, cart)
    assert "May I keep items in a dict?" in request["messages"][-1]["content"]
    assert {e.agent_id for e in of_type(events, "agent_completed")} == {add, cart}


async def test_send_message_to_siblings(shop):
    script = PerAgent(shop)
    shop.server.responder = script
    await start(shop)
    add = shop.id("Cart.add")
    script.add(
        add,
        call("send_message", {"to": "broadcast:siblings", "content": "I changed."}),
        Reply(text="Told them."),
    )
    events = await shop.ask("Cart.add", "Tell the others.")

    siblings = {shop.id("Cart.__init__"), shop.id("Cart.checkout")}
    messages = of_type(events, "agent_message")
    assert {m.to_agent for m in messages} == siblings
    assert {m.message for m in messages} == {"I changed."}
    for sibling in siblings:
        assert "I changed." in text_of(requests_of(shop, sibling)[0])
    assert not requests_of(shop, shop.id("Cart"))


# ---- subscriptions -----------------------------------------------------------------


async def test_subscribe_then_unsubscribe(shop):
    script = PerAgent(shop)
    shop.server.responder = script
    project = await start(shop)
    tax, total = shop.id("tax"), shop.id("total")
    script.add(
        tax,
        call("subscribe", {"event_types": ["content_changed"], "nodes": [total]}),
        Reply(text="Watching total."),
    )
    events = await shop.ask("tax", "Watch total.")
    subscribed = of_type(events, "tool_result")[0]
    assert subscribed.ok and subscribed.summary.startswith("Subscribed (")
    subscription_id = subscribed.summary.removeprefix("Subscribed (").rstrip(").")

    async def edit_total(body: str) -> list[Any]:
        before = len(await shop.events())
        path = shop.root / "shop.py"
        text = path.read_text(encoding="utf-8")
        start_at = text.index("def total(prices):")
        end_at = text.index("\n\n", start_at)
        path.write_text(
            text[:start_at] + f"def total(prices):\n    {body}" + text[end_at:],
            encoding="utf-8",
        )
        await project.disk.files_changed(changed=["shop.py"])
        await project.swarm.runner.idle()
        return (await shop.events())[before:]

    changed = await edit_total("return sum(prices) or 0")
    started = [e.agent_id for e in of_type(changed, "agent_started")]
    assert tax in started
    watched = requests_of(shop, tax)[-1]["messages"][-1]["content"]
    assert "Code you watch was modified" in watched
    assert "return sum(prices) or 0" in watched

    script.add(
        tax,
        call("unsubscribe", {"subscription_id": subscription_id}),
        Reply(text="Stopped."),
    )
    events = await shop.ask("tax", "Stop watching total.")
    assert [r.ok for r in of_type(events, "tool_result")] == [True]
    asked = len(requests_of(shop, tax))

    changed = await edit_total("return sum(prices)")
    assert of_type(changed, "content_changed")
    assert tax not in [e.agent_id for e in of_type(changed, "agent_started")]
    assert len(requests_of(shop, tax)) == asked

    script.add(
        tax,
        call("unsubscribe", {"subscription_id": subscription_id}),
        Reply(text="Already stopped."),
    )
    events = await shop.ask("tax", "Stop watching total.")
    result = of_type(events, "tool_result")[0]
    assert not result.ok and "you have no subscription" in result.summary


async def test_subscribe_needs_a_pattern(shop):
    await start(shop)
    shop.server.reply_tool_call("subscribe", {})
    shop.server.reply_text("Hm.")
    events = await shop.ask("tax", "Watch something.")

    assert not of_type(events, "tool_result")[0].ok
    assert "give at least one of" in last_tool_message(shop.server.requests[1])


# ---- memory ------------------------------------------------------------------------


async def test_kv_survives_a_restart(shop):
    await start(shop)
    shop.server.reply_tool_call("kv_set", {"key": "style", "value": {"quotes": '"'}})
    shop.server.reply_text("Remembered.")
    events = await shop.ask("total", "Remember the quote style.")
    assert of_type(events, "tool_result")[0].ok
    await shop.stop()

    await start(shop)
    shop.server.reply_tool_call("kv_get", {"key": "style"})
    shop.server.reply_tool_call("kv_get", {"key": "unknown"})
    shop.server.reply_text('Double quotes: ".')
    await shop.ask("total", "Which quote style?")
    assert json.loads(last_tool_message(shop.server.requests[-2])) == {"quotes": '"'}
    assert last_tool_message(shop.server.requests[-1]) == "null"


async def test_chat_history_carries_over_and_is_bounded(shop):
    await start(shop, agents={"history_messages": 2})
    shop.server.reply_text("The first answer.")
    await shop.ask("total", "The first question?")
    shop.server.reply_text("The second answer.")
    await shop.ask("total", "The second question?")
    second = text_of(shop.server.requests[-1])
    assert "The first question?" in second and "The first answer." in second

    shop.server.reply_text("The third answer.")
    await shop.ask("total", "The third question?")
    third = text_of(shop.server.requests[-1])
    assert "The second question?" in third and "The second answer." in third
    assert "The first question?" not in third
    assert "The first answer." not in third


# ---- asking the person -------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
async def test_ask_user_answered(shop, stream):
    project = await start(shop, stream=stream)
    shop.server.reply_tool_call(
        "ask_user", {"question": "Round or truncate?", "options": ["round", "cut"]}
    )
    shop.server.reply_text("Rounding it is.")
    await shop.send("tax", "Fix the precision.")

    blocked = await shop.wait_for("agent_blocked")
    assert blocked.agent_id == shop.id("tax")
    assert (blocked.question, blocked.options) == (
        "Round or truncate?",
        ("round", "cut"),
    )
    questions = project.agents.services.questions
    assert not questions.respond("q_unknown", "round")
    assert questions.respond(blocked.question_id, "round")
    await project.swarm.runner.idle()

    events = await shop.events()
    resumed = of_type(events, "agent_resumed")[0]
    assert (resumed.question_id, resumed.outcome) == (blocked.question_id, "answered")
    assert resumed.answer == "round"
    assert last_tool_message(shop.server.requests[1]) == "The person answered: round"
    assert of_type(events, "agent_completed")[0].result == "Rounding it is."


async def test_ask_user_times_out(shop):
    await start(shop, agents={"question_timeout_s": 0.2})
    shop.server.reply_tool_call("ask_user", {"question": "Anyone there?"})
    shop.server.reply_text("Nobody answered; I did nothing.")
    events = await shop.ask("tax", "Ask me something.")

    resumed = of_type(events, "agent_resumed")[0]
    assert resumed.outcome == "timed_out" and resumed.answer == ""
    result = of_type(events, "tool_result")[0]
    assert result.tool == "ask_user" and not result.ok
    assert "nobody answered within 0.2 s" in result.summary
    assert "nobody answered" in last_tool_message(shop.server.requests[1])
    assert of_type(events, "agent_completed")


# ---- secrets -----------------------------------------------------------------------


async def test_read_node_refuses_a_secret_file(shop):
    (shop.root / "secret_keys.py").write_text(
        'def api_key():\n    return "sk-live-0123456789"\n', encoding="utf-8"
    )
    await start(shop, secrets={"exclude": ["secret_*.py"]})
    secret = shop.id("api_key", path="secret_keys.py")
    shop.server.reply_tool_call("read_node", {"node_id": secret})
    shop.server.reply_text("I may not see it.")
    events = await shop.ask("total", "Read api_key.")

    result = of_type(events, "tool_result")[0]
    assert not result.ok and "secret_keys.py matches secrets.exclude" in result.summary
    for request in shop.server.requests:
        assert "sk-live-0123456789" not in json.dumps(request)


PEEK = '''"""Show the first line of a node's source."""
from remora import Input, external

node_id: str = Input(description="the node to read")


@external
async def read_node(node_id: str) -> str: ...


(await read_node(node_id)).splitlines()[0]
'''


async def test_pym_tool_cannot_read_a_secret_either(shop):
    (shop.root / "secret_keys.py").write_text(
        'def api_key():\n    return "sk-live-0123456789"\n', encoding="utf-8"
    )
    tools = shop.root / ".remora" / "bundles" / "peeker" / "tools"
    tools.mkdir(parents=True)
    (tools.parent / "bundle.yaml").write_text("name: peeker\n", encoding="utf-8")
    (tools / "peek.pym").write_text(PEEK, encoding="utf-8")
    await start(
        shop,
        trusted=True,
        secrets={"exclude": ["secret_*.py"]},
        bundles={"function": "peeker"},
    )
    shop.server.reply_tool_call("peek", {"node_id": shop.id("tax")})
    shop.server.reply_tool_call(
        "peek", {"node_id": shop.id("api_key", path="secret_keys.py")}
    )
    shop.server.reply_text("I may not see it.")
    events = await shop.ask("total", "Peek at tax and api_key.")

    assert "peek" in {t["function"]["name"] for t in shop.server.requests[0]["tools"]}
    first, second = of_type(events, "tool_result")
    assert first.ok and "def tax(amount, rate=0.2):" in first.summary
    assert not second.ok and "secrets.exclude" in second.summary
    assert "secrets.exclude" in last_tool_message(shop.server.requests[2])
    for request in shop.server.requests:
        assert "sk-live-0123456789" not in json.dumps(request)
    assert of_type(events, "agent_completed")[0].result == "I may not see it."


# ---- the fenced protocol's action lines --------------------------------------------


async def test_fenced_message_line(shop):
    script = PerAgent(shop)
    shop.server.responder = script
    await shop.start(model={"protocol": "fenced"})
    total, tax = shop.id("total"), shop.id("tax")
    script.add(total, Reply(text=f"I will ask.\nMESSAGE {tax}: Please round."))
    script.add(total, Reply(text="I will ask."))  # reading tax's answer
    script.add(tax, Reply(text="Rounded, in words."))
    events = await shop.ask("total", "Make tax round.")

    message = of_type(events, "agent_message")[0]
    assert (message.from_agent, message.to_agent) == (total, tax)
    assert message.message == "Please round."
    (request,) = requests_of(shop, tax)
    assert "Please round." in request["messages"][-1]["content"]
    done = {e.agent_id: e.result for e in of_type(events, "agent_completed")}
    assert done == {total: "I will ask.", tax: "Rounded, in words."}


async def test_fenced_ask_parent_line(shop):
    script = PerAgent(shop)
    shop.server.responder = script
    await shop.start(model={"protocol": "fenced"})
    add, cart = shop.id("Cart.add"), shop.id("Cart")
    script.add(add, Reply(text="ASK_PARENT: May I keep items in a dict?"))
    script.add(add, Reply(text=f"Messaged {cart}."))  # reading Cart's answer
    events = await shop.ask("Cart.add", "Store items by name.")

    message = of_type(events, "agent_message")[0]
    assert (message.from_agent, message.to_agent) == (add, cart)
    assert message.message == "May I keep items in a dict?"
    (request,) = requests_of(shop, cart)
    assert "May I keep items in a dict?" in request["messages"][-1]["content"]
    done = {e.agent_id: e.result for e in of_type(events, "agent_completed")}
    assert done[add] == f"Messaged {cart}."


async def test_fenced_ask_user_line(shop):
    project = await shop.start(model={"protocol": "fenced"})
    shop.server.reply_text("ASK_USER: Round or truncate?\nOPTIONS: round | cut")
    shop.server.reply_text("Rounding it is.")
    await shop.send("tax", "Fix the precision.")

    blocked = await shop.wait_for("agent_blocked")
    assert (blocked.question, blocked.options) == (
        "Round or truncate?",
        ("round", "cut"),
    )
    project.agents.services.questions.respond(blocked.question_id, "cut")
    await project.swarm.runner.idle()

    events = await shop.events()
    assert of_type(events, "agent_resumed")[0].outcome == "answered"
    assert "The person answered: cut" in shop.server.messages(1)[-1]["content"]
    assert of_type(events, "agent_completed")[0].result == "Rounding it is."
