"""The bus: by type and prefix, never blocking the producer, never losing events.

Events enter through :meth:`Swarm.emit` (persist, match, trigger, publish) on a
swarm with no agents, on a real store and in memory-only mode.
"""

from __future__ import annotations

import asyncio

import pytest
from remora_core.events.models import (
    AgentCompleted,
    AgentFailed,
    AgentStarted,
    HumanChat,
    ToolCalled,
)
from remora_core.events.store import StoredEvent
from remora_core.index.codegraph import CodeGraph
from remora_core.store import Database
from remora_core.swarm.pipeline import Swarm

from tests.core.swarm_support import TIMEOUT, eventually, settings


@pytest.fixture(params=["sqlite", "memory"])
async def swarm(request, tmp_path):
    database = await Database.open(tmp_path) if request.param == "sqlite" else None
    swarm = Swarm(database, CodeGraph(), settings())
    await swarm.start()
    yield swarm
    await swarm.close()
    if database is not None:
        await database.close()


def mixed(n: int) -> list:
    """``n`` rounds of four events of different types."""
    events = []
    for i in range(n):
        events += [
            HumanChat(to_agent="rm_x", message=f"m{i}"),
            AgentStarted(agent_id="rm_x"),
            ToolCalled(tool="read", arguments={"i": i}),
            AgentCompleted(agent_id="rm_x", result=str(i)),
        ]
    return events


async def test_consumers_get_what_they_asked_for(swarm):
    got: dict[str, list[str]] = {"all": [], "chat": [], "agent": [], "both": []}
    swarm.bus.subscribe("all", lambda s: got["all"].append(s.event.type))
    swarm.bus.subscribe(
        "chat", lambda s: got["chat"].append(s.event.type), types=["human_chat"]
    )
    swarm.bus.subscribe(
        "agent", lambda s: got["agent"].append(s.event.type), prefixes=["agent_"]
    )
    swarm.bus.subscribe(
        "both",
        lambda s: got["both"].append(s.event.type),
        types=["tool_called"],
        prefixes=["human_"],
    )
    events = mixed(5)
    for event in events:
        await swarm.emit(event)
    await eventually(lambda: len(got["all"]) == len(events))
    await eventually(lambda: len(got["both"]) == 10)
    await eventually(lambda: len(got["agent"]) == 10)
    await eventually(lambda: len(got["chat"]) == 5)
    assert got["all"] == [e.type for e in events]
    assert got["chat"] == ["human_chat"] * 5
    assert got["agent"] == ["agent_started", "agent_completed"] * 5
    assert got["both"] == ["human_chat", "tool_called"] * 5


async def test_a_slow_consumer_never_blocks_and_misses_nothing(swarm):
    gate = asyncio.Event()
    seen: list[int] = []

    async def slow(stored):
        await gate.wait()
        seen.append(stored.seq)

    fast: list[int] = []
    swarm.bus.subscribe("slow", slow, maxsize=3)
    swarm.bus.subscribe("fast", lambda s: fast.append(s.seq))
    emitted = []
    # While the slow consumer is stuck, every emit still completes.
    for n in range(300):
        stored = await asyncio.wait_for(
            swarm.emit(HumanChat(to_agent="rm_x", message=str(n))), TIMEOUT
        )
        emitted.append(stored.seq)
    assert seen == []
    gate.set()
    await eventually(lambda: len(seen) >= len(emitted))
    await asyncio.sleep(0.05)  # nothing extra arrives late
    assert seen == emitted, "every event exactly once, in seq order"
    await eventually(lambda: len(fast) == len(emitted))
    assert fast == emitted


async def test_a_slow_filtered_consumer_catches_up_with_its_types_only(swarm):
    gate = asyncio.Event()
    seen: list[tuple[int, str]] = []

    async def slow(stored):
        await gate.wait()
        seen.append((stored.seq, stored.event.type))

    swarm.bus.subscribe("slow", slow, prefixes=["agent_"], maxsize=1)
    stored = [await swarm.emit(e) for e in mixed(50)]
    gate.set()
    wanted = [
        (s.seq, s.event.type) for s in stored if s.event.type.startswith("agent_")
    ]
    await eventually(lambda: len(seen) >= len(wanted))
    await asyncio.sleep(0.05)
    assert seen == wanted


async def test_a_failing_handler_does_not_affect_others(swarm):
    good: list[int] = []
    flaky_seen: list[int] = []

    def failing(stored):
        raise RuntimeError("handler bug")

    async def flaky(stored):
        flaky_seen.append(stored.seq)
        if stored.seq % 2:
            raise ValueError("odd")

    swarm.bus.subscribe("failing", failing)
    swarm.bus.subscribe("flaky", flaky)
    swarm.bus.subscribe("good", lambda s: good.append(s.seq))
    stored = [await swarm.emit(HumanChat(to_agent="x", message="m")) for _ in range(20)]
    await eventually(lambda: len(good) == 20 and len(flaky_seen) == 20)
    assert good == [s.seq for s in stored]
    assert flaky_seen == good, "a handler that raised goes on with the next event"


async def test_unsubscribed_consumers_get_nothing_more(swarm):
    seen: list[int] = []
    consumer = swarm.bus.subscribe("c", lambda s: seen.append(s.seq))
    first = await swarm.emit(AgentFailed(agent_id="rm_x", error="e"))
    await eventually(lambda: seen == [first.seq])
    swarm.bus.unsubscribe(consumer)
    await swarm.emit(AgentFailed(agent_id="rm_x", error="e"))
    await asyncio.sleep(0.05)
    assert seen == [first.seq]


async def test_a_sleepy_consumer_with_concurrent_producers_gets_each_event_once(swarm):
    seen: list[int] = []

    async def sleepy(stored):
        await asyncio.sleep(0.001)
        seen.append(stored.seq)

    swarm.bus.subscribe("sleepy", sleepy, maxsize=2)

    async def producer(name: str) -> list[int]:
        out = []
        for n in range(40):
            out.append((await swarm.emit(HumanChat(to_agent=name, message=str(n)))).seq)
        return out

    produced = await asyncio.gather(*(producer(f"p{i}") for i in range(5)))
    everything = sorted(seq for seqs in produced for seq in seqs)
    await eventually(lambda: len(seen) >= len(everything))
    await asyncio.sleep(0.05)
    assert seen == everything


async def test_a_burst_of_events_lets_other_work_run_between_them(swarm):
    """A cascade's hundreds of refusals reach a consumer at once; an editor's
    request arriving meanwhile is served between two of them, not after all.
    """
    handled: list[int] = []
    swarm.bus.subscribe("editor", lambda s: handled.append(s.seq))
    burst = [
        StoredEvent(n, HumanChat(to_agent="rm_x", message=str(n)), (), False)
        for n in range(1, 201)
    ]
    for stored in burst:
        swarm.bus.publish(stored)
    served_after: list[int] = []
    asyncio.get_running_loop().call_soon(lambda: served_after.append(len(handled)))
    await eventually(lambda: len(handled) == len(burst))
    assert handled == [s.seq for s in burst], "every event, in order"
    assert served_after and served_after[0] < len(burst) // 10
