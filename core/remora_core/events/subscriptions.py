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
messages addressed to it (``human_chat``, ``agent_message``, and
``rewrite_rejected`` — a person's feedback — with ``to_agent`` = itself) and
``content_changed`` of its own node. They are implicit — derived
from "is this id an active node?" at match time, never stored — so a project of
70k nodes costs no memory or start-up time for them, and a node that vanishes
loses them at once. Custom subscriptions are added and removed by agents and
persisted.

:class:`SubscriptionIndex` finds the matching subscriptions of an event by
filing each pattern under its most selective field — recipient, node, literal
sender, tag, literal path or path prefix, sender prefix, event type — and
checking only the patterns filed under an event's keys, so the cost grows with
the subscriptions that could match, not with all of them. Only patterns giving
none of those (say, ``path_glob="*.py"`` alone) are checked for every event.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable

from pydantic import BaseModel, ConfigDict, Field, field_validator

from remora_core.events.models import Event
from remora_core.globs import check, name_matches

MESSAGE_TYPES = ("human_chat", "agent_message", "rewrite_rejected")


class Pattern(BaseModel):
    """What events a subscription wants; unset fields match anything."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    event_types: tuple[str, ...] | None = None
    from_agents: tuple[str, ...] | None = None
    to_agent: str | None = None
    path_glob: str | None = None
    tags: tuple[str, ...] | None = None
    nodes: tuple[str, ...] | None = None

    @field_validator("path_glob", "from_agents")
    @classmethod
    def _usable_globs(cls, value: str | tuple[str, ...] | None) -> object:
        """A glob too long to match is refused when subscribing (``globs.py``)."""
        for glob in (value,) if isinstance(value, str) else value or ():
            check(glob)
        return value

    def matches(self, event: Event) -> bool:
        """Whether every field this pattern gives matches ``event``."""
        if self.event_types is not None and event.type not in self.event_types:
            return False
        if self.to_agent is not None and event.to_agent != self.to_agent:
            return False
        if self.from_agents is not None and not (
            event.from_agent is not None
            and any(name_matches(event.from_agent, g) for g in self.from_agents)
        ):
            return False
        if self.path_glob is not None:
            path = event.file()
            if path is None or not name_matches(path, self.path_glob):
                return False
        if self.tags is not None and not set(self.tags) & set(event.labels()):
            return False
        return self.nodes is None or bool(
            set(self.nodes) & set(event.concerned_nodes())
        )


class _Matcher:
    """A pattern prepared for fast matching (sets built once, not per event).

    It must agree with :meth:`Pattern.matches`; the tests check it does.
    """

    __slots__ = ("nodes", "path_glob", "senders", "subscription", "tags", "to", "types")

    def __init__(self, subscription: Subscription) -> None:
        pattern = subscription.pattern
        self.subscription = subscription
        types = pattern.event_types
        self.types = frozenset(types) if types is not None else None
        self.senders = pattern.from_agents
        self.to = pattern.to_agent
        self.path_glob = pattern.path_glob
        self.tags = frozenset(pattern.tags) if pattern.tags is not None else None
        self.nodes = frozenset(pattern.nodes) if pattern.nodes is not None else None

    def matches(self, event: Event, nodes: tuple[str, ...]) -> bool:
        if self.types is not None and event.type not in self.types:
            return False
        if self.to is not None and event.to_agent != self.to:
            return False
        if self.senders is not None:
            sender = event.from_agent
            if sender is None:
                return False
            for glob in self.senders:  # a loop: ``any(...)`` costs a generator
                if name_matches(sender, glob):
                    break
            else:
                return False
        if self.path_glob is not None:
            path = event.file()
            if path is None or not name_matches(path, self.path_glob):
                return False
        if self.tags is not None and self.tags.isdisjoint(event.labels()):
            return False
        return self.nodes is None or not self.nodes.isdisjoint(nodes)


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
    """The subscriptions every agent has.

    Built without validation (``model_construct``): the values are known good,
    and this runs for every agent an event reaches.
    """
    build, pattern = Subscription.model_construct, Pattern.model_construct
    return [
        build(
            id=f"sub_msg_{agent_id}",
            agent_id=agent_id,
            pattern=pattern(event_types=MESSAGE_TYPES, to_agent=agent_id),
            default=True,
            created_at=0.0,
        ),
        build(
            id=f"sub_own_{agent_id}",
            agent_id=agent_id,
            pattern=pattern(event_types=("content_changed",), nodes=(agent_id,)),
            default=True,
            created_at=0.0,
        ),
    ]


_WILDCARDS = "*?["


def _literal_prefix(glob: str) -> str:
    """The part of an fnmatch glob before its first wildcard."""
    cut = min((i for i in (glob.find(c) for c in _WILDCARDS) if i >= 0), default=-1)
    return glob if cut < 0 else glob[:cut]


MIN_ID_PREFIX = 4
"""An id prefix shorter than this (``rm_``) selects nothing: index by type."""

Key = tuple[str, str]
"""An index bucket: (what is looked up, the value)."""


def _keys(pattern: Pattern) -> list[Key]:
    """Where a pattern is filed: under its most selective given field.

    Every event matching the pattern is found under one of these keys, so only
    patterns filed under an event's keys need checking.
    """
    if pattern.to_agent is not None:
        return [("to", pattern.to_agent)]
    if pattern.nodes is not None:
        return [("node", node) for node in pattern.nodes]
    senders = pattern.from_agents
    if senders is not None and all(_literal_prefix(g) == g for g in senders):
        return [("from", sender) for sender in senders]
    if pattern.tags is not None:
        return [("tag", tag) for tag in pattern.tags]
    if pattern.path_glob is not None and _literal_prefix(pattern.path_glob):
        prefix = _literal_prefix(pattern.path_glob)
        return [("path" if prefix == pattern.path_glob else "path*", prefix)]
    if senders is not None and all(
        len(_literal_prefix(g)) >= MIN_ID_PREFIX for g in senders
    ):
        return [("from*", _literal_prefix(g)) for g in senders]
    if pattern.event_types is not None:
        return [("type", kind) for kind in pattern.event_types]
    return [("any", "")]


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
        self._matchers: dict[str, _Matcher] = {}
        self._by_agent: dict[str, set[str]] = defaultdict(set)
        self._buckets: dict[Key, set[str]] = defaultdict(set)
        self._prefix_lengths: dict[str, Counter[int]] = defaultdict(Counter)
        """For prefix buckets (``from*``, ``path*``): the prefix lengths in use."""
        self._defaults: dict[str, list[Subscription]] = {}
        for subscription in subscriptions:
            self.add(subscription)

    def __len__(self) -> int:
        return len(self.by_id)

    def add(self, subscription: Subscription) -> None:
        """Index ``subscription`` (replacing one with the same id)."""
        self.remove(subscription.id)
        self.by_id[subscription.id] = subscription
        self._matchers[subscription.id] = _Matcher(subscription)
        self._by_agent[subscription.agent_id].add(subscription.id)
        for kind, value in _keys(subscription.pattern):
            self._buckets[(kind, value)].add(subscription.id)
            if kind.endswith("*"):
                self._prefix_lengths[kind][len(value)] += 1

    def remove(self, subscription_id: str) -> Subscription | None:
        """Forget a subscription; return it if it existed."""
        subscription = self.by_id.pop(subscription_id, None)
        if subscription is None:
            return None
        del self._matchers[subscription_id]
        self._by_agent[subscription.agent_id].discard(subscription_id)
        for kind, value in _keys(subscription.pattern):
            bucket = self._buckets.get((kind, value))
            if bucket is not None:
                bucket.discard(subscription_id)
                if not bucket:
                    del self._buckets[(kind, value)]
            if kind.endswith("*"):
                lengths = self._prefix_lengths[kind]
                lengths[len(value)] -= 1
                if lengths[len(value)] <= 0:
                    del lengths[len(value)]
        return subscription

    def of_agent(self, agent_id: str) -> list[Subscription]:
        """Subscriptions held by ``agent_id``."""
        return [self.by_id[i] for i in sorted(self._by_agent.get(agent_id, ()))]

    def agents(self) -> set[str]:
        """Every agent holding at least one subscription."""
        return {agent for agent, ids in self._by_agent.items() if ids}

    def _default(self, agent_id: str, which: int) -> Subscription:
        made = self._defaults.get(agent_id)
        if made is None:
            made = self._defaults[agent_id] = default_subscriptions(agent_id)
        return made[which]

    def defaults_matching(
        self, event: Event, nodes: tuple[str, ...] | None = None
    ) -> list[Subscription]:
        """The implicit default subscriptions ``event`` matches."""
        found: list[Subscription] = []
        kind = event.type
        if kind in MESSAGE_TYPES and event.to_agent and self.is_agent(event.to_agent):
            found.append(self._default(event.to_agent, 0))
        elif kind == "content_changed":
            for node in event.concerned_nodes() if nodes is None else nodes:
                if self.is_agent(node):
                    found.append(self._default(node, 1))
        return found

    def _event_keys(self, event: Event, nodes: tuple[str, ...]) -> list[Key]:
        keys: list[Key] = [("any", ""), ("type", event.type)]
        if event.to_agent is not None:
            keys.append(("to", event.to_agent))
        keys += [("node", node) for node in nodes]
        sender = event.from_agent
        if sender is not None:
            keys.append(("from", sender))
            keys += [("from*", sender[:n]) for n in self._prefix_lengths["from*"]]
        keys += [("tag", tag) for tag in event.labels()]
        path = event.file()
        if path is not None:
            keys.append(("path", path))
            keys += [("path*", path[:n]) for n in self._prefix_lengths["path*"]]
        return keys

    def match(
        self, event: Event, nodes: tuple[str, ...] | None = None
    ) -> list[Subscription]:
        """Subscriptions (custom and default) matching ``event``, stable order.

        ``nodes`` are ``event.concerned_nodes()`` when the caller has them.
        """
        if nodes is None:
            nodes = event.concerned_nodes()
        candidates: set[str] = set()
        buckets = self._buckets
        for key in self._event_keys(event, nodes):
            bucket = buckets.get(key)
            if bucket:
                candidates |= bucket
        matchers = self._matchers
        found = [
            matcher.subscription
            for matcher in (matchers[i] for i in candidates)
            if matcher.matches(event, nodes)
        ]
        found += self.defaults_matching(event, nodes)
        if len(found) > 1:
            found.sort(key=lambda s: (s.agent_id, s.id))
        return found

    def matching_agents(self, event: Event, nodes: tuple[str, ...]) -> list[str]:
        """The agents ``event`` triggers (what :meth:`match` finds, as agent
        ids, without building the default subscriptions): the hot path.
        """
        buckets = self._buckets
        matchers = self._matchers
        agents: dict[str, None] = {}
        for key in self._event_keys(event, nodes):
            bucket = buckets.get(key)
            if bucket:
                for subscription_id in bucket:
                    matcher = matchers[subscription_id]
                    if matcher.matches(event, nodes):
                        agents[matcher.subscription.agent_id] = None
        kind = event.type
        if kind in MESSAGE_TYPES:
            if event.to_agent and self.is_agent(event.to_agent):
                agents[event.to_agent] = None
        elif kind == "content_changed":
            for node in nodes:
                if self.is_agent(node):
                    agents[node] = None
        return sorted(agents)
