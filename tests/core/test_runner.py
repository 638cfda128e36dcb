"""The runner: cooldown defers and coalesces, one turn per agent at a time, a
global limit across agents, and every run recorded with how it ended.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict

from remora_core.events.models import AgentMessage, HumanChat
from remora_core.model import AgentStatus
from remora_core.swarm.pipeline import Swarm

from tests.core.swarm_support import (
    all_events,
    build_graph,
    eventually,
    node,
    of_type,
    quiet,
    settings,
)

SOURCE = "".join(f"def f{i}():\n    pass\n\n\n" for i in range(12))


def graph_and_ids(count: int = 12):
    graph = build_graph({"w.py": SOURCE})
    return graph, [node(graph, "w.py", f"f{i}").id for i in range(count)]


# ---- cooldown ----------


async def test_cooldown_defers_and_coalesces_ten_triggers_into_one_turn():
    graph, ids = graph_and_ids()
    agent = ids[0]
    turns: list[list[str]] = []

    async def record(turn):
        turns.append([s.event.message for s in turn.events])

    swarm = Swarm(None, graph, settings(cooldown_ms=500), turn_function=record)
    await swarm.start()
    try:
        await swarm.emit(HumanChat(to_agent=agent, message="first"))
        await quiet(swarm)
        assert turns == [["first"]]
        # The agent just ran: ten people's messages arrive during its cooldown,
        # each its own cascade.
        sent = [
            await swarm.emit(HumanChat(to_agent=agent, message=str(n)))
            for n in range(10)
        ]
        assert len({s.event.correlation_id for s in sent}) == 10
        await quiet(swarm)
        assert turns == [["first"], [str(n) for n in range(10)]]
        events = await all_events(swarm)
        assert of_type(events, "trigger_refused") == []
        started = of_type(events, "agent_started")
        assert started[-1].trigger_ids == tuple(s.event.id for s in sent)
    finally:
        await swarm.close()


async def test_triggers_arriving_during_a_turn_make_one_more_turn():
    graph, ids = graph_and_ids()
    agent = ids[0]
    gate = asyncio.Event()
    turns: list[list[str]] = []

    async def slow(turn):
        turns.append([s.event.message for s in turn.events])
        await gate.wait()

    swarm = Swarm(None, graph, settings(cooldown_ms=0), turn_function=slow)
    await swarm.start()
    try:
        await swarm.emit(HumanChat(to_agent=agent, message="first"))
        await eventually(lambda: len(turns) == 1)
        for n in range(10):
            await swarm.emit(HumanChat(to_agent=agent, message=str(n)))
        await asyncio.sleep(0.05)
        assert len(turns) == 1, "no second turn while the first runs"
        gate.set()
        await quiet(swarm)
        assert turns == [["first"], [str(n) for n in range(10)]]
    finally:
        await swarm.close()


# ---- serialization and concurrency ----------


async def test_turns_of_one_agent_never_overlap_and_lose_nothing():
    graph, ids = graph_and_ids()
    agent = ids[0]
    inside = 0
    most = 0
    handled: list[str] = []

    async def busy(turn):
        nonlocal inside, most
        inside += 1
        most = max(most, inside)
        await asyncio.sleep(0.01)
        handled.extend(s.event.id for s in turn.events)
        inside -= 1

    swarm = Swarm(None, graph, settings(cooldown_ms=0), turn_function=busy)
    await swarm.start()
    try:
        sent = []
        for n in range(30):
            sent.append(await swarm.emit(HumanChat(to_agent=agent, message=str(n))))
            await asyncio.sleep(0.002)
        await quiet(swarm)
        assert most == 1
        assert handled == [s.event.id for s in sent], "each trigger once, in order"
        starts = of_type(await all_events(swarm), "agent_started")
        assert 1 < len(starts) < 30, "triggers during a turn were coalesced"
    finally:
        await swarm.close()


async def test_at_most_max_concurrency_turns_run_at_once():
    graph, ids = graph_and_ids(12)
    gate = asyncio.Event()
    inside: set[str] = set()
    most = 0
    ran: list[str] = []

    async def wait_for_gate(turn):
        nonlocal most
        inside.add(turn.agent_id)
        most = max(most, len(inside))
        await gate.wait()
        inside.discard(turn.agent_id)
        ran.append(turn.agent_id)

    swarm = Swarm(None, graph, settings(max_concurrency=3), turn_function=wait_for_gate)
    await swarm.start()
    try:
        for agent in ids:
            await swarm.emit(HumanChat(to_agent=agent, message="go"))
        await eventually(lambda: len(inside) == 3)
        await asyncio.sleep(0.05)
        assert len(inside) == 3, "the others wait for a free slot"
        gate.set()
        await quiet(swarm)
        assert most == 3
        assert sorted(ran) == sorted(ids), "every agent got its turn"
    finally:
        await swarm.close()


async def test_different_agents_run_concurrently_and_each_serially():
    graph, ids = graph_and_ids(6)
    per_agent: dict[str, int] = defaultdict(int)
    worst: dict[str, int] = defaultdict(int)
    total = 0
    most = 0

    async def work(turn):
        nonlocal total, most
        per_agent[turn.agent_id] += 1
        total += 1
        worst[turn.agent_id] = max(worst[turn.agent_id], per_agent[turn.agent_id])
        most = max(most, total)
        await asyncio.sleep(0.005)
        total -= 1
        per_agent[turn.agent_id] -= 1

    swarm = Swarm(None, graph, settings(max_concurrency=4), turn_function=work)
    await swarm.start()
    try:
        for round_ in range(10):
            await asyncio.gather(
                *(
                    swarm.emit(HumanChat(to_agent=a, message=str(round_)))
                    for a in ids[:6]
                )
            )
            await asyncio.sleep(0.002)
        await quiet(swarm)
        assert max(worst.values()) == 1
        assert 1 < most <= 4
    finally:
        await swarm.close()


# ---- runs ----------


async def test_a_failing_turn_is_recorded_and_sets_the_agent_in_error(database):
    graph, ids = graph_and_ids()
    agent = ids[0]
    statuses: list[AgentStatus] = []

    async def broken(turn):
        statuses.append(turn.node.agent_status)
        if turn.events[0].event.message == "fail":
            raise ValueError("the model said no")
        return "fine"

    def on_status(node_id, status):
        graph.set_agent_status(node_id, status)

    swarm = Swarm(
        database, graph, settings(), turn_function=broken, on_status=on_status
    )
    await swarm.start()
    try:
        await swarm.emit(HumanChat(to_agent=agent, message="fail"))
        await quiet(swarm)
        events = await all_events(swarm)
        [failed] = of_type(events, "agent_failed")
        assert failed.agent_id == agent
        assert failed.error == "ValueError: the model said no"
        assert statuses == [AgentStatus.RUNNING]
        assert graph.get(agent).agent_status is AgentStatus.ERROR
        assert await swarm.runs.status(failed.run_id) == "failed"
        assert of_type(events, "agent_completed") == []

        # The agent is not stuck: its next trigger runs and completes.
        await swarm.emit(HumanChat(to_agent=agent, message="ok"))
        await quiet(swarm)
        [completed] = of_type(await all_events(swarm), "agent_completed")
        assert completed.result == "fine"
        assert await swarm.runs.status(completed.run_id) == "completed"
        assert graph.get(agent).agent_status is AgentStatus.IDLE
    finally:
        await swarm.close()


async def test_a_run_can_be_cancelled(database):
    graph, ids = graph_and_ids()
    agent = ids[0]
    running: list[str] = []
    never = asyncio.Event()

    async def stuck(turn):
        running.append(turn.run_id)
        if len(running) == 1:
            await never.wait()
        return "second"

    def on_status(node_id, status):
        graph.set_agent_status(node_id, status)

    swarm = Swarm(database, graph, settings(), turn_function=stuck, on_status=on_status)
    await swarm.start()
    try:
        await swarm.emit(HumanChat(to_agent=agent, message="go"))
        await eventually(lambda: bool(running))
        assert graph.get(agent).agent_status is AgentStatus.RUNNING
        # The run's row is committed with its agent_started event.
        for _ in range(1000):
            if await swarm.runs.status(running[0]) == "running":
                break
            await asyncio.sleep(0.005)
        assert await swarm.runs.status(running[0]) == "running"
        assert not swarm.runner.cancel_run("run_nonexistent")
        assert swarm.runner.cancel_run(running[0])
        await quiet(swarm)
        events = await all_events(swarm)
        [cancelled] = of_type(events, "agent_cancelled")
        assert (cancelled.agent_id, cancelled.run_id) == (agent, running[0])
        assert await swarm.runs.status(running[0]) == "cancelled"
        assert graph.get(agent).agent_status is AgentStatus.IDLE
        assert of_type(events, "agent_completed") == []

        await swarm.emit(HumanChat(to_agent=agent, message="again"))
        await quiet(swarm)
        [completed] = of_type(await all_events(swarm), "agent_completed")
        assert completed.run_id == running[1]
        assert await swarm.runs.status(running[1]) == "completed"
    finally:
        await swarm.close()


async def test_closing_the_swarm_cancels_running_turns(database):
    graph, ids = graph_and_ids()
    running: list[str] = []

    async def stuck(turn):
        running.append(turn.run_id)
        await asyncio.Event().wait()

    swarm = Swarm(database, graph, settings(), turn_function=stuck)
    await swarm.start()
    await swarm.emit(HumanChat(to_agent=ids[0], message="go"))
    await eventually(lambda: bool(running))
    await asyncio.wait_for(swarm.close(), 10)
    assert await swarm.runs.status(running[0]) == "cancelled"
    cancelled = await swarm.events.of_type("agent_cancelled")
    assert [c.event.run_id for c in cancelled] == running


async def test_what_a_turn_emits_belongs_to_its_run_and_cascade(database):
    graph, ids = graph_and_ids()
    a, b = ids[0], ids[1]
    runs: dict[str, str] = {}

    async def forward(turn):
        runs[turn.agent_id] = turn.run_id
        if turn.agent_id == a:
            await turn.send_message(b, "hello", tags=("greeting",))

    swarm = Swarm(database, graph, settings(), turn_function=forward)
    await swarm.start()
    try:
        start = await swarm.emit(HumanChat(to_agent=a, message="go"))
        await quiet(swarm)
        cascade = await swarm.events.for_correlation(start.event.correlation_id)
        kinds = [
            (s.event.type, s.event.agent_id or s.event.from_agent) for s in cascade
        ]
        assert kinds[:3] == [
            ("human_chat", None),
            ("agent_started", a),
            ("agent_message", a),
        ]
        message = next(s.event for s in cascade if s.event.type == "agent_message")
        assert isinstance(message, AgentMessage)
        assert (message.run_id, message.depth, message.tags) == (
            runs[a],
            1,
            ("greeting",),
        )
        b_started = next(
            s.event
            for s in cascade
            if s.event.type == "agent_started" and s.event.agent_id == b
        )
        assert b_started.trigger_ids == (message.id,)
        assert b_started.run_id == runs[b] and b_started.depth == 2
        assert {s.event.type for s in cascade} >= {"agent_completed"}
    finally:
        await swarm.close()


async def test_a_run_cancelled_while_it_is_being_recorded_ends_cancelled(database):
    graph, ids = graph_and_ids()
    agent = ids[0]
    called: list[str] = []

    async def turn(turn):
        called.append(turn.run_id)
        return "ran"

    swarm = Swarm(
        database,
        graph,
        settings(),
        turn_function=turn,
        on_status=graph.set_agent_status,
    )
    await swarm.start()
    try:
        await swarm.emit(HumanChat(to_agent=agent, message="go"))
        actor = swarm.runner.actors[agent]
        while actor.run_id is None:  # the run exists: its row is being written
            await asyncio.sleep(0)
        run_id = actor.run_id
        assert swarm.runner.cancel_run(run_id)
        await quiet(swarm)
        # The turn function may already have run (it is not held up by the
        # commit of the run's start); the run still ends cancelled.
        assert called in ([], [run_id])
        [cancelled] = of_type(await all_events(swarm), "agent_cancelled")
        assert cancelled.run_id == run_id
        assert graph.get(agent).agent_status is AgentStatus.IDLE
        assert await swarm.runs.status(run_id) in (None, "cancelled")
        assert database.available, database.problem

        # The store and the agent still work.
        await swarm.emit(HumanChat(to_agent=agent, message="again"))
        await quiet(swarm)
        [completed] = of_type(await all_events(swarm), "agent_completed")
        assert await swarm.runs.status(completed.run_id) == "completed"
    finally:
        await swarm.close()


# ---- promised runs coalesced into one turn (issue 11 part 5) -------------------------


async def _promise_five(swarm, agent) -> list[str]:
    """Five quick chats, each answered with its run id at once (as the editor's
    ``remora.agent.chat`` is), all arriving during the agent's cooldown.
    """
    run_ids = []
    for n in range(5):
        chat = HumanChat(to_agent=agent, message=f"chat {n}")
        run_ids.append(swarm.runner.reserve(chat.id))
        await swarm.emit(chat)
    return run_ids


async def test_every_promised_run_ends_and_coalesced_ones_say_who_answered(database):
    graph, ids = graph_and_ids()
    agent = ids[0]
    turns: list[tuple[str, list[str]]] = []

    async def turn(turn):
        turns.append((turn.run_id, [s.event.message for s in turn.events]))
        return "answered"

    swarm = Swarm(database, graph, settings(cooldown_ms=300), turn_function=turn)
    await swarm.start()
    try:
        await swarm.emit(HumanChat(to_agent=agent, message="first"))
        await quiet(swarm)
        run_ids = await _promise_five(swarm, agent)
        await quiet(swarm)
        assert turns[1] == (run_ids[0], [f"chat {n}" for n in range(5)])
        events = await all_events(swarm)
        completed = {e.run_id: e for e in of_type(events, "agent_completed")}
        for run_id in run_ids:  # each id the person was given ends
            assert completed[run_id].result == "answered"
            assert await swarm.runs.status(run_id) == "completed"
        assert completed[run_ids[0]].answered_by is None
        assert {completed[r].answered_by for r in run_ids[1:]} == {run_ids[0]}
    finally:
        await swarm.close()


async def test_cancelling_a_coalesced_run_cancels_the_turn_answering_it(database):
    graph, ids = graph_and_ids()
    agent = ids[0]
    started = asyncio.Event()

    async def slow(turn):
        started.set()
        await asyncio.sleep(30)

    swarm = Swarm(database, graph, settings(cooldown_ms=300), turn_function=slow)
    await swarm.start()
    try:
        await swarm.emit(HumanChat(to_agent=agent, message="first"))
        await started.wait()
        swarm.runner.cancel_run(swarm.runner.actors[agent].run_id)
        await quiet(swarm)
        started.clear()
        run_ids = await _promise_five(swarm, agent)
        await started.wait()  # one turn answers all five
        assert all(swarm.runner.is_running(run_id) for run_id in run_ids)
        assert swarm.runner.cancel_run(run_ids[3])  # not the turn's own id
        await quiet(swarm)
        events = await all_events(swarm)
        cancelled = {e.run_id: e for e in of_type(events, "agent_cancelled")}
        for run_id in run_ids:
            assert run_id in cancelled
            assert await swarm.runs.status(run_id) == "cancelled"
        assert cancelled[run_ids[3]].answered_by == run_ids[0]
        assert not any(swarm.runner.is_running(run_id) for run_id in run_ids)
    finally:
        await swarm.close()
