"""Agents' turns give way to the editor (``remora_core/editor_first.py``): a
turn step waits while the editor's bytes wait unread or its request is
unanswered, and goes on once it is answered; nothing holds a turn for good
(old requests, a cap on each wait, keystrokes arriving meanwhile); without an
editor nothing is held at all.
"""

from __future__ import annotations

import asyncio

import pytest
from remora_core.editor_first import EDITOR_FIRST, EditorFirst
from remora_core.events.models import HumanChat
from remora_core.swarm.pipeline import Swarm

from tests.core.swarm_support import build_graph, node, quiet, settings

LONG = 60.0
"""Holds and waits longer than any test: only the editor's answer ends them."""


def editor(unread: bool = False, **limits: float) -> EditorFirst:
    first = EditorFirst(**{"hold_s": LONG, "max_wait_s": LONG, **limits})
    first.unread = lambda: unread
    return first


async def steps(count: int = 20) -> None:
    for _ in range(count):
        await asyncio.sleep(0)


async def test_a_step_waits_for_the_editors_request_to_be_answered():
    first = editor()
    first.arrived()
    first.asked(7)
    first.handled()
    step = asyncio.ensure_future(first.give_way())
    await steps()
    assert not step.done(), "the turn gave way while the request is unanswered"
    first.answered(7)
    await asyncio.wait_for(step, LONG)
    assert first.waits == 1


async def test_bytes_not_yet_read_hold_until_their_message_is_handled():
    unread = [True]
    first = EditorFirst(hold_s=LONG, max_wait_s=LONG)
    first.unread = lambda: unread[0]
    step = asyncio.ensure_future(first.give_way())
    await steps()
    assert not step.done()
    # The keystroke is read and handled (a notification); the editor types
    # the next one at once: the turn goes on between them.
    first.arrived()
    first.handled()
    await asyncio.wait_for(step, LONG)


async def test_an_idle_editor_costs_no_wait():
    first = editor()
    await first.give_way()
    assert first.waits == 0


async def test_without_an_editor_nothing_holds_a_turn():
    first = EditorFirst(hold_s=LONG, max_wait_s=LONG)  # no probe: CLI, MCP
    first.arrived()
    first.asked(1)
    await asyncio.wait_for(first.give_way(), LONG)
    assert first.waits == 0


async def test_a_long_request_no_longer_holds_turns():
    first = editor(hold_s=0.001)
    first.asked("chat")  # e.g. a command that waits for the turn itself
    await asyncio.sleep(0.01)  # older than the hold
    await asyncio.wait_for(first.give_way(), LONG)
    assert first.waits == 0


async def test_one_wait_is_bounded_whatever_the_editor_does():
    first = editor(unread=True, max_wait_s=0.01)
    first.asked(1)  # never answered, bytes forever unread
    await asyncio.wait_for(first.give_way(), LONG)
    assert first.waits == 1


@pytest.fixture
def an_editor():
    saved = EDITOR_FIRST.unread, EDITOR_FIRST.hold_s, EDITOR_FIRST.max_wait_s
    EDITOR_FIRST.unread = lambda: False
    EDITOR_FIRST.hold_s = EDITOR_FIRST.max_wait_s = LONG
    try:
        yield EDITOR_FIRST
    finally:
        EDITOR_FIRST.unread, EDITOR_FIRST.hold_s, EDITOR_FIRST.max_wait_s = saved


async def test_a_turn_starts_after_the_editors_request_is_answered(an_editor):
    graph = build_graph({"w.py": "def f():\n    pass\n"})
    agent = node(graph, "w.py", "f").id
    turns: list[str] = []

    async def record(turn):
        turns.append(turn.events[0].event.message)

    swarm = Swarm(None, graph, settings(cooldown_ms=0), turn_function=record)
    await swarm.start()
    try:
        an_editor.arrived()
        an_editor.asked("outline")
        an_editor.handled()
        await swarm.emit(HumanChat(to_agent=agent, message="hello"))
        await asyncio.sleep(0.05)
        assert turns == [], "the turn waits while the keystroke's outline is due"
        an_editor.answered("outline")
        await quiet(swarm)
        assert turns == ["hello"]
    finally:
        await swarm.close()
