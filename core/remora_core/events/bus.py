"""In-process publish/subscribe for events that are already persisted.

Consumers subscribe by event type and/or type prefix (``"agent_"`` gets every
``agent_*`` event). Each consumer has a bounded queue and its own task, so:

- a slow consumer never blocks the producer: :meth:`EventBus.publish` only
  ever ``put_nowait``s;
- when its queue overflows, the consumer does not lose events: it is marked
  behind, and once it has worked through its queue it reads what it missed
  from the event store by ``seq``, then carries on live;
- a handler that raises is logged and the consumer goes on; other consumers
  never notice;
- a consumer working through a backlog lets the rest of the loop run between
  two events, so a burst of events never holds up the editor's requests.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable

from remora_core.events.store import StoredEvent

log = logging.getLogger(__name__)

Handler = Callable[[StoredEvent], Awaitable[None] | None]
Replay = Callable[[int], Awaitable[list[StoredEvent]]]


class Consumer:
    """One subscriber of the bus with its queue and task."""

    def __init__(
        self,
        name: str,
        handler: Handler,
        types: frozenset[str] | None,
        prefixes: tuple[str, ...],
        maxsize: int,
        replay: Replay,
    ) -> None:
        self.name = name
        self.handler = handler
        self.types = types
        self.prefixes = prefixes
        self.queue: asyncio.Queue[StoredEvent] = asyncio.Queue(maxsize=maxsize)
        self.replay = replay
        self.last_seq = 0
        """The last event handed to the handler."""
        self.behind = False
        """Events were dropped from the queue: read them from the store."""
        self.task = asyncio.ensure_future(self._run())

    def wants(self, stored: StoredEvent) -> bool:
        """Whether this consumer takes ``stored``."""
        kind = stored.event.type
        if self.types is None and not self.prefixes:
            return True
        return (self.types is not None and kind in self.types) or kind.startswith(
            self.prefixes
        )

    def offer(self, stored: StoredEvent) -> None:
        """Queue ``stored`` without ever waiting."""
        if self.behind:
            return  # the catch-up read will find it
        try:
            self.queue.put_nowait(stored)
        except asyncio.QueueFull:
            self.behind = True
            log.info("bus consumer %s is behind; it will catch up", self.name)

    async def _handle(self, stored: StoredEvent) -> None:
        if stored.seq <= self.last_seq:
            return
        self.last_seq = stored.seq
        try:
            result = self.handler(stored)
            if asyncio.iscoroutine(result) or isinstance(result, asyncio.Future):
                await result
        except Exception:
            log.exception("bus consumer %s failed on event %s", self.name, stored.seq)

    async def _run(self) -> None:
        while True:
            await self._handle(await self.queue.get())
            if self.behind and self.queue.empty():
                await self._catch_up()
            elif not self.queue.empty():
                # A backlog (a cascade's hundreds of refusals) is handed over
                # one event per turn of the loop: taken from a non-empty queue
                # it never waits, and the editor's requests waited behind the
                # whole of it (bench/storm.py).
                await asyncio.sleep(0)

    async def _catch_up(self) -> None:
        while True:
            # Queue live events again *before* reading the store, so nothing
            # published during the read is missed (duplicates are skipped by seq).
            self.behind = False
            missed = await self.replay(self.last_seq)
            if not missed:
                return
            for stored in missed:
                if self.wants(stored):
                    await self._handle(stored)
                    await asyncio.sleep(0)  # as in :meth:`_run`
                else:
                    self.last_seq = max(self.last_seq, stored.seq)


class EventBus:
    """Fans persisted events out to in-process consumers."""

    def __init__(self, replay: Replay) -> None:
        self.replay = replay
        self.consumers: list[Consumer] = []

    def subscribe(
        self,
        name: str,
        handler: Handler,
        *,
        types: Iterable[str] | None = None,
        prefixes: Iterable[str] = (),
        maxsize: int = 1000,
    ) -> Consumer:
        """Start delivering matching events to ``handler`` (its own task)."""
        consumer = Consumer(
            name,
            handler,
            frozenset(types) if types is not None else None,
            tuple(prefixes),
            maxsize,
            self.replay,
        )
        self.consumers.append(consumer)
        return consumer

    def unsubscribe(self, consumer: Consumer) -> None:
        """Stop a consumer."""
        if consumer in self.consumers:
            self.consumers.remove(consumer)
        consumer.task.cancel()

    def publish(self, stored: StoredEvent) -> None:
        """Offer a persisted event to every interested consumer (never blocks)."""
        for consumer in self.consumers:
            if consumer.wants(stored):
                consumer.offer(stored)

    async def close(self) -> None:
        """Stop every consumer."""
        for consumer in self.consumers:
            consumer.task.cancel()
        await asyncio.gather(*(c.task for c in self.consumers), return_exceptions=True)
        self.consumers.clear()
