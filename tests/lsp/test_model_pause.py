"""The editor's messages pause the embedded model (``remora_lsp/protocol.py``,
``remora_core/agents/model_pause.py``).

In process, through the server's own protocol: a ``sleep`` process stands in
for the model (what is under test is which messages stop it and when it goes
on), its state read from ``/proc/PID/stat`` (``T``: stopped). A request whose
handler waits shows the model stopped for as long as the editor waits for
the answer, and running again once it is sent. The real model, paused by a
person typing while it generates: ``test_model_pause_real.py``.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from remora_lsp.assembly import create_server
from tests.core import test_model_pause as stand_in
from tests.core.test_model_pause import RUNNING, becomes, state

model = stand_in.model
"""A ``sleep`` child standing in for the model (its fixture, shared)."""

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads /proc; POSIX signals"
)


class Written:
    """The editor's end of the server's output: every frame written."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.frames.append(data)

    def close(self) -> None:
        pass


def message(method: str, params: Any = None, msg_id: int | None = None) -> dict:
    found: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if msg_id is not None:
        found["id"] = msg_id
    return found


async def test_the_model_is_stopped_while_the_editor_waits_for_an_answer(model):
    server = create_server()
    written = Written()
    server.protocol.set_writer(written)
    server.model_pause.processes = lambda: [model]
    inside, release = asyncio.Event(), asyncio.Event()

    @server.feature("remora/test/wait")
    async def wait(ls, params) -> int:
        inside.set()
        await release.wait()
        return 42

    assert state(model.pid) in RUNNING
    server.protocol.handle_message(message("remora/test/wait", msg_id=1))
    await inside.wait()
    assert await becomes(model.pid, {"T"}) == "T"
    # Another message meanwhile (a keystroke) does not end the pause.
    server.protocol.handle_message(message("$/setTrace", {"value": "off"}))
    for _ in range(5):
        await asyncio.sleep(0)
    assert state(model.pid) == "T"
    release.set()
    assert await becomes(model.pid, RUNNING) in RUNNING
    assert any(b'"result":42' in frame.replace(b" ", b"") for frame in written.frames)
    assert not server.model_pause.paused
    server.shutdown()


async def test_a_notification_pauses_the_model_only_while_it_is_handled(model):
    server = create_server()
    server.protocol.set_writer(Written())
    server.model_pause.processes = lambda: [model]
    server.protocol.handle_message(message("$/setTrace", {"value": "off"}))
    assert server.model_pause.pauses == 1
    assert await becomes(model.pid, RUNNING) in RUNNING
    server.shutdown()


async def test_shutting_down_resumes_a_paused_model(model):
    server = create_server()
    server.protocol.set_writer(Written())
    server.model_pause.processes = lambda: [model]
    release = asyncio.Event()

    @server.feature("remora/test/wait")
    async def wait(ls, params) -> None:
        await release.wait()

    server.protocol.handle_message(message("remora/test/wait", msg_id=1))
    assert await becomes(model.pid, {"T"}) == "T"
    server.shutdown()
    assert await becomes(model.pid, RUNNING) in RUNNING
    release.set()
