"""The ``history`` facade: the event log, queried and followed live, and a
node's conversation (``remora_core.history.conversation``: who said what to
its agent, and what it answered, texts uncut).

:meth:`History.follow` subscribes to the bus *before* replaying the log from
``since_seq``, then yields the live events it has not yet yielded, so no event
between the replay and the live stream is lost or repeated (events are
ordered by ``seq``). A slow follower's queue is bounded; when it overflows the
follower catches up from the store instead of losing events.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING, Any

from remora_core.history.conversation import conversation

if TYPE_CHECKING:
    from remora_core.events.store import StoredEvent
    from remora_core.front.startup import Startup

log = logging.getLogger(__name__)

REPLAY_BATCH = 1000
FOLLOW_QUEUE = 10_000
_followers = itertools.count(1)


class History:
    """The event log of one project."""

    def __init__(self, startup: Startup) -> None:
        self._startup = startup

    @property
    def last_seq(self) -> int:
        """The ``seq`` of the newest event (0 before the start)."""
        parts = self._startup.now()
        return parts.swarm.events.last_seq if parts is not None else 0

    async def conversation(
        self, node_id: str, limit: int = 200
    ) -> list[dict[str, Any]]:
        """The latest ``limit`` entries of a node's conversation, oldest first."""
        parts = await self._startup.parts()
        return await conversation(parts.swarm, node_id, limit)

    async def query(
        self,
        *,
        since_seq: int | None = None,
        node_id: str | None = None,
        run_id: str | None = None,
        event_type: str | None = None,
        limit: int = 100,
    ) -> list[StoredEvent]:
        """Events, oldest first: the last ``limit`` matching, or those after
        ``since_seq``.
        """
        events = (await self._startup.parts()).swarm.events
        if node_id is not None and since_seq is None:
            found = list(reversed(await events.for_node(node_id, limit * 4)))
        else:
            start = (
                since_seq
                if since_seq is not None
                else max(0, events.last_seq - limit * 20)
            )
            found = await events.since(start, REPLAY_BATCH * 10)
        found = [s for s in found if _matches(s, node_id, run_id, event_type)]
        return found[:limit] if since_seq is not None else found[-limit:]

    async def follow(
        self, since_seq: int | None = None
    ) -> AsyncGenerator[StoredEvent, None]:
        """Every event after ``since_seq`` (None: from now on), forever."""
        swarm = (await self._startup.parts()).swarm
        queue: asyncio.Queue[StoredEvent] = asyncio.Queue(FOLLOW_QUEUE)
        overflow = asyncio.Event()

        def offer(stored: StoredEvent) -> None:
            try:
                queue.put_nowait(stored)
            except asyncio.QueueFull:
                overflow.set()

        consumer = swarm.bus.subscribe(f"follower {next(_followers)}", offer)
        last = swarm.events.last_seq if since_seq is None else since_seq
        try:
            while True:
                if since_seq is not None or overflow.is_set():
                    overflow.clear()
                    async for stored in self._replay(last):
                        last = stored.seq
                        yield stored
                    since_seq = None
                stored = await queue.get()
                if stored.seq > last:
                    last = stored.seq
                    yield stored
        finally:
            swarm.bus.unsubscribe(consumer)

    async def _replay(self, after: int) -> AsyncIterator[StoredEvent]:
        events = (await self._startup.parts()).swarm.events
        while True:
            batch = await events.since(after, REPLAY_BATCH)
            for stored in batch:
                after = stored.seq
                yield stored
            if len(batch) < REPLAY_BATCH:
                return


def _matches(
    stored: StoredEvent, node_id: str | None, run_id: str | None, event_type: str | None
) -> bool:
    event = stored.event
    if event_type is not None and event.type != event_type:
        # ``agent_*`` matches every type starting with ``agent_``
        prefix = event_type[:-1] if event_type.endswith("*") else None
        if prefix is None or not event.type.startswith(prefix):
            return False
    return (node_id is None or node_id in stored.nodes) and (
        run_id is None or event.run_id == run_id
    )
