"""Pause the embedded model while the server answers the editor (issue 30 §3).

Why: on a two-core machine the embedded model (``local_server.py``) computes
on one core while the editor's requests are answered on the other. Its
scheduling (``SCHED_IDLE``) already gives the editor a core at once, yet
typing while the model generates stayed ~1.5 ms slower at p95 than typing
quietly (``bench/storm.py --part model``): not a wait for a core but the
caches and memory bandwidth the model shares (every token streams the
weights through the shared L3). A stopped process shares nothing, so the
model's process gets ``SIGSTOP`` when a message from the editor arrives and
``SIGCONT`` once the server has answered.

The rules, so that nothing can leave the model stopped for good or starve it:

- a pause starts when an editor message arrives (:meth:`ModelPause.arrived`)
  and ends as soon as every message that arrived since has been handled and
  every request among them answered (:meth:`handled`, :meth:`answered`; the
  resume runs on the next turn of the loop, so a notification's task and a
  request right behind it are covered);
- no pause lasts longer than :data:`MAX_PAUSE_S`, whatever the handlers do
  (a timer resumes it); requests then still unanswered are long ones (a
  command waiting on an agent) and no longer hold pauses, and the model runs
  for at least :data:`REST_S` before the next pause;
- over a longer stretch the model is stopped for at most :data:`MAX_SHARE`
  of the time beyond a burst of :data:`BURST_S` (an editor that sends
  requests back to back would otherwise keep it stopped);
- :meth:`ModelPause.close` resumes whatever is stopped; if the server itself
  is killed while the model is stopped, the model's own process group
  (``local.py``) makes the kernel send it ``SIGHUP`` and ``SIGCONT``
  (POSIX: a newly orphaned process group with a stopped member), and its
  parent watch (``local_server.py``) ends it.

Which processes: :func:`remora_core.agents.local.editor_pausable`, the
embedded models whose ``model.pause_for_editor`` allows it now (by default
only while they generate). Only the editor's messages pause (wired in
``remora_lsp/protocol.py``): the CLI, MCP and the dashboard do not.
Pure asyncio, on the loop's thread; POSIX only (a no-op elsewhere).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Iterable

log = logging.getLogger(__name__)

MAX_PAUSE_S = 0.1
"""The longest one pause may last, whatever the editor's handlers do."""
REST_S = 0.1
"""How long the model runs after a pause that hit :data:`MAX_PAUSE_S`."""
MAX_SHARE = 0.5
"""The share of time the model may be stopped beyond a burst."""
BURST_S = 2.0
"""Stopped time a burst of typing may use before :data:`MAX_SHARE` applies."""

STOP = getattr(signal, "SIGSTOP", None)
CONT = getattr(signal, "SIGCONT", None)


class Pausable(Protocol):
    """A child process (``subprocess.Popen``): ``send_signal`` does nothing
    once it has been reaped, so a reused pid is never signalled.
    """

    def send_signal(self, sig: int) -> None:
        """Send ``sig`` to the process."""
        ...

    def poll(self) -> int | None:
        """Its exit status once it ended (reaped), else None."""
        ...


