"""Agents' turns give way to the editor's requests (``remora_lsp/protocol.py``
feeding ``remora_core/editor_first.py``): in process, through the server's own
protocol, a turn step that reaches a point where it may give way while a
request's handler runs goes on only once the answer is written.
"""

from __future__ import annotations

import asyncio

import pytest

from remora_lsp.assembly import create_server
from tests.lsp.test_model_pause import Written, message

LONG = 60.0


@pytest.fixture
def server():
    server = create_server()
    first = server.editor_first
    saved = first.unread, first.hold_s, first.max_wait_s
    first.hold_s = first.max_wait_s = LONG  # only the answer ends the wait
    try:
        yield server
    finally:
        first.unread, first.hold_s, first.max_wait_s = saved
        server.shutdown()


async def test_a_turn_step_goes_on_once_the_editors_request_is_answered(server):
    written = Written()
    server.protocol.set_writer(written)
    inside, release = asyncio.Event(), asyncio.Event()

    @server.feature("remora/test/wait")
    async def wait(ls, params) -> int:
        inside.set()
        await release.wait()
        return 42

    server.protocol.handle_message(message("remora/test/wait", msg_id=1))
    await inside.wait()
    seen: list[str] = []

    async def turn_step() -> None:
        await server.editor_first.give_way()
        seen.append(f"turn goes on after {len(written.frames)} answer(s)")

    step = asyncio.ensure_future(turn_step())
    for _ in range(20):
        await asyncio.sleep(0)
    assert not step.done(), "the turn waits while the editor waits"
    release.set()
    await asyncio.wait_for(step, LONG)
    assert seen == ["turn goes on after 1 answer(s)"]
    assert b'"result":42' in written.frames[0].replace(b" ", b"")


async def test_an_unknown_request_answered_with_an_error_holds_nothing(server):
    server.protocol.set_writer(Written())
    server.protocol.handle_message(message("remora/test/none", msg_id=2))
    await asyncio.sleep(0)
    await asyncio.wait_for(server.editor_first.give_way(), LONG)
    assert not server.editor_first.busy()
