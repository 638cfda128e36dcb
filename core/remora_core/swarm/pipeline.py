"""The swarm of one project: events in, agents' turns out.

:meth:`Swarm.emit` is the one way an event enters the system, in this order
(DESIGN §6): **persist** it (``events/store.py``, group-committed), **match**
subscriptions (``events/subscriptions.py``), **enqueue triggers** for admitted
agents (``cascade.py`` decides, ``runner.py`` runs), **publish** it on the bus
(``events/bus.py``), then record the refusals as ``trigger_refused`` events
saying which rule (one per rule and reason, naming every agent it refused).
Matching happens per committed batch, in ``seq`` order, while the store
already writes the next batch; ``emit`` returns once its event went through
all of that (its refusals follow in the log).

:meth:`Swarm.start` restores what survives a restart: the end of the event log,
custom subscriptions (those of agents that are no longer active nodes are
dropped), cascade chains younger than the TTL, and runs that were in flight
when the process died — marked ``interrupted``, each with a ``run_interrupted``
event. Only the store's owner does that recovery: a run recorded as
``running`` belongs to the process holding the store's lock, so a server that
cannot write the store (another one owns it) never touches it. Such a swarm
(``run_agents=False``) also triggers no agent: agents run in the owner.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from remora_core.discovery.files import secret_glob
from remora_core.events.bus import EventBus
from remora_core.events.models import (
    Event,
    RefusalRule,
    RunInterrupted,
    TriggerRefused,
    new_correlation_id,
)
from remora_core.events.store import EventStore, StoredEvent
from remora_core.events.subscription_store import SubscriptionStore
from remora_core.events.subscriptions import Pattern, Subscription, SubscriptionIndex
from remora_core.model import AgentStatus, NodeStatus
from remora_core.store.runs import ChainsAdded, RunStore
from remora_core.store.usage import UsageStore
from remora_core.swarm.cascade import CascadeRules
from remora_core.swarm.runner import Runner
from remora_core.swarm.turns import TurnFunction, acknowledge

if TYPE_CHECKING:
    from remora_core.config import RemoraConfig
    from remora_core.index.codegraph import CodeGraph
    from remora_core.store.database import Database

log = logging.getLogger(__name__)

TARGETS = ("parent", "broadcast:children", "broadcast:siblings")


def _log_failure(future: asyncio.Future[StoredEvent]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("an event could not be stored", exc_info=future.exception())


class Swarm:
    """Events, subscriptions, cascade rules and the runner of one project."""

    def __init__(
        self,
        database: Database | None,
        graph: CodeGraph,
        config: RemoraConfig,
        *,
        turn_function: TurnFunction = acknowledge,
        on_status: Callable[[str, AgentStatus], None] | None = None,
        run_agents: bool = True,
    ) -> None:
        self.graph = graph
        self.secrets = tuple(config.secrets.exclude)
        self._secret_files: dict[str, str | None] = {}
        """File path → why its agents may not run (None: they may)."""
        self.run_agents = run_agents
        """False in a server following another one's store: nothing triggers."""
        self.turn_function = turn_function
        self.on_status = on_status
        self.events = EventStore(database)
        self.subscriptions = SubscriptionStore(database)
        self.index = SubscriptionIndex(is_agent=self._is_agent)
        self.bus = EventBus(self.events.since)
        self.runs = RunStore(database)
        self.usage = UsageStore(database)
        self.rules = CascadeRules(
            max_depth=config.swarm.max_depth,
            turn_budget=config.swarm.turn_budget,
            chain_ttl_s=config.swarm.chain_ttl_s,
            agent_state=self._agent_state,
            secret=self._secret,
        )
        self.runner = Runner(
            self,
            max_concurrency=min(
                config.agents.max_concurrency,
                config.model.slots() or config.agents.max_concurrency,
            ),
            cooldown_s=config.swarm.cooldown_ms / 1000,
        )
        self._chain_writer: asyncio.Task[None] | None = None
        self.events.on_commit = self._committed

    # ---- agents --------------------------------------------------------------

    def _agent_state(self, agent_id: str) -> str | None:
        node = self.graph.get(agent_id)
        return None if node is None else node.status.value

    def _secret(self, agent_id: str) -> str | None:
        node = self.graph.get(agent_id)
        if node is None:
            return None
        path = node.file_path
        # Every admission asks: glob matching per event cost a quarter of the
        # event pipeline, so each file is judged once (the globs never change).
        if path not in self._secret_files:
            glob = secret_glob(path, self.secrets)
            self._secret_files[path] = (
                None
                if glob is None
                else f"{path} matches secrets.exclude ({glob!r}): agents of its "
                "nodes do not run, so its source never reaches a model"
            )
        return self._secret_files[path]

    def _is_agent(self, agent_id: str) -> bool:
        node = self.graph.get(agent_id)
        return node is not None and node.status is NodeStatus.ACTIVE

    def name_of(self, agent_id: str) -> str:
        """An agent's qualified name ("" for an unknown id)."""
        node = self.graph.get(agent_id)
        return node.qualified_name if node is not None else ""

    def set_agent_status(self, agent_id: str, status: AgentStatus) -> None:
        """Tell the project an agent's status changed."""
        if self.on_status is not None:
            self.on_status(agent_id, status)

    def recipients(self, agent_id: str, to: str) -> list[str]:
        """Resolve a message target; ValueError with a usable message if bad."""
        node = self.graph.get(agent_id)
        if to == "parent":
            if node is None or node.parent_id is None:
                raise ValueError(f"{agent_id} has no parent (it is a file)")
            return [node.parent_id]
        if to == "broadcast:children":
            return [child.id for child in self.graph.children(agent_id)]
        if to == "broadcast:siblings":
            if node is None or node.parent_id is None:
                return []
            return [
                c.id for c in self.graph.children(node.parent_id) if c.id != agent_id
            ]
        if self.graph.get(to) is None:
            raise ValueError(
                f"no node with id {to!r}; use a node id or one of {', '.join(TARGETS)}"
            )
        return [to]

    # ---- lifecycle ---------------------------------------------------------------

    async def start(self) -> None:
        """Restore the log's end, subscriptions, chains and interrupted runs."""
        await self.events.open()
        stale: list[str] = []
        for subscription in await self.subscriptions.load():
            if self._is_agent(subscription.agent_id):
                self.index.add(subscription)
            else:
                stale.append(subscription.id)
        await self.subscriptions.remove(stale)
        self.rules.muted = await self.subscriptions.muted()
        cutoff = self.rules.expire()
        self.rules.expired_before = None  # load_chains deletes the old rows
        self.rules.load(await self.runs.load_chains(cutoff))
        if not self.run_agents:  # the owner's runs and statuses are live
            return
        # A store nobody can write keeps its runs as they are (nothing to mark).
        running = await self.runs.running() if self.events.durable else []
        for run_id, node_id, correlation in running:
            # The event first, under an id derived from the run: a crash between
            # the two steps repeats the event's write (refused as a duplicate)
            # and never leaves an interrupted run unannounced.
            try:
                await self.emit(
                    RunInterrupted(
                        id=f"ev_interrupted_{run_id}",
                        agent_id=node_id,
                        run_id=run_id,
                        correlation_id=correlation or new_correlation_id(),
                    )
                )
            except sqlite3.IntegrityError:
                log.info("run %s was already announced as interrupted", run_id)
            await self.runs.mark_interrupted(run_id)
            self.set_agent_status(node_id, AgentStatus.IDLE)
        # No turn runs yet: an agent still shown running is a status whose
        # ``idle`` never reached the store before the process died.
        for node in self.graph.with_agent_status(AgentStatus.RUNNING):
            if node.status is NodeStatus.ACTIVE:
                self.set_agent_status(node.id, AgentStatus.IDLE)

    async def close(self) -> None:
        """Cancel running turns and write what is pending."""
        await self.runner.close()
        await self._expire_chains()
        await self.events.close()
        await self.bus.close()

    # ---- events ------------------------------------------------------------------

    async def emit(self, event: Event) -> StoredEvent:
        """Emit ``event``; return once it is persisted, matched and published."""
        return await self.events.enqueue(event)

    def emit_nowait(self, event: Event) -> asyncio.Future[StoredEvent]:
        """Like :meth:`emit` without waiting: the event's place in the log is
        fixed now, so what is emitted next is logged after it. Nobody waits for
        it, so it may linger briefly to share the next event's transaction
        (``events/store.py``, ``LINGER_S``).
        """
        return self.events.enqueue(event, linger=True)

    def _committed(self, batch: list[StoredEvent]) -> None:
        """Match, trigger and publish committed events, in ``seq`` order."""
        refusals: list[TriggerRefused] = []
        for stored in batch:
            refusals += self._trigger(stored)
            self.bus.publish(stored)
        self._queue_chains()
        if self.rules.expired_before and (
            self._chain_writer is None or self._chain_writer.done()
        ):
            self._chain_writer = asyncio.ensure_future(self._expire_chains())
        for refusal in refusals:
            self.events.enqueue(refusal).add_done_callback(_log_failure)

    def _trigger(self, stored: StoredEvent) -> list[TriggerRefused]:
        """Enqueue the triggers ``stored`` causes; return the refusals.

        Agents refused for the same reason are named in one event
        (``agent_ids``): an edit followed by 500 callers, over its cascade's
        budget, is one ``trigger_refused`` listing 480 agents, not 480 events
        for the store, the bus and the editor to carry while the person types
        (``bench/storm.py``). A reason naming the agent (a cycle, an orphan)
        stays an event of its own.
        """
        event = stored.event
        refused: dict[tuple[RefusalRule, str, str | None], list[str]] = {}
        triggered = False
        matching = (
            self.index.matching_agents(event, stored.nodes) if self.run_agents else ()
        )
        for agent in matching:
            refusal = self.rules.admit(agent, event)
            if refusal is None:
                triggered = True
                self.runner.trigger(agent, stored)
            elif event.type == "trigger_refused" or refusal.rule == "muted":
                # A refusal is never announced by another refusal: an agent
                # following refusals, or everything about its own node, would
                # otherwise be refused for each refusal of itself, forever. A
                # muted agent is silent by a person's choice: no event each
                # time its code is typed in.
                log.debug("%s not triggered: %s", agent, refusal.rule)
            else:
                # A run promised to the person for this request ends here.
                promised = (
                    self.runner.reserved.get(event.id)
                    if agent == event.to_agent
                    else None
                )
                key = (refusal.rule, refusal.reason, event.run_id or promised)
                refused.setdefault(key, []).append(agent)
        if not triggered:  # a run promised for this event will never start
            self.runner.reserved.pop(event.id, None)
        return [
            TriggerRefused(
                agent_id=agents[0],
                agent_ids=tuple(agents),
                trigger_id=event.id,
                rule=rule,
                reason=reason,
                correlation_id=event.correlation_id,
                depth=event.depth,
                run_id=run_id,
            )
            for (rule, reason, run_id), agents in refused.items()
        ]

    def _queue_chains(self) -> None:
        """Admissions ride along with the next events' transaction."""
        if self.rules.unsaved:
            entries, self.rules.unsaved = self.rules.unsaved, []
            self.events.also_write(ChainsAdded(entries))

    async def _expire_chains(self) -> None:
        self._queue_chains()
        cutoff, self.rules.expired_before = self.rules.expired_before, None
        if cutoff is not None:
            await self.runs.expire_chains(cutoff)

    # ---- subscriptions ---------------------------------------------------------------

    async def subscribe(self, agent_id: str, pattern: Pattern) -> str:
        """Add and persist a custom subscription; return its id."""
        subscription = Subscription(agent_id=agent_id, pattern=pattern)
        self.index.add(subscription)
        await self.subscriptions.add(subscription)
        return subscription.id

    async def unsubscribe(self, agent_id: str, subscription_id: str) -> bool:
        """Remove one of ``agent_id``'s custom subscriptions."""
        subscription = self.index.by_id.get(subscription_id)
        if subscription is None or subscription.agent_id != agent_id:
            return False
        self.index.remove(subscription_id)
        await self.subscriptions.remove([subscription_id])
        return True

    async def mute(self, agent_id: str, muted: bool) -> bool:
        """Mute (or unmute) an agent: muted, only a person's message wakes it
        (``cascade.py``); whether that changed anything.
        """
        if (agent_id in self.rules.muted) == muted:
            return False
        if muted:
            self.rules.muted.add(agent_id)
        else:
            self.rules.muted.discard(agent_id)
        await self.subscriptions.set_muted(agent_id, muted)
        return True

    async def forget_agents(self, agent_ids: list[str]) -> None:
        """Drop the custom subscriptions of agents that vanished."""
        gone = [s.id for a in agent_ids for s in self.index.of_agent(a)]
        for subscription_id in gone:
            self.index.remove(subscription_id)
        await self.subscriptions.remove(gone)
