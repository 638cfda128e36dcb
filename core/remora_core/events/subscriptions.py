"""Subscriptions: which events trigger which agent, matched through an index.

A :class:`Pattern` matches an event when **every field it gives** matches:

- ``event_types``: the event's type is one of them;
- ``from_agents``: the event's ``from_agent`` matches one of the globs (fnmatch);
- ``to_agent``: the event's ``to_agent`` is this id;
- ``path_glob``: the event has a file (``path``) matching the glob (fnmatch);
- ``tags``: the event carries at least one of these tags;
- ``nodes``: the event concerns at least one of these node ids (its ``node_ids``,
  ``agent_id``, sender or recipient) — how an agent follows its own node.

Every agent (every active node) has two default subscriptions (DESIGN §7):
messages addressed to it (``human_chat``/``agent_message`` with ``to_agent`` =
itself) and ``content_changed`` of its own node. They are implicit — derived
from "is this id an active node?" at match time, never stored — so a project of
70k nodes costs no memory or start-up time for them, and a node that vanishes
loses them at once. Custom subscriptions are added and removed by agents and
persisted.

:class:`SubscriptionIndex` finds the matching subscriptions of an event by
looking up ``to_agent``, concerned node ids and the event type, then checking
only those candidates, so the cost grows with the matching subscriptions, not
with all of them. Patterns giving none of those three fields (only globs or
tags) cannot be indexed and are checked for every event.
"""

from __future__ import annotations

import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable
from fnmatch import fnmatchcase

from pydantic import BaseModel, ConfigDict, Field

from remora_core.events.models import BaseEvent

MESSAGE_TYPES = ("human_chat", "agent_message")


class Pattern(BaseModel):
    """What events a subscription wants; unset fields match anything."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    event_types: tuple[str, ...] | None = None
    from_agents: tuple[str, ...] | None = None
    to_agent: str | None = None
    path_glob: str | None = None
    tags: tuple[str, ...] | None = None
    nodes: tuple[str, ...] | None = None

    def matches(self, event: BaseEvent) -> bool:
        """Whether every field this pattern gives matches ``event``."""
        if self.event_types is not None and event.type not in self.event_types:  # type: ignore[attr-defined]
            return False
        if self.to_agent is not None and event.to_agent != self.to_agent:
            return False
        if self.from_agents is not None and not (
            event.from_agent is not None
            and any(fnmatchcase(event.from_agent, g) for g in self.from_agents)
        ):
            return False
        if self.path_glob is not None:
            path = event.file()
            if path is None or not fnmatchcase(path, self.path_glob):
                return False
        if self.tags is not None and not set(self.tags) & set(event.labels()):
            return False
        return self.nodes is None or bool(
            set(self.nodes) & set(event.concerned_nodes())
        )


def new_subscription_id() -> str:
    """A fresh subscription id."""
    return f"sub_{uuid.uuid4().hex[:12]}"


class Subscription(BaseModel):
    """One agent's subscription."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(default_factory=new_subscription_id)
    agent_id: str
    pattern: Pattern
    default: bool = False
    """One of the two every agent has (re-created at start-up, never by hand)."""
    created_at: float = Field(default_factory=time.time)


def default_subscriptions(agent_id: str) -> list[Subscription]:
    """The subscriptions every agent has."""
    return [
        Subscription(
            id=f"sub_msg_{agent_id}",
            agent_id=agent_id,
            pattern=Pattern(event_types=MESSAGE_TYPES, to_agent=agent_id),
            default=True,
        ),
        Subscription(
            id=f"sub_own_{agent_id}",
            agent_id=agent_id,
            pattern=Pattern(event_types=("content_changed",), nodes=(agent_id,)),
            default=True,
        ),
    ]


class SubscriptionIndex:
    """Every custom subscription in memory, indexed for matching, plus the
    implicit defaults of every id ``is_agent`` accepts.
    """

    def __init__(
        self,
        subscriptions: Iterable[Subscription] = (),
        is_agent: Callable[[str], bool] = lambda _id: False,
    ) -> None:
        self.is_agent = is_agent
        self.by_id: dict[str, Subscription] = {}
        self._by_agent: dict[str, set[str]] = defaultdict(set)
        self._by_to_agent: dict[str, set[str]] = defaultdict(set)
        self._by_node: dict[str, set[str]] = defaultdict(set)
        self._by_type: dict[str, set[str]] = defaultdict(set)
        self._unindexed: set[str] = set()
        for subscription in subscriptions:
            self.add(subscription)

    def __len__(self) -> int:
        return len(self.by_id)

    def _buckets(self, pattern: Pattern) -> list[set[str]]:
        """Where a pattern is filed: under its most selective given field."""
        if pattern.to_agent is not None:
            return [self._by_to_agent[pattern.to_agent]]
        if pattern.nodes is not None:
            return [self._by_node[node] for node in pattern.nodes]
        if pattern.event_types is not None:
            return [self._by_type[kind] for kind in pattern.event_types]
        return [self._unindexed]

    def add(self, subscription: Subscription) -> None:
        """Index ``subscription`` (replacing one with the same id)."""
        self.remove(subscription.id)
        self.by_id[subscription.id] = subscription
        self._by_agent[subscription.agent_id].add(subscription.id)
        for bucket in self._buckets(subscription.pattern):
            bucket.add(subscription.id)

    def remove(self, subscription_id: str) -> Subscription | None:
        """Forget a subscription; return it if it existed."""
        subscription = self.by_id.pop(subscription_id, None)
        if subscription is None:
            return None
        self._by_agent[subscription.agent_id].discard(subscription_id)
        for bucket in self._buckets(subscription.pattern):
            bucket.discard(subscription_id)
        return subscription

    def of_agent(self, agent_id: str) -> list[Subscription]:
        """Subscriptions held by ``agent_id``."""
        return [self.by_id[i] for i in sorted(self._by_agent.get(agent_id, ()))]

    def agents(self) -> set[str]:
        """Every agent holding at least one subscription."""
        return {agent for agent, ids in self._by_agent.items() if ids}

    def defaults_matching(self, event: BaseEvent) -> list[Subscription]:
        """The implicit default subscriptions ``event`` matches."""
        found: list[Subscription] = []
        kind = event.type  # type: ignore[attr-defined]
        if kind in MESSAGE_TYPES and event.to_agent and self.is_agent(event.to_agent):
            found.append(default_subscriptions(event.to_agent)[0])
        elif kind == "content_changed":
            for node in event.concerned_nodes():
                if self.is_agent(node):
                    found.append(default_subscriptions(node)[1])
        return found

    def match(self, event: BaseEvent) -> list[Subscription]:
        """Subscriptions (custom and default) matching ``event``, stable order."""
        candidates: set[str] = set(self._unindexed)
        if event.to_agent is not None:
            candidates |= self._by_to_agent.get(event.to_agent, set())
        for node in event.concerned_nodes():
            candidates |= self._by_node.get(node, set())
        candidates |= self._by_type.get(event.type, set())  # type: ignore[attr-defined]
        found = [self.by_id[i] for i in candidates]
        found = [s for s in found if s.pattern.matches(event)]
        found += self.defaults_matching(event)
        found.sort(key=lambda s: (s.agent_id, s.id))
        return found
