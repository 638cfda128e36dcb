"""Cascade rules: why a cascade of agents triggering agents always ends.

Every event carries a correlation id (its cascade) and a ``depth`` (0 for what a
person did; an agent's turn at depth *d* emits events at depth *d*). When an
event would trigger agent *A*, the trigger runs at depth ``event.depth + 1`` and
is refused — with a ``trigger_refused`` event saying which rule — when:

- ``max_depth``: that depth exceeds ``swarm.max_depth``;
- ``cycle``: *A* is already in the chain of that correlation (an agent is
  triggered at most once per cascade: A→B→A stops at the second A). One
  exception: the answer to a request *A* made (``message_node``,
  ``ask_parent``; a message tagged ``reply`` whose ``reply_to`` is a request
  admitted in this cascade) triggers *A* again, once per request — so
  A → B → A-reply works, and a ping-pong still stops: requests are only
  admitted for agents new to the chain, so there are never more replies than
  agents, and replies count against the budget;
- ``turn_budget``: the cascade already has ``swarm.turn_budget`` turns;
- ``orphaned`` / ``unknown_agent``: *A* is not an active node;
- ``secret``: *A*'s file matches ``secrets.exclude`` — its agent never runs,
  so its source never reaches a model;
- ``muted``: a person muted *A* (``remora.node.mute``): only what a person
  sends it (:data:`PERSON_TYPES`) wakes it.

Chains (which agents a cascade has reached) are kept in memory and persisted in
``activation_chain`` (with the next events' transaction); a chain older than
``swarm.chain_ttl_s`` is forgotten.
Per-agent cooldown is not a refusal — it defers and coalesces (``runner.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from remora_core.events.models import BaseEvent, RefusalRule
from remora_core.swarm.turns import REPLY_TAG, REQUEST_TAG

PERSON_TYPES = ("human_chat", "rewrite_rejected")
"""What a person sends an agent: it wakes a muted agent too."""

EXPIRY_INTERVAL_S = 60.0
"""How often old chains are looked for while triggers arrive."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a trigger was refused."""

    rule: RefusalRule
    reason: str


@dataclass
class Chain:
    """The agents one cascade has reached."""

    agents: dict[str, int] = field(default_factory=dict)
    """Agent id → depth at which it was admitted."""
    requests: dict[str, str] = field(default_factory=dict)
    """Admitted requests owed a reply: request event id → the asker."""
    replies: int = 0
    """Turns admitted for replies (they count against the budget)."""
    started: float = field(default_factory=time.time)


class CascadeRules:
    """Admits or refuses triggers, and remembers cascade chains."""

    def __init__(
        self,
        *,
        max_depth: int,
        turn_budget: int,
        chain_ttl_s: float,
        agent_state: Callable[[str], str | None],
        clock: Callable[[], float] = time.time,
        secret: Callable[[str], str | None] = lambda _agent: None,
    ) -> None:
        self.max_depth = max_depth
        self.turn_budget = turn_budget
        self.chain_ttl_s = chain_ttl_s
        self.agent_state = agent_state
        """``"active"``, ``"orphaned"`` or None (unknown) for an agent id."""
        self.secret = secret
        """Why an agent may not run because its file is secret (None: it may)."""
        self.muted: set[str] = set()
        """Agents a person muted (the swarm loads and keeps it)."""
        self.clock = clock
        self.chains: dict[str, Chain] = {}
        self.unsaved: list[tuple[str, str, int, float]] = []
        """Admissions not yet written to ``activation_chain``."""
        self.expired_before: float | None = None
        """Set when chains were expired and the table should follow."""
        self._next_expiry = clock() + EXPIRY_INTERVAL_S

    def load(self, entries: list[tuple[str, str, int, float]]) -> None:
        """Restore persisted chains."""
        for correlation, agent, depth, timestamp in entries:
            chain = self.chains.setdefault(correlation, Chain(started=timestamp))
            chain.agents[agent] = depth
            chain.started = min(chain.started, timestamp)

    def expire(self) -> float:
        """Forget chains older than the TTL; return the cut-off time."""
        now = self.clock()
        cutoff = now - self.chain_ttl_s
        for correlation in [c for c, ch in self.chains.items() if ch.started < cutoff]:
            del self.chains[correlation]
        self._next_expiry = now + EXPIRY_INTERVAL_S
        self.expired_before = cutoff
        return cutoff

    def admit(self, agent_id: str, event: BaseEvent) -> Refusal | None:
        """Admit ``agent_id`` into the event's cascade, or say why not."""
        if self.clock() >= self._next_expiry:
            self.expire()  # keep memory (and the table) bounded while running
        state = self.agent_state(agent_id)
        if state is None:
            return Refusal("unknown_agent", f"{agent_id} is not a node of this project")
        if state != "active":
            return Refusal("orphaned", f"{agent_id} no longer exists in its file")
        if (secret := self.secret(agent_id)) is not None:
            return Refusal("secret", secret)
        kind = event.__dict__.get("type")
        if agent_id in self.muted and kind not in PERSON_TYPES:
            return Refusal(
                "muted", f"{agent_id} is muted: only a person's message wakes it"
            )
        depth = event.depth + 1
        if depth > self.max_depth:
            return Refusal(
                "max_depth",
                f"the cascade would reach depth {depth}, over swarm.max_depth "
                f"= {self.max_depth}",
            )
        chain = self.chains.get(event.correlation_id)
        if chain is not None and chain.started < self.clock() - self.chain_ttl_s:
            del self.chains[event.correlation_id]
            chain = None
        if chain is None:
            chain = self.chains[event.correlation_id] = Chain(started=self.clock())
        spent = len(chain.agents) + chain.replies >= self.turn_budget
        budget = Refusal(
            "turn_budget",
            f"the cascade has used its budget of {self.turn_budget} turns "
            "(swarm.turn_budget)",
        )
        if agent_id in chain.agents:
            if _answers(event, chain, agent_id):
                if spent:
                    return budget
                del chain.requests[event.__dict__["reply_to"]]
                chain.replies += 1
                return None
            return Refusal(
                "cycle",
                f"{agent_id} already ran in this cascade (at depth "
                f"{chain.agents[agent_id]})",
            )
        if spent:
            return budget
        chain.agents[agent_id] = depth
        if REQUEST_TAG in event.labels() and event.to_agent == agent_id:
            chain.requests[event.id] = event.from_agent or ""
        self.unsaved.append((event.correlation_id, agent_id, depth, self.clock()))
        return None


def _answers(event: BaseEvent, chain: Chain, agent_id: str) -> bool:
    """Whether ``event`` is the reply owed to ``agent_id`` for a request."""
    reply_to = event.__dict__.get("reply_to")
    return (
        REPLY_TAG in event.labels()
        and reply_to is not None
        and chain.requests.get(reply_to) == agent_id
    )
