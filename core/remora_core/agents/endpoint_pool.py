"""Which server of the model a request goes to: slots, spreading, failover.

A model may be served by several OpenAI-compatible servers (``model.endpoints``,
or ``model.base_url`` alone), each with a number of parallel slots
(``max_concurrency``; vLLM's ``--max-num-seqs``). :class:`EndpointPool` hands
each request a :class:`Server`:

- **least outstanding**: the server with the fewest requests in flight that
  has a free slot (ties: the one the turn used last, whose prompt cache
  holds the conversation, then the order of the settings);
- **backpressure**: when every server that is up is full, the request waits
  (first come, first served) for a slot to free; the runner admits no more
  turns than the servers' slots together (``runner.py``), so runs beyond them
  wait as *queued*, visible as such in ``remora.runs.list``;
- **failover**: a server that refuses a connection or times out is set aside
  (*down*) for :data:`DOWN_S`, doubled for each further failure in a row up
  to :data:`MAX_DOWN_S`, and requests go to the others; after that it is
  tried again (one success makes it up). When every server is down, a
  request goes to the one that is due back first instead of waiting: it
  fails fast, and the run's retries (``resilient.py``) back off.

Pure asyncio: the HTTP clients are the resolver's (``providers.py``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from remora_core.trust import host_of

log = logging.getLogger(__name__)

DOWN_S = 5.0
"""How long a server that refused or timed out is set aside at first."""
MAX_DOWN_S = 120.0
"""The longest it is set aside, however often it failed in a row."""


@dataclass(eq=False)
class Server:
    """One server of the model and what is in flight there."""

    url: str
    slots: int | None
    """Requests it may answer at once; None: no limit."""
    outstanding: int = 0
    failures: int = 0
    """Refusals and timeouts in a row."""
    down_until: float = 0.0
    """Monotonic time before which it is not used (when others are up)."""
    shards: list[int] = field(default_factory=list)
    """Requests in flight on each of its HTTP clients (``providers.py``)."""

    def full(self) -> bool:
        """Whether every slot is taken."""
        return self.slots is not None and self.outstanding >= self.slots

    def describe(self) -> str:
        """``host:port`` for messages."""
        return host_of(self.url)


class EndpointPool:
    """The servers of one model, with their slots and health."""

    def __init__(
        self,
        servers: list[tuple[str, int | None]],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.servers = [Server(url, slots) for url, slots in servers]
        self.clock = clock
        self._waiting: deque[asyncio.Future[None]] = deque()

    @property
    def capacity(self) -> int | None:
        """The slots of every server together (None if one has no limit)."""
        slots = [server.slots for server in self.servers]
        if not slots or None in slots:
            return None
        return sum(slot for slot in slots if slot is not None)

    @property
    def waiting(self) -> int:
        """Requests waiting for a slot."""
        return sum(1 for future in self._waiting if not future.done())

    def up(self, server: Server) -> bool:
        """Whether ``server`` may be used (not set aside, or due back)."""
        return server.down_until <= self.clock()

    def _pick(self, prefer: Server | None) -> Server | None:
        """The up server with a free slot and the fewest in flight; if every
        server is down, the one due back first; None if all up ones are full.
        """
        best: Server | None = None
        any_up = False
        for server in self.servers:
            if not self.up(server):
                continue
            any_up = True
            if server.full():
                continue
            if (
                best is None
                or server.outstanding < best.outstanding
                or (server.outstanding == best.outstanding and server is prefer)
            ):
                best = server
        if best is None and not any_up:
            soonest = min(self.servers, key=lambda s: s.down_until)
            if not soonest.full():
                return soonest
        return best

    async def acquire(self, prefer: Server | None = None) -> Server:
        """A server with a slot for one request (waits while all are full)."""
        if not self._waiting:
            server = self._pick(prefer)
            if server is not None:
                server.outstanding += 1
                return server
        while True:
            future = asyncio.get_running_loop().create_future()
            self._waiting.append(future)
            try:
                await future
            except asyncio.CancelledError:
                if future.done() and not future.cancelled():
                    self._wake()  # the slot it was woken for goes to the next
                raise
            finally:
                if future in self._waiting:
                    self._waiting.remove(future)
            server = self._pick(prefer)
            if server is not None:
                server.outstanding += 1
                self._wake()  # more slots may be free (a server came back)
                return server

    def release(self, server: Server, error: BaseException | None = None) -> None:
        """The request at ``server`` ended (``error``: why it failed, if it did)."""
        server.outstanding -= 1
        if error is None:
            if server.failures:
                log.info("model server %s answers again", server.describe())
            server.failures = 0
            server.down_until = 0.0
        elif refused(error):
            self.set_down(server, error)
        self._wake()

    def set_down(self, server: Server, error: BaseException) -> None:
        """Set ``server`` aside after a refusal or a timeout."""
        server.failures += 1
        wait = min(MAX_DOWN_S, DOWN_S * 2 ** (server.failures - 1))
        server.down_until = self.clock() + wait
        log.warning(
            "model server %s refused or timed out (%s): set aside for %.0f s",
            server.describe(),
            type(error).__name__,
            wait,
        )

    def another_up(self, server: Server) -> bool:
        """Whether a server other than ``server`` is up (a retry goes there)."""
        return any(s is not server and self.up(s) for s in self.servers)

    def _wake(self) -> None:
        while self._waiting:
            future = self._waiting.popleft()
            if not future.done():
                future.set_result(None)
                return


def refused(error: BaseException) -> bool:
    """Whether ``error`` says the server is away: the connection was refused
    or reset, or the request timed out (not an HTTP error: the server
    answered).
    """
    from pydantic_ai.exceptions import ModelConnectionError

    return isinstance(error, ModelConnectionError)
