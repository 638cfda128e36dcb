"""Agents asking agents: the answer comes back to the asker, and it ends.

``message_node`` / ``ask_parent`` send a request; the recipient's answer goes
back to the asker as an ``agent_message`` tagged ``reply`` in the same cascade,
which the cascade rules admit once per request (DESIGN §7, ``cascade.py``).
"""

from __future__ import annotations

from remora_core.events.models import HumanChat
from remora_core.swarm.pipeline import Swarm

from tests.core.swarm_support import (
    all_events,
    build_graph,
    node,
    of_type,
    quiet,
    settings,
)

TWO = "def a():\n    pass\n\n\ndef b():\n    pass\n"


async def test_a_asks_b_and_receives_b_s_answer_in_the_same_cascade():
    graph = build_graph({"pp.py": TWO})
    a, b = node(graph, "pp.py", "a").id, node(graph, "pp.py", "b").id
    seen: list[tuple[str, list[str]]] = []

    async def turn(turn):
        seen.append(
            (turn.agent_id, [s.event.__dict__.get("message", "") for s in turn.events])
        )
        if turn.agent_id == a and turn.events[0].event.type == "human_chat":
            await turn.ask(b, "What is 6 times 7?")
            return "Asked b."
        if turn.agent_id == b:
            return "42"
        return "b says 42."

    swarm = Swarm(None, graph, settings(), turn_function=turn)
    await swarm.start()
    try:
        start = await swarm.emit(HumanChat(to_agent=a, message="Ask b."))
        await quiet(swarm)
        events = await all_events(swarm)
        assert seen == [(a, ["Ask b."]), (b, ["What is 6 times 7?"]), (a, ["42"])]
        request, reply = of_type(events, "agent_message")
        assert (request.from_agent, request.to_agent, request.tags) == (
            a,
            b,
            ("request",),
        )
        assert (request.from_name, request.to_name) == ("a", "b")
        assert (reply.from_agent, reply.to_agent, reply.message) == (b, a, "42")
        assert reply.reply_to == request.id and reply.tags == ("reply",)
        assert (reply.from_name, reply.to_name) == ("b", "a")
        assert of_type(events, "trigger_refused") == []
        done = [(e.agent_id, e.result) for e in of_type(events, "agent_completed")]
        # a's first turn and b's turn end in either order; a's reading of
        # the answer is last.
        assert sorted(done[:2]) == sorted([(a, "Asked b."), (b, "42")])
        assert done[2] == (a, "b says 42.")
        assert {e.event.correlation_id for e in events} == {start.event.correlation_id}
    finally:
        await swarm.close()


async def test_a_ping_pong_of_requests_stops():
    graph = build_graph({"pp.py": TWO})
    a, b = node(graph, "pp.py", "a").id, node(graph, "pp.py", "b").id
    turns: list[str] = []

    async def ping_pong(turn):
        turns.append(turn.agent_id)
        # Every turn asks the other one again, whatever it was told.
        await turn.ask(b if turn.agent_id == a else a, "your turn")
        return f"{turn.agent_id} passes"

    swarm = Swarm(None, graph, settings(), turn_function=ping_pong)
    await swarm.start()
    try:
        await swarm.emit(HumanChat(to_agent=a, message="go"))
        await quiet(swarm)
        events = await all_events(swarm)
        # a asks b; b asks a (a cycle: refused) and answers; a reads the answer
        # and asks b again (a cycle: refused). Nothing else runs.
        assert turns == [a, b, a]
        rules = [(r.agent_id, r.rule) for r in of_type(events, "trigger_refused")]
        assert rules == [(a, "cycle"), (b, "cycle")]
        replies = [m for m in of_type(events, "agent_message") if m.reply_to]
        assert [(m.from_agent, m.to_agent) for m in replies] == [(b, a)]
    finally:
        await swarm.close()


async def test_a_reply_counts_against_the_turn_budget():
    graph = build_graph({"pp.py": TWO})
    a, b = node(graph, "pp.py", "a").id, node(graph, "pp.py", "b").id
    turns: list[str] = []

    async def turn(turn):
        turns.append(turn.agent_id)
        if turn.agent_id == a:
            await turn.ask(b, "help")
        return "ok"

    swarm = Swarm(None, graph, settings(turn_budget=2), turn_function=turn)
    await swarm.start()
    try:
        await swarm.emit(HumanChat(to_agent=a, message="go"))
        await quiet(swarm)
        events = await all_events(swarm)
        assert turns == [a, b]
        [refused] = of_type(events, "trigger_refused")
        assert (refused.agent_id, refused.rule) == (a, "turn_budget")
    finally:
        await swarm.close()


async def test_a_plain_message_gets_no_reply():
    graph = build_graph({"pp.py": TWO})
    a, b = node(graph, "pp.py", "a").id, node(graph, "pp.py", "b").id

    async def turn(turn):
        if turn.agent_id == a:
            await turn.send_message(b, "fyi")
        return "noted"

    swarm = Swarm(None, graph, settings(), turn_function=turn)
    await swarm.start()
    try:
        await swarm.emit(HumanChat(to_agent=a, message="go"))
        await quiet(swarm)
        messages = of_type(await all_events(swarm), "agent_message")
        assert [(m.from_agent, m.to_agent) for m in messages] == [(a, b)]
    finally:
        await swarm.close()
