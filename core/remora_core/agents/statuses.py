"""Agents' statuses (idle, running, blocked, …): in the graph at once, in the
store soon after.

The swarm reports every flip; the graph shows it at once (lenses, cards) and
the store gets it cheaply: in the transaction of the event that comes with the
flip when events are durable, otherwise coalesced into one background writer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from remora_core.store.nodes import AgentStatusSet

if TYPE_CHECKING:
    from remora_core.events.store import EventStore
    from remora_core.index.codegraph import CodeGraph
    from remora_core.model import AgentStatus
    from remora_core.store import NodeStore
    from remora_core.tasks import TaskSet

log = logging.getLogger(__name__)


class AgentStatuses:
    """Writes agents' statuses to the graph and the store."""

    def __init__(
        self,
        graph: CodeGraph,
        store: NodeStore | None,
        events: EventStore,
        tasks: TaskSet,
        closed: Callable[[], bool],
    ) -> None:
        self.graph = graph
        self.store = store
        self.events = events
        self.tasks = tasks
        self.closed = closed
        """Whether the project is closing (then :meth:`flush` writes the rest)."""
        self._pending: dict[str, AgentStatus] = {}
        """Agent statuses not yet written."""
        self._writer: asyncio.Task[None] | None = None

    def set(self, node_id: str, status: AgentStatus) -> None:
        """An agent's status changed (the swarm's ``on_status``)."""
        node = self.graph.get(node_id)
        if node is None or node.agent_status is status:
            return
        self.graph.set_agent_status(node_id, status)
        if self.store is None:
            return
        if self.events.durable and not self.closed():
            # Every flip comes with an event (a turn starting, ending, asking):
            # it rides in that event's transaction instead of costing its own.
            self.events.also_write(AgentStatusSet(node_id, status))
            return
        # Status flips come in bursts (every turn starts and ends): coalesce
        # them into one writer, and write what is left when closing.
        self._pending[node_id] = status
        if not self.closed() and (self._writer is None or self._writer.done()):
            self._writer = self.tasks.spawn(self.flush(), name="agent statuses")

    async def flush(self) -> None:
        """Write the statuses not written yet."""
        while self._pending and self.store is not None:
            batch, self._pending = self._pending, {}
            await self.store.set_agent_statuses(batch)
