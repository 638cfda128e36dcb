"""Cascades always end: adversarial turn functions against the rules of DESIGN §7.

Every turn function here would run forever without the rules. Each test checks
that the cascade stops, which turns ran, and that every refused trigger left a
``trigger_refused`` event naming its rule.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass

from remora_core.discovery import extract_source
from remora_core.events.models import (
    AgentMessage,
    ContentChanged,
    HumanChat,
    ToolCalled,
)
from remora_core.events.subscriptions import Pattern
from remora_core.index.updates import apply_extraction
from remora_core.swarm.pipeline import Swarm

from tests.core.swarm_support import (
    all_events,
    build_graph,
    node,
    of_type,
    quiet,
    settings,
)


@dataclass
class Seen:
    """One turn as the turn function saw it."""

    agent: str
    triggers: list[str]
    depth: int
    correlation: str


def functions(count: int, prefix: str = "f") -> str:
    return "".join(f"def {prefix}{i}():\n    pass\n\n\n" for i in range(count))


def methods(count: int) -> str:
    body = "".join(f"    def m{i}(self):\n        pass\n\n" for i in range(count))
    return f"class Parent:\n{body}"


def recorder(seen: list[Seen], act):
    async def turn(turn):
        seen.append(
            Seen(
                turn.agent_id,
                [s.event.type for s in turn.events],
                turn.depth,
                turn.correlation_id,
            )
        )
        await act(turn)
        return "ok"

    return turn


def refusals(events, rule: str | None = None):
    found = of_type(events, "trigger_refused")
    return [r for r in found if rule is None or r.rule == rule]


async def test_two_agents_messaging_each_other_forever_stop_at_the_cycle():
    graph = build_graph({"pp.py": "def a():\n    pass\n\n\ndef b():\n    pass\n"})
    a, b = node(graph, "pp.py", "a").id, node(graph, "pp.py", "b").id
    seen: list[Seen] = []

    async def ping_pong(turn):
        await turn.send_message(b if turn.agent_id == a else a, "your turn")

    swarm = Swarm(None, graph, settings(), turn_function=recorder(seen, ping_pong))
    await swarm.start()
    try:
        start = await swarm.emit(HumanChat(to_agent=a, message="go"))
        await quiet(swarm)
        assert [(s.agent, s.depth) for s in seen] == [(a, 1), (b, 2)]
        events = await all_events(swarm)
        [refused] = refusals(events)
        assert (refused.agent_id, refused.rule) == (a, "cycle")
        assert refused.correlation_id == start.event.correlation_id
        messages = of_type(events, "agent_message")
        assert [(m.from_agent, m.to_agent, m.depth) for m in messages] == [
            (a, b, 1),
            (b, a, 2),
        ]
        assert refused.trigger_id == messages[-1].id
        assert {e.event.correlation_id for e in events} == {
            start.event.correlation_id
        }, "everything the cascade caused carries its correlation id"

        # A second person's message is a new cascade: it runs again, and ends again.
        await swarm.emit(HumanChat(to_agent=b, message="again"))
        await quiet(swarm)
        assert [s.agent for s in seen[2:]] == [b, a]
        assert len(refusals(await all_events(swarm), "cycle")) == 2
    finally:
        await swarm.close()


async def test_a_parent_broadcasting_to_children_who_reply():
    graph = build_graph({"p.py": methods(5)})
    parent = node(graph, "p.py", "Parent").id
    children = [node(graph, "p.py", f"Parent.m{i}").id for i in range(5)]
    seen: list[Seen] = []

    async def chatter(turn):
        if turn.agent_id == parent:
            sent = await turn.send_message("broadcast:children", "everyone, report")
            assert sent == children
        else:
            assert await turn.send_message("parent", "reporting") == [parent]

    swarm = Swarm(None, graph, settings(), turn_function=recorder(seen, chatter))
    await swarm.start()
    try:
        await swarm.emit(HumanChat(to_agent=parent, message="go"))
        await quiet(swarm)
        assert Counter(s.agent for s in seen) == Counter([parent, *children])
        assert seen[0].agent == parent and seen[0].depth == 1
        assert all(s.depth == 2 for s in seen[1:])
        events = await all_events(swarm)
        replies = [m for m in of_type(events, "agent_message") if m.to_agent == parent]
        assert sorted(m.from_agent for m in replies) == sorted(children)
        refused = refusals(events)
        assert len(refused) == 5
        assert {(r.agent_id, r.rule) for r in refused} == {(parent, "cycle")}
    finally:
        await swarm.close()


async def test_siblings_broadcast_reaches_every_other_child():
    graph = build_graph({"s.py": functions(4)})
    ids = [node(graph, "s.py", f"f{i}").id for i in range(4)]
    seen: list[Seen] = []

    async def gossip(turn):
        await turn.send_message("broadcast:siblings", "psst")

    swarm = Swarm(None, graph, settings(), turn_function=recorder(seen, gossip))
    await swarm.start()
    try:
        await swarm.emit(HumanChat(to_agent=ids[0], message="start"))
        await quiet(swarm)
        # f0 reaches f1..f3 at depth 2; each of them then reaches agents that
        # already ran in this cascade: refused as cycles.
        assert Counter(s.agent for s in seen) == Counter(ids)
        events = await all_events(swarm)
        first = [m for m in of_type(events, "agent_message") if m.from_agent == ids[0]]
        assert sorted(m.to_agent for m in first) == sorted(ids[1:])
        assert {r.rule for r in refusals(events)} == {"cycle"}
        assert len(refusals(events)) == 3 * 3  # each of f1..f3 messaged 3 agents
    finally:
        await swarm.close()


async def test_fan_out_to_200_agents_stops_at_the_turn_budget(database):
    graph = build_graph({"many.py": functions(200)})
    file_id = graph.file_node("many.py").id
    children = {n.id for n in graph.children(file_id)}
    assert len(children) == 200
    seen: list[Seen] = []

    async def fan_out(turn):
        if turn.agent_id == file_id:
            assert len(await turn.send_message("broadcast:children", "all")) == 200
        else:
            await turn.send_message("parent", "done")

    swarm = Swarm(
        database, graph, settings(turn_budget=20), turn_function=recorder(seen, fan_out)
    )
    await swarm.start()
    try:
        start = await swarm.emit(HumanChat(to_agent=file_id, message="go"))
        await quiet(swarm)
        assert len(seen) == 20, "the file's turn and 19 of its children"
        assert seen[0].agent == file_id
        assert len({s.agent for s in seen}) == 20
        events = await swarm.events.for_correlation(
            start.event.correlation_id, limit=10_000
        )
        budget = refusals(events, "turn_budget")
        assert len(budget) == 200 - 19
        assert {r.agent_id for r in budget} == children - {s.agent for s in seen}
        assert all("swarm.turn_budget" in r.reason for r in budget)
        cycles = refusals(events, "cycle")
        assert len(cycles) == 19 and {r.agent_id for r in cycles} == {file_id}
        assert len(of_type(events, "agent_completed")) == 20
        assert len(of_type(events, "agent_message")) == 200 + 19
    finally:
        await swarm.close()


async def test_fan_out_to_200_agents_with_a_large_budget_ends_too():
    graph = build_graph({"k.py": methods(200)})
    parent = node(graph, "k.py", "Parent").id
    seen: list[Seen] = []

    async def fan_out(turn):
        if turn.agent_id == parent:
            await turn.send_message("broadcast:children", "all")
        else:  # every child answers the parent and pokes its next sibling
            await turn.send_message("parent", "done")
            siblings = [c.id for c in turn.swarm.graph.children(parent)]
            after = siblings[(siblings.index(turn.agent_id) + 1) % len(siblings)]
            await turn.send_message(after, "your turn")

    swarm = Swarm(
        None,
        graph,
        settings(turn_budget=1000, max_concurrency=8),
        turn_function=recorder(seen, fan_out),
    )
    await swarm.start()
    try:
        await swarm.emit(HumanChat(to_agent=parent, message="go"))
        await quiet(swarm)
        assert len(seen) == 201
        assert len({s.agent for s in seen}) == 201, "nobody ran twice"
        refused = refusals(await all_events(swarm))
        assert len(refused) == 2 * 200
        assert {r.rule for r in refused} == {"cycle"}
        assert Counter(r.agent_id for r in refused)[parent] == 200
    finally:
        await swarm.close()


async def test_a_chain_of_distinct_agents_stops_at_max_depth():
    graph = build_graph({"chain.py": functions(10)})
    ids = [node(graph, "chain.py", f"f{i}").id for i in range(10)]
    seen: list[Seen] = []

    async def pass_on(turn):
        position = ids.index(turn.agent_id)
        await turn.send_message(ids[position + 1], "next")

    swarm = Swarm(
        None, graph, settings(max_depth=5), turn_function=recorder(seen, pass_on)
    )
    await swarm.start()
    try:
        await swarm.emit(HumanChat(to_agent=ids[0], message="go"))
        await quiet(swarm)
        assert [(s.agent, s.depth) for s in seen] == [(ids[i], i + 1) for i in range(5)]
        events = await all_events(swarm)
        [refused] = refusals(events)
        assert (refused.agent_id, refused.rule) == (ids[5], "max_depth")
        assert "depth 6" in refused.reason and "max_depth" in refused.reason
    finally:
        await swarm.close()


async def test_refusals_for_orphaned_agents_and_expired_chains():
    source = "def keep():\n    pass\n\n\ndef goes():\n    pass\n"
    graph = build_graph({"o.py": source})
    keep, goes = node(graph, "o.py", "keep").id, node(graph, "o.py", "goes").id
    seen: list[Seen] = []

    async def nothing(turn):
        return None

    swarm = Swarm(None, graph, settings(), turn_function=recorder(seen, nothing))
    now = [1000.0]
    swarm.rules.clock = lambda: now[0]
    await swarm.start()
    try:
        await swarm.subscribe(goes, Pattern(event_types=("tool_called",)))
        shorter = "def keep():\n    pass\n"
        apply_extraction(
            graph,
            "o.py",
            extract_source("o.py", shorter.encode(), read_inline_ids=False),
        )
        await swarm.emit(ToolCalled(tool="x"))
        await quiet(swarm)
        [refused] = refusals(await all_events(swarm))
        assert (refused.agent_id, refused.rule) == (goes, "orphaned")
        assert seen == []

        # The same cascade may not trigger ``keep`` twice ...
        await swarm.emit(HumanChat(to_agent=keep, message="1", correlation_id="co_x"))
        await quiet(swarm)
        await swarm.emit(HumanChat(to_agent=keep, message="2", correlation_id="co_x"))
        await quiet(swarm)
        assert len(seen) == 1
        assert [r.rule for r in refusals(await all_events(swarm))] == [
            "orphaned",
            "cycle",
        ]
        # ... until its chain is older than swarm.chain_ttl_s.
        now[0] += 3601
        await swarm.emit(HumanChat(to_agent=keep, message="3", correlation_id="co_x"))
        await quiet(swarm)
        assert len(seen) == 2
    finally:
        await swarm.close()


async def test_cascade_chains_survive_a_restart(database):
    graph = build_graph({"r.py": "def a():\n    pass\n"})
    a = node(graph, "r.py", "a").id
    seen: list[Seen] = []

    async def nothing(turn):
        return None

    swarm = Swarm(database, graph, settings(), turn_function=recorder(seen, nothing))
    await swarm.start()
    await swarm.emit(HumanChat(to_agent=a, message="1", correlation_id="co_r"))
    await quiet(swarm)
    await swarm.close()

    again = Swarm(database, graph, settings(), turn_function=recorder(seen, nothing))
    await again.start()
    try:
        await again.emit(HumanChat(to_agent=a, message="2", correlation_id="co_r"))
        await quiet(again)
        assert len(seen) == 1
        refused = await again.events.of_type("trigger_refused")
        assert [r.event.rule for r in refused] == ["cycle"]
    finally:
        await again.close()


async def test_agents_following_refusals_or_their_own_node_do_not_loop():
    graph = build_graph({"f.py": "def a():\n    pass\n\n\ndef b():\n    pass\n"})
    a, b = node(graph, "f.py", "a").id, node(graph, "f.py", "b").id
    seen: list[Seen] = []

    async def nothing(turn):
        return None

    swarm = Swarm(None, graph, settings(), turn_function=recorder(seen, nothing))
    await swarm.start()
    try:
        # a follows everything about its node (its own turns' events included),
        # b watches every refusal.
        await swarm.subscribe(a, Pattern(nodes=(a,)))
        await swarm.subscribe(b, Pattern(event_types=("trigger_refused",)))
        await asyncio.wait_for(swarm.emit(HumanChat(to_agent=a, message="go")), 10)
        await quiet(swarm)
        assert [s.agent for s in seen] == [a, b]
        assert seen[1].triggers == ["trigger_refused"]
        events = await all_events(swarm)
        by_id = {s.event.id: s.event for s in events}
        refused = refusals(events)
        assert refused, "a's own events were refused as cycles"
        assert {r.rule for r in refused} == {"cycle"}
        assert all(by_id[r.trigger_id].type != "trigger_refused" for r in refused)
        assert len(events) < 50
    finally:
        await swarm.close()


async def test_a_muted_agent_stays_muted_after_a_restart_and_only_a_person_wakes_it(
    database,
):
    graph = build_graph({"m.py": "def a():\n    pass\n\n\ndef b():\n    pass\n"})
    a, b = node(graph, "m.py", "a").id, node(graph, "m.py", "b").id
    seen: list[Seen] = []

    async def nothing(turn):
        return None

    swarm = Swarm(database, graph, settings(), turn_function=recorder(seen, nothing))
    await swarm.start()
    assert await swarm.mute(a, True) is True
    assert await swarm.mute(a, True) is False  # already
    await swarm.close()

    again = Swarm(database, graph, settings(), turn_function=recorder(seen, nothing))
    await again.start()
    try:
        await again.emit(AgentMessage(from_agent=b, to_agent=a, message="psst"))
        await quiet(again)
        assert seen == []
        # Silently: no refusal event each time (a muted node's code is typed in).
        assert await again.events.of_type("trigger_refused") == []
        await again.emit(HumanChat(to_agent=a, message="you there?"))
        await quiet(again)
        assert [s.triggers for s in seen] == [["human_chat"]]
        assert await again.mute(a, False) is True
        await again.emit(AgentMessage(from_agent=b, to_agent=a, message="again"))
        await quiet(again)
        assert [s.triggers for s in seen][-1] == ["agent_message"]
    finally:
        await again.close()


async def test_an_edit_followed_by_many_over_the_budget_is_one_refusal_naming_them(
    database,
):
    """500 callers following an edited function: the agents over the budget
    are named in one ``trigger_refused``, not one event each; every agent
    either ran or is named.
    """
    graph = build_graph({"many.py": functions(40)})
    followed = node(graph, "many.py", "f0").id
    everyone = {n.id for n in graph.children(graph.file_node("many.py").id)}
    seen: list[Seen] = []

    async def look(turn):
        return None

    swarm = Swarm(
        database, graph, settings(turn_budget=5), turn_function=recorder(seen, look)
    )
    await swarm.start()
    try:
        for agent in everyone - {followed}:
            await swarm.subscribe(
                agent, Pattern(event_types=("content_changed",), nodes=(followed,))
            )
        edit = await swarm.emit(
            ContentChanged(path="many.py", node_ids=(followed,), change="modified")
        )
        await quiet(swarm)
        events = await all_events(swarm)
        (refused,) = refusals(events, "turn_budget")
        assert refused.trigger_id == edit.event.id
        assert refused.agent_id == refused.agent_ids[0]
        ran = {s.agent for s in seen}
        assert len(ran) == 5
        assert set(refused.agent_ids) == everyone - ran
        assert len(refused.agent_ids) == 35
        # Each refused agent's history shows it.
        last = await swarm.events.for_node(refused.agent_ids[-1], limit=10)
        assert [s.event.type for s in last] == ["trigger_refused"]
    finally:
        await swarm.close()
