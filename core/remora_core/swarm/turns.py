"""What an agent's turn is given, and what it can do.

A turn function is ``async def turn(turn: Turn) -> str | None``: it sees the
events that triggered it (several, when triggers were coalesced during the
agent's cooldown), and acts through the :class:`Turn`: send messages, emit
events, manage its subscriptions. Everything it emits inherits the turn's
correlation id, depth and run id, so cascade rules apply to what it causes.
The model-driven turn arrives with agents (issue 4); until then the server runs
:func:`acknowledge`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from remora_core.events.models import AgentMessage, Event, new_event_id

if TYPE_CHECKING:
    from remora_core.events.store import EventStore, StoredEvent
    from remora_core.events.subscriptions import Pattern, SubscriptionIndex
    from remora_core.index.codegraph import CodeGraph
    from remora_core.model import AgentStatus, CodeNode
    from remora_core.store.usage import UsageStore


class Swarm(Protocol):
    """What a turn and the runner use of the swarm (``swarm/pipeline.py``).

    A protocol, not the engine's class: the engine builds the runner and the
    turns, so naming it here would be an import cycle.
    """

    graph: CodeGraph
    events: EventStore
    index: SubscriptionIndex
    usage: UsageStore
    turn_function: TurnFunction

    async def emit(self, event: Event) -> StoredEvent:
        """Persist and publish an event."""
        ...

    def emit_nowait(self, event: Event) -> asyncio.Future[StoredEvent]:
        """Emit without waiting for the commit."""
        ...

    def recipients(self, agent_id: str, to: str) -> list[str]:
        """The agents ``to`` names, seen from ``agent_id``."""
        ...

    def name_of(self, agent_id: str) -> str:
        """An agent's qualified name ("" for an unknown id)."""
        ...

    def set_agent_status(self, agent_id: str, status: AgentStatus) -> None:
        """Record what an agent is doing."""
        ...

    async def subscribe(self, agent_id: str, pattern: Pattern) -> str:
        """Add a subscription; its id."""
        ...

    async def unsubscribe(self, agent_id: str, subscription_id: str) -> bool:
        """Remove a subscription of the agent's own."""
        ...


REQUEST_TAG = "request"
"""Tag of a message that asks for an answer."""
REPLY_TAG = "reply"
"""Tag of the answer to a request (it carries ``reply_to``)."""


class TurnFailed(Exception):
    """A turn ended in failure; the message is for a person (shown as is)."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        """Why, for the list of runs: ``limit_reached`` when a budget stopped
        it (None: an error the message explains)."""


@dataclass
class Turn:
    """One turn of one agent."""

    agent_id: str
    run_id: str
    events: list[StoredEvent]
    correlation_id: str
    depth: int
    swarm: Swarm

    @property
    def node(self) -> CodeNode | None:
        """The agent's node (None if it vanished meanwhile)."""
        return self.swarm.graph.get(self.agent_id)

    async def emit(self, event: Event) -> StoredEvent:
        """Emit ``event`` as part of this turn (envelope filled in)."""
        return await self.swarm.emit(self.stamp(event))

    def emit_nowait(self, event: Event) -> asyncio.Future[StoredEvent]:
        """Emit without waiting for the commit (order in the log is kept)."""
        return self.swarm.emit_nowait(self.stamp(event))

    def stamp(self, event: Event) -> Event:
        """``event`` with this turn's envelope and a fresh id."""
        return event.model_copy(
            update={
                "id": new_event_id(),  # even when forwarding an event it received
                "correlation_id": self.correlation_id,
                "depth": self.depth,
                "run_id": self.run_id,
            }
        )

    async def send_message(
        self, to: str, message: str, tags: tuple[str, ...] = ()
    ) -> list[str]:
        """Message an id, ``"parent"``, ``"broadcast:children"`` or
        ``"broadcast:siblings"``; return the recipients.
        """
        recipients = self.swarm.recipients(self.agent_id, to)
        for recipient in recipients:
            await self.emit(
                AgentMessage(
                    from_agent=self.agent_id,
                    to_agent=recipient,
                    message=message,
                    tags=tags,
                    from_name=self.swarm.name_of(self.agent_id),
                    to_name=self.swarm.name_of(recipient),
                )
            )
        return recipients

    async def ask(self, to: str, request: str) -> list[str]:
        """Send a request (``message_node``, ``ask_parent``): each recipient's
        answer comes back to this agent as a ``reply`` in the same cascade.
        """
        return await self.send_message(to, request, (REQUEST_TAG,))

    def requests(self) -> list[AgentMessage]:
        """The requests among this turn's triggers (each is owed a reply)."""
        return [
            stored.event
            for stored in self.events
            if isinstance(stored.event, AgentMessage)
            and REQUEST_TAG in stored.event.tags
            and stored.event.to_agent == self.agent_id
        ]

    async def subscribe(self, pattern: Pattern) -> str:
        """Add a subscription for this agent; return its id."""
        return await self.swarm.subscribe(self.agent_id, pattern)

    async def unsubscribe(self, subscription_id: str) -> bool:
        """Remove one of this agent's own subscriptions."""
        return await self.swarm.unsubscribe(self.agent_id, subscription_id)


TurnFunction = Callable[[Turn], Awaitable[str | None]]


async def acknowledge(turn: Turn) -> str:
    """The placeholder turn until agents have models: note what was seen."""
    kinds = sorted({stored.event.type for stored in turn.events})
    return f"saw {len(turn.events)} event(s): {', '.join(kinds)}"
