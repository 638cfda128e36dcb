"""The runner: one actor per agent, turns serialized per agent, bounded overall.

Each admitted trigger goes to its agent's :class:`Actor`. An actor runs one turn
at a time. After a turn *starts*, the agent cools down for ``swarm.cooldown_ms``:
triggers arriving meanwhile (or while a turn runs) are not dropped but deferred
and coalesced — the next turn, when the cooldown ends, sees all of them. Turns
of different agents run concurrently, at most ``agents.max_concurrency`` at once
— or fewer, the model's slots (``model.max_concurrency`` of every endpoint
together): a turn beyond them would only wait for a slot while shown running,
so it waits queued (``remora.runs.list`` shows it so).

A turn is a run: recorded in ``runs``, announced by ``agent_started``, ended by
``agent_completed`` / ``agent_failed`` / ``agent_cancelled``, with the node's
agent status ``running`` meanwhile (``error`` after a failure).

Several promised runs (``remora.agent.chat`` answers with a run id at once)
can be coalesced into one turn. The turn takes the first promise's id; every
other promise is *answered by* it: it has its own ``runs`` row, ``cancel_run``
on it cancels the turn that answers it, and when the turn ends, it ends too,
with the same outcome and ``answered_by`` naming the run that answered it. So
every run id a person was given ends with an event.

A turn triggered by a request (``message_node``, ``ask_parent``: an
``agent_message`` tagged ``request``) answers it: before the run's end, its
answer (or why it failed) goes back to the asker as an ``agent_message``
tagged ``reply`` with ``reply_to`` set, in the same cascade; the cascade rules
admit the asker once more for it (``cascade.py``).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import TYPE_CHECKING

from remora_core.editor_first import give_way
from remora_core.events.models import (
    AgentCancelled,
    AgentCompleted,
    AgentFailed,
    AgentMessage,
    AgentStarted,
    new_event_id,
)
from remora_core.model import AgentStatus
from remora_core.redact import scrub
from remora_core.store.runs import (
    RUN_ENDS,
    RunCancelledEarly,
    RunsFinished,
    RunStarted,
)
from remora_core.swarm.turns import REPLY_TAG, Swarm, Turn, TurnFailed
from remora_core.swarm.wake import fired_by

if TYPE_CHECKING:
    from collections.abc import Sequence

    from remora_core.events.store import StoredEvent

log = logging.getLogger(__name__)


def _log_failure(done: asyncio.Future[StoredEvent]) -> None:
    if not done.cancelled() and done.exception() is not None:
        log.error("an event could not be stored", exc_info=done.exception())


def new_run_id() -> str:
    """A fresh run id."""
    return f"run_{uuid.uuid4().hex[:12]}"


class Actor:
    """One agent's queue of triggers and its single running turn."""

    def __init__(self, runner: Runner, agent_id: str) -> None:
        self.runner = runner
        self.agent_id = agent_id
        self.pending: list[StoredEvent] = []
        self.taken: list[StoredEvent] = []
        """The triggers of the turn that began, until its run is in the store
        (its row rides with ``agent_started``): still listed as queued, so a
        run is never in neither list."""
        self.task: asyncio.Task[None] | None = None
        self.wake: asyncio.TimerHandle | None = None
        self.last_start = float("-inf")
        self.run_id: str | None = None

    @property
    def busy(self) -> bool:
        """Whether a turn is running or scheduled."""
        return (self.task is not None and not self.task.done()) or self.wake is not None

    def push(self, stored: StoredEvent) -> None:
        """Add a trigger; start a turn now or when the cooldown ends."""
        self.pending.append(stored)
        self._schedule()

    def _schedule(self) -> None:
        if self.busy or not self.pending:
            return
        delay = self.last_start + self.runner.cooldown_s - time.monotonic()
        if delay > 0:
            self.wake = asyncio.get_running_loop().call_later(delay, self._start)
        else:
            self._start()

    def _start(self) -> None:
        self.wake = None
        self.task = asyncio.ensure_future(self._turn())
        self.runner.tasks.add(self.task)
        self.task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self.taken = []
        self.runner.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("turn of %s crashed", self.agent_id, exc_info=task.exception())
        if not self.runner.closed:
            self._schedule()
        self.runner.quieter()

    async def _turn(self) -> None:
        async with self.runner.limit:
            # A keystroke waiting now is answered before this turn starts
            # (``editor_first.py``); waiting here is waiting for the slot.
            await give_way()
            events, self.pending = self.pending, []
            if not events:  # every trigger was cancelled while waiting for a slot
                return
            self.taken = events
            self.last_start = time.monotonic()
            await self.runner.run_turn(self, events)

    def cancel(self) -> bool:
        """Cancel the running turn (and any scheduled one)."""
        if self.wake is not None:
            self.wake.cancel()
            self.wake = None
            self.runner.quieter()
        if self.task is not None and not self.task.done():
            self.task.cancel()
            return True
        return False


