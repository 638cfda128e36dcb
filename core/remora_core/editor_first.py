"""Agents' turns give way to the editor (issue 30 §3, the storm).

Why: the editor's messages and the agents' turns share one event loop. A
turn runs in steps of Python code between its awaits (building the model's
request, reading its answer, recording the run); during a storm two slots of
turns keep the loop busy a tenth of the time in steps of up to ~2 ms. A
keystroke's request that arrived meanwhile waited for the step, and once
read, its handler and its answer each waited again behind whatever turn
steps were ready first (``bench/storm.py``: up to ~1.7 ms of turn work between
reading a request and answering it, at p95).

So a turn, at the points between its longer steps, calls :func:`give_way`:
it returns at once unless the editor is waiting — bytes from the editor not
yet handled (:attr:`EditorFirst.unread`, the server's probe of its input),
a message being handled, a request not yet answered — and then waits until
the editor is answered. The rules, so that nothing can hold turns for good:

- a request holds turns for at most :data:`HOLD_S` after it arrived (a long
  command, one that waits for a turn, must not stop the turns it waits for);
- one :func:`give_way` waits at most :data:`MAX_WAIT_S`, whatever the editor
  does (an editor typing back to back still lets every turn go on, a step
  between its messages);
- nothing is held unless the editor's door feeds it (``remora_lsp``): the
  CLI, MCP and the dashboard never hold turns, and an engine without an
  editor pays one attribute check per call.

Work nobody waits for (the agents' preload, the stored name index) goes
further: :func:`until_quiet` waits until the person has paused.

One per process (the editor is one per server; every project's turns run on
the same loop). Pure asyncio, on the loop's thread; :meth:`EditorFirst.answered`
may be called from any thread.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable

HOLD_S = 0.05
"""How long after its arrival an unanswered request still holds turns."""
MAX_WAIT_S = 0.05
"""The longest one :func:`give_way` waits."""


class EditorFirst:
    """Whether the editor is waiting, and a wait for it to be answered."""

    def __init__(self, *, hold_s: float = HOLD_S, max_wait_s: float = MAX_WAIT_S):
        self.hold_s = hold_s
        self.max_wait_s = max_wait_s
        self.unread: Callable[[], bool] | None = None
        """The editor's door: whether bytes from the editor wait to be read
        and handled (None: no editor, nothing ever holds turns)."""
        self.waits = 0
        """How many times a turn gave way (for logs and tests)."""
        self._handling = 0
        self._waiting: dict[Hashable, float] = {}
        self._idle: asyncio.Event | None = None
        self._idle_loop: asyncio.AbstractEventLoop | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = 0

    def arrived(self) -> None:
        """A message from the editor is being handled (on the loop's thread)."""
        self._handling += 1
        if self._loop is None:  # where answers sent from other threads go
            try:
                self._loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop (a protocol driven by hand)
                return
            self._thread = threading.get_ident()

    def asked(self, request_id: Hashable) -> None:
        """The message being handled is a request: it holds turns until
        :meth:`answered` (at most :attr:`hold_s`).
        """
        self._waiting[request_id] = time.monotonic()

    def handled(self) -> None:
        """The message of the matching :meth:`arrived` went to its handler."""
        self._handling = max(0, self._handling - 1)
        self._wake()

    def answered(self, request_id: Hashable) -> None:
        """The server sent the answer to ``request_id`` (any thread)."""
        loop = self._loop
        if loop is not None and threading.get_ident() != self._thread:
            loop.call_soon_threadsafe(self.answered, request_id)
            return
        if self._waiting.pop(request_id, None) is not None:
            self._wake()

    def busy(self) -> bool:
        """Whether the editor waits for the server now."""
        if self.unread is None:
            return False
        return bool(self._handling) or self._held() or self.unread()

    async def give_way(self) -> None:
        """Return at once unless the editor waits; then wait until what it
        waits for is answered, at most :attr:`max_wait_s`.

        Bytes still unread hold the wait until they are read and handled,
        requests until they are answered; messages that arrive meanwhile do
        not: an editor that sends the next keystroke as soon as it has the
        answer to the last would hold turns for good, so the turn goes on
        between them (where the editor is busy with the answer itself).
        """
        if self.unread is None or not self.busy():
            return
        self.waits += 1
        loop = asyncio.get_running_loop()
        idle = self._idle
        if idle is None or self._idle_loop is not loop:
            idle = self._idle = asyncio.Event()
            self._idle_loop = self._loop = loop
            self._thread = threading.get_ident()
        deadline = loop.time() + self.max_wait_s
        while True:
            left = deadline - loop.time()
            if left <= 0:
                return
            idle.clear()
            try:
                async with asyncio.timeout(left):
                    await idle.wait()
            except TimeoutError:
                return
            if not self._handling and not self._held():
                return

    def _held(self) -> bool:
        """Whether a request younger than :attr:`hold_s` is unanswered."""
        if self._waiting:
            old = time.monotonic() - self.hold_s
            for request_id in [r for r, at in self._waiting.items() if at < old]:
                del self._waiting[request_id]  # a long one: it no longer holds
        return bool(self._waiting)

    def _wake(self) -> None:
        if self._idle is not None and not self._handling:
            self._idle.set()


EDITOR_FIRST = EditorFirst()
"""The process's editor (fed by ``remora_lsp``)."""


async def give_way() -> None:
    """Let the editor's waiting messages be answered before the turn goes on
    (:meth:`EditorFirst.give_way` of :data:`EDITOR_FIRST`).
    """
    await EDITOR_FIRST.give_way()


async def until_quiet(last_typed: Callable[[], float], quiet_s: float) -> None:
    """Return once the person has not typed for ``quiet_s`` (``last_typed``,
    a ``time.monotonic()`` value, is read again after each wait: typing
    meanwhile moves it).
    """
    while (wait := last_typed() + quiet_s - time.monotonic()) > 0:
        await asyncio.sleep(wait)