class ModelPause:
    """Stops ``processes()`` while the editor's messages are handled."""

    def __init__(
        self,
        processes: Callable[[], Iterable[Pausable]],
        *,
        max_pause_s: float = MAX_PAUSE_S,
        rest_s: float = REST_S,
        max_share: float = MAX_SHARE,
        burst_s: float = BURST_S,
    ) -> None:
        self.processes = processes
        """What a pause stops now (called at each pause)."""
        self.max_pause_s = max_pause_s
        self.rest_s = rest_s
        self.max_share = max_share
        self.burst_s = burst_s
        self.pauses = 0
        """Pauses so far (for logs and tests)."""
        self._stopped: list[Pausable] = []
        self._handling = 0
        self._waiting: set[Hashable] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = 0
        self._bound: asyncio.TimerHandle | None = None
        self._resume_soon: asyncio.Handle | None = None
        self._since = 0.0
        self._rest_until = 0.0
        self._budget = burst_s
        self._budget_at = 0.0

    @property
    def paused(self) -> bool:
        """Whether processes are stopped now."""
        return bool(self._stopped)

    def arrived(self, request_id: Hashable | None = None) -> None:
        """A message from the editor arrived (``request_id``: a request to
        answer); pause until it is handled (:meth:`handled`) and answered.
        """
        self._handling += 1
        if self._resume_soon is not None:
            self._resume_soon.cancel()
            self._resume_soon = None
        if not self._stopped:
            self._pause()
        # Only a request answered while paused holds a pause: one that came
        # before (a long command) must not hold the pauses of later keystrokes.
        if request_id is not None and self._stopped:
            self._waiting.add(request_id)

    def handled(self) -> None:
        """The message of the matching :meth:`arrived` was handed to its handler."""
        self._handling = max(0, self._handling - 1)
        self._settle()

    def answered(self, request_id: Hashable) -> None:
        """The server sent the answer to ``request_id`` (any thread)."""
        loop = self._loop
        if loop is not None and threading.get_ident() != self._thread:
            loop.call_soon_threadsafe(self.answered, request_id)
            return
        self._waiting.discard(request_id)
        self._settle()

    def close(self) -> None:
        """Resume everything stopped; no pause after this (idempotent)."""
        self.processes = list
        self._resume()

    # ---- the mechanism --------------------------------------------------------------

    def _pause(self) -> None:
        if STOP is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop: no timer could bound the pause
            return
        now = loop.time()
        if now < self._rest_until or self._refill(now) <= 0:
            return
        try:
            found = list(self.processes())
        except Exception as error:  # never fail the editor's message
            log.warning("could not list the model's processes: %s", error)
            return
        if not found:
            return
        self._loop, self._thread = loop, threading.get_ident()
        for process in found:
            if process.poll() is not None:
                continue  # ended: nothing to stop
            try:
                process.send_signal(STOP)
            except OSError as error:  # gone meanwhile
                log.debug("could not pause the model: %s", error)
                continue
            self._stopped.append(process)
        if not self._stopped:
            return
        self.pauses += 1
        self._since = now
        bound = min(self.max_pause_s, self._budget)
        self._bound = loop.call_later(bound, self._hit_bound)

    def _refill(self, now: float) -> float:
        """The stopped time left (it refills at :attr:`max_share` per second)."""
        gained = (now - self._budget_at) * self.max_share
        self._budget = min(self.burst_s, self._budget + gained)
        self._budget_at = now
        return self._budget

    def _settle(self) -> None:
        """Resume on the next turn of the loop once nothing is pending."""
        if not self._stopped or self._handling or self._waiting:
            return
        if self._resume_soon is None and self._loop is not None:
            self._resume_soon = self._loop.call_soon(self._resume_if_settled)

    def _resume_if_settled(self) -> None:
        self._resume_soon = None
        if not self._handling and not self._waiting:
            self._resume()

    def _hit_bound(self) -> None:
        self._bound = None
        # Requests still unanswered are long ones: they no longer hold pauses.
        self._waiting.clear()
        self._handling = 0
        if self._loop is not None:
            self._rest_until = self._loop.time() + self.rest_s
        self._resume()

    def _resume(self) -> None:
        """Continue every stopped process; cancel the timers."""
        stopped, self._stopped = self._stopped, []
        for handle in (self._bound, self._resume_soon):
            if handle is not None:
                handle.cancel()
        self._bound = self._resume_soon = None
        if self._loop is not None and stopped:
            now = self._loop.time()
            self._budget = max(0.0, self._refill(now) - (now - self._since))
        for process in stopped:
            try:
                assert CONT is not None  # only stopped where signals exist
                process.send_signal(CONT)
            except OSError as error:  # gone meanwhile: nothing to resume
                log.debug("could not resume the model: %s", error)