class Runner:
    """Runs agents' turns for one project."""

    def __init__(self, swarm: Swarm, *, max_concurrency: int, cooldown_s: float):
        self.swarm = swarm
        self.cooldown_s = cooldown_s
        self.limit = asyncio.Semaphore(max_concurrency)
        self.actors: dict[str, Actor] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.closed = False
        self.reserved: dict[str, str] = {}
        """Trigger event id → the run id promised for it (``remora.agent.chat``
        answers with a run id before the run starts)."""
        self.answered_by: dict[str, str] = {}
        """A promised run coalesced into a running turn → that turn's run id."""
        self._quieter = asyncio.Event()
        """Set when a turn ends or a scheduled one is called off: whoever
        waits in :meth:`idle` looks again."""

    def trigger(self, agent_id: str, stored: StoredEvent) -> None:
        """Queue an admitted trigger for ``agent_id``."""
        if self.closed:
            return
        actor = self.actors.get(agent_id)
        if actor is None:
            actor = self.actors[agent_id] = Actor(self, agent_id)
        actor.push(stored)

    async def run_turn(self, actor: Actor, events: list[StoredEvent]) -> None:
        """One turn: record the run's start, run it, record its end."""
        turn, joined = self._claim(actor, events)
        failed = False
        started: asyncio.Future[StoredEvent] | None = None
        # Recording the start is inside the ``try``: a run cancelled that early
        # still ends as cancelled, with its event and the agent idle again.
        try:
            started = self._record_start(turn, joined)
            started.add_done_callback(lambda _done: setattr(actor, "taken", []))
            await give_way()
            answer = await self._run(turn, started)
            end = AgentCompleted(agent_id=turn.agent_id, result=answer)
            await self._record_end(turn, end, joined)
        except asyncio.CancelledError:
            end = AgentCancelled(agent_id=turn.agent_id, reason="cancelled")
            await asyncio.shield(self._record_end(turn, end, joined))
            raise
        except Exception as failure:  # the agent's failure, not the engine's
            failed = True
            await self._record_failure(turn, failure, joined)
        finally:
            await self._release(actor, started, joined, failed=failed)

    def _claim(
        self, actor: Actor, events: list[StoredEvent]
    ) -> tuple[Turn, list[tuple[str, StoredEvent]]]:
        """The turn of ``events``, and the promised runs it answers.

        Coalesced triggers share one run: the first promise is kept, the
        others are answered by it (and end with it).
        """
        first = events[0].event
        promised = [self.reserved.pop(e.event.id, None) for e in events]
        run_id = actor.run_id = next((r for r in promised if r), None) or new_run_id()
        joined = [
            (promise, stored)
            for promise, stored in zip(promised, events, strict=True)
            if promise and promise != run_id
        ]
        for promise, _stored in joined:
            self.answered_by[promise] = run_id
        turn = Turn(
            agent_id=actor.agent_id,
            run_id=run_id,
            events=events,
            correlation_id=first.correlation_id,
            depth=max(e.event.depth for e in events) + 1,
            swarm=self.swarm,
        )
        return turn, joined

    def _record_start(
        self, turn: Turn, joined: Sequence[tuple[str, StoredEvent]]
    ) -> asyncio.Future[StoredEvent]:
        """Record the run (and those it answers) as running and emit its
        ``agent_started``; the future of that event.

        The runs' rows ride in the transaction of the ``agent_started``; the
        turn begins without waiting for that commit (whatever it emits is
        logged after it).
        """
        swarm, first, now = self.swarm, turn.events[0].event, time.time()
        fired = fired_by(swarm.index, turn.agent_id, turn.events[0])
        graph = first.__dict__.get("graph_run_id")
        swarm.events.also_write(
            RunStarted(
                turn.run_id,
                turn.agent_id,
                first.id,
                first.correlation_id,
                now,
                fired,
                graph,
            ),
            *(
                RunStarted(
                    promise,
                    turn.agent_id,
                    stored.event.id,
                    stored.event.correlation_id,
                    now,
                    fired_by(swarm.index, turn.agent_id, stored),
                    stored.event.__dict__.get("graph_run_id"),
                )
                for promise, stored in joined
            ),
        )
        swarm.set_agent_status(turn.agent_id, AgentStatus.RUNNING)
        return turn.emit_nowait(
            AgentStarted(
                agent_id=turn.agent_id,
                trigger_ids=tuple(e.event.id for e in turn.events),
            )
        )

    async def _run(self, turn: Turn, started: asyncio.Future[StoredEvent]) -> str:
        """Call the turn function and send its answer to whoever asked; the
        answer, once the run's ``agent_started`` is in the log.
        """
        answer = await self.swarm.turn_function(turn) or ""
        await self._reply(turn, answer)
        # A quick turn's bookkeeping may still linger: write it now. Until
        # ``agent_started`` is in, a cancel still ends the run cancelled.
        self.swarm.events.flush()
        await started
        return answer

    async def _record_failure(
        self,
        turn: Turn,
        failure: Exception,
        joined: Sequence[tuple[str, StoredEvent]],
    ) -> None:
        """Tell the askers why the turn failed, and record its end."""
        error = (
            str(failure)
            if isinstance(failure, TurnFailed)
            else f"{type(failure).__name__}: {failure}"
        )
        reason = failure.reason if isinstance(failure, TurnFailed) else None
        log.warning("turn of %s failed: %s", turn.agent_id, error)
        await self._reply(turn, f"I could not do it: {error}")
        await self._record_end(
            turn,
            AgentFailed(agent_id=turn.agent_id, error=error, reason=reason),
            joined,
        )

    async def _release(
        self,
        actor: Actor,
        started: asyncio.Future[StoredEvent] | None,
        joined: Sequence[tuple[str, StoredEvent]],
        *,
        failed: bool,
    ) -> None:
        """After the turn, however it ended: the agent is free again."""
        if started is not None:  # the run's row must exist before its end
            await asyncio.shield(asyncio.wait([started]))
        actor.run_id = None
        for promise, _stored in joined:
            self.answered_by.pop(promise, None)
        self.swarm.set_agent_status(
            actor.agent_id, AgentStatus.ERROR if failed else AgentStatus.IDLE
        )

    async def _record_end(
        self,
        turn: Turn,
        event: AgentCompleted | AgentFailed | AgentCancelled,
        joined: Sequence[tuple[str, StoredEvent]] = (),
    ) -> None:
        """Emit a run's last event, and the same end for each run it answered;
        the runs' rows are updated in the same transaction.

        The rows' ``error`` is scrubbed of secrets here, where run errors are
        written (the events are scrubbed by the event store).
        """
        status = RUN_ENDS[event.type]
        failed = event if isinstance(event, AgentFailed) else None
        error, reason = (failed.error, failed.reason) if failed else (None, None)
        now, clean = time.time(), None if error is None else scrub(error)
        self.swarm.events.also_write(
            RunsFinished(
                (turn.run_id, *(promise for promise, _ in joined)),
                status,
                now,
                clean,
                reason,
            )
        )
        # The runs it answered end first (queued, in the same transaction);
        # awaiting the turn's own end flushes them all at once: a lingering
        # last event would hold every run's end back by the linger time.
        ends = [
            self.swarm.emit_nowait(
                event.model_copy(
                    update={
                        "id": new_event_id(),
                        "run_id": promise,
                        "answered_by": turn.run_id,
                        "correlation_id": stored.event.correlation_id,
                        "depth": stored.event.depth + 1,
                    }
                )
            )
            for promise, stored in joined
        ]
        await turn.emit(event)
        if ends:
            await asyncio.gather(*ends)

    async def _reply(self, turn: Turn, answer: str) -> None:
        """Send the turn's answer back to every agent that asked it something
        (``message_node``, ``ask_parent``), in the same cascade.
        """
        for request in turn.requests():
            await turn.emit(
                AgentMessage(
                    from_agent=turn.agent_id,
                    to_agent=request.from_agent,
                    message=answer.strip() or "(no answer)",
                    tags=(REPLY_TAG,),
                    reply_to=request.id,
                    from_name=self.swarm.name_of(turn.agent_id),
                    to_name=self.swarm.name_of(request.from_agent),
                )
            )

    def reserve(self, trigger_id: str) -> str:
        """The run id the turn triggered by event ``trigger_id`` will have."""
        run_id = self.reserved[trigger_id] = new_run_id()
        return run_id

    def cancel_run(self, run_id: str) -> bool:
        """Cancel the turn with ``run_id``: running, or promised and waiting, or
        the turn that answers it (coalesced).
        """
        run_id = self.answered_by.get(run_id, run_id)
        for actor in self.actors.values():
            if actor.run_id == run_id:
                return actor.cancel()
        waiting = [t for t, r in self.reserved.items() if r == run_id]
        for actor in self.actors.values():
            dropped = [s for s in actor.pending if s.event.id in waiting]
            if dropped:
                actor.pending = [s for s in actor.pending if s not in dropped]
                for stored in dropped:
                    self.reserved.pop(stored.event.id, None)
                if not actor.pending and actor.wake is not None:
                    actor.wake.cancel()
                    actor.wake = None
                    self.quieter()
                # The run never started, yet whoever holds its id sees it end,
                # and the list of runs shows it cancelled.
                trigger = dropped[0].event
                self.swarm.events.also_write(
                    RunCancelledEarly(
                        run_id,
                        actor.agent_id,
                        trigger.id,
                        trigger.correlation_id,
                        trigger.timestamp,
                        time.time(),
                    )
                )
                self.swarm.emit_nowait(
                    AgentCancelled(
                        agent_id=actor.agent_id,
                        reason="cancelled before it started",
                        run_id=run_id,
                        correlation_id=trigger.correlation_id,
                        depth=trigger.depth + 1,
                    )
                ).add_done_callback(_log_failure)
                return True
        return False

    def is_running(self, run_id: str) -> bool:
        """Whether ``run_id`` is running or promised and still waiting."""
        run_id = self.answered_by.get(run_id, run_id)
        running = any(actor.run_id == run_id for actor in self.actors.values())
        return running or run_id in self.reserved.values()

    def quieter(self) -> None:
        """A turn ended or a scheduled one was called off (see :meth:`idle`)."""
        self._quieter.set()

    async def idle(self) -> None:
        """Wait until no event is being stored and no turn is running or
        scheduled (tests, shutdown).

        Events settle first (what a turn emits may trigger the next turn);
        while a turn runs or waits for its cooldown, this waits for one to end
        (:meth:`quieter`), then looks again.
        """
        events = self.swarm.events
        while True:
            await events.settled()
            self._quieter.clear()
            busy = any(actor.busy for actor in self.actors.values()) or self.tasks
            if busy:
                await self._quieter.wait()
            elif not events.pending:
                return

    async def close(self) -> None:
        """Cancel every running and scheduled turn."""
        self.closed = True
        for actor in self.actors.values():
            actor.cancel()
        if self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)
