"""The append-only event log: persisted first, with a monotonically rising ``seq``.

Appends are group-committed: events appended in one pass of the event loop,
or while the pipeline is full, share a transaction, so a burst of events costs
one commit, while a lone event is written at once. Up to
:data:`PIPELINE_DEPTH` batches are handed to the database thread at a time (it
runs them in order), so a batch never waits for the previous commit to come
back through a busy event loop. ``append`` returns only after the event is
committed (WAL, one transaction per batch), so whatever happens next —
matching, triggers, notifications — happens to an event that survives a crash;
batches are matched and published in ``seq`` order. Events appended with
``linger`` (a turn's bookkeeping, which nobody waits for) wait up to
:data:`LINGER_S` for the next event to share its transaction.

Every event is scrubbed of secrets (key values, ``Authorization`` values, URL
userinfo; ``redact.py``) before it is written, so the log, the bus and every
client see the scrubbed event.

Without a usable database (memory-only projects, a damaged store, a store
another server owns) the log keeps ``seq`` in memory and remembers the last
:data:`MEMORY_KEEP` events for queries. Such events are still matched and
published — the editor sees every event — but marked ``persisted: false``.

A commit that fails (a full disk) never desynchronises the pipeline: the store
is then given up for the session (``Database.fail``: one message to the
person), the failed batch and every batch queued behind it are delivered as
unpersisted events, and unpersisted events are numbered when they are
*delivered*, in pipeline order — so ``seq`` still only rises, with no
duplicate, whichever batch failed first. Nothing is written after a write that
failed (the database thread refuses it), so the log on disk is a prefix of what
the editor saw.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from remora_core.events.models import Event, parse_event
from remora_core.redact import scrub, scrub_json

if TYPE_CHECKING:
    from remora_core.store.database import Database

log = logging.getLogger(__name__)

MEMORY_KEEP = 10_000

_INSERT = (
    "INSERT INTO events (seq, id, type, timestamp, correlation_id, run_id, "
    "agent_id, from_agent, to_agent, depth, payload) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class Bookkeeping(Protocol):
    """A write that rides in the transaction of the next events
    (:meth:`EventStore.also_write`).

    The module that owns the table implements it and keeps its SQL (a run's
    row: ``store/runs.py``; an agent's status: ``store/nodes.py``; a proposal:
    ``review/proposals.py``…): the log only runs it, in its transaction, after
    the events and in the order the writes were made.
    """

    def write(self, db: sqlite3.Connection) -> None:
        """Write the rows (in the database thread, inside the transaction)."""
        ...


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event with its place in the log, and the nodes it concerns."""

    seq: int
    event: Event
    nodes: tuple[str, ...] = ()
    """``event.concerned_nodes()``, worked out once (it is needed twice);
    worked out here when not given."""
    persisted: bool = True
    """False: kept in memory only (no usable store); ``seq`` is then this
    process's own numbering, not a row of the log."""

    def __post_init__(self) -> None:
        if not self.nodes:
            object.__setattr__(self, "nodes", self.event.concerned_nodes())

    def to_json(self) -> dict[str, Any]:
        """The event's JSON with its ``seq`` (what clients receive), and
        ``persisted: false`` when it could not be stored.
        """
        data = {**self.event.model_dump(mode="json"), "seq": self.seq}
        if not self.persisted:
            data["persisted"] = False
        return data


@dataclass(frozen=True, slots=True)
class Unstored:
    """An event written nowhere; numbered when it is delivered."""

    event: Event
    nodes: tuple[str, ...]


Outcome = tuple["asyncio.Future[StoredEvent]", "StoredEvent | Unstored | BaseException"]
"""What became of one queued event: committed, kept in memory, or the error
that stopped it."""


def event_row(seq: int, event: Event, payload: str | None = None) -> tuple[Any, ...]:
    """The ``events`` table row of ``event`` at ``seq`` (``payload``: its JSON,
    if already made).
    """
    return (
        seq,
        event.id,
        event.type,
        event.timestamp,
        event.correlation_id,
        event.run_id,
        event.agent_id,
        event.from_agent,
        event.to_agent,
        event.depth,
        event.model_dump_json() if payload is None else payload,
    )


PIPELINE_DEPTH = 2
"""Batches handed to the database thread at once: the next batch waits in its
queue instead of for the previous commit to come back through the event loop."""

CAUGHT_UP_S = 10.0
"""How long a read waits at most for the events enqueued before it."""

LINGER_S = 0.01
"""How long an event appended with ``linger`` may wait for company before it is
written. A turn emits its bookkeeping (``agent_started``, ``model_request``,
``tool_called`` ...) without waiting for it; writing each at once costs a trip
to the database thread in the middle of the turn's own work, while lingering
lets them ride with the turn's next event that someone waits for (its end, at
the latest). 10 ms is below what a person notices."""

_INSERT_NODES = "INSERT OR IGNORE INTO event_nodes (node_id, seq) VALUES (?, ?)"


def _insert_events(
    db: sqlite3.Connection,
    batch: list[tuple[Event, tuple[str, ...], str]],
    extras: list[Bookkeeping],
    floor: int,
) -> list[StoredEvent | sqlite3.IntegrityError]:
    """Insert one batch of (event, its nodes, its JSON) in the database thread,
    inside its transaction.

    Numbering continues after the log's end: another process, or a batch
    ahead in the pipeline, may have written since ``floor``. An event the
    table refuses (a duplicate id) does not sink the others: the batch is
    written again one event at a time, each refusal reported in its place.
    """
    row = db.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()
    first = max(int(row[0]) if row else 0, floor) + 1

    def insert(
        items: list[tuple[Event, tuple[str, ...], str]], seq: int
    ) -> list[StoredEvent]:
        stored = [StoredEvent(seq + i, e, n) for i, (e, n, _) in enumerate(items)]
        db.executemany(
            _INSERT,
            [
                event_row(s.seq, s.event, payload)
                for s, (_, _, payload) in zip(stored, items, strict=True)
            ],
        )
        db.executemany(_INSERT_NODES, [(n, s.seq) for s in stored for n in s.nodes])
        return stored

    outcomes: list[StoredEvent | sqlite3.IntegrityError] = []
    db.execute("SAVEPOINT batch")
    try:
        outcomes.extend(insert(batch, first))
    except sqlite3.IntegrityError:
        db.execute("ROLLBACK TO batch")
        seq = first
        for item in batch:
            db.execute("SAVEPOINT one")
            try:
                outcomes.extend(insert([item], seq))
                seq += 1
            except sqlite3.IntegrityError as error:
                db.execute("ROLLBACK TO one")
                outcomes.append(error)
            db.execute("RELEASE one")
    db.execute("RELEASE batch")
    for extra in extras:
        extra.write(db)
    return outcomes


def _scrubbed(event: Event) -> tuple[Event, str]:
    """``event`` without secrets in any of its texts, and its JSON."""
    payload = event.model_dump_json()
    if scrub(payload) is payload:  # the common case: one regex scan
        return event, payload
    clean = parse_event(scrub_json(event.model_dump(mode="json")))
    return clean, clean.model_dump_json()


class EventStore:
    """Appends events durably and answers queries over them."""

    def __init__(self, database: Database | None) -> None:
        self.database = database
        self.last_seq = 0
        self._memory: deque[StoredEvent] = deque(maxlen=MEMORY_KEEP)
        self._pending: list[tuple[Event, asyncio.Future[StoredEvent]]] = []
        self._extras: list[Bookkeeping] = []
        """Writes to make with the next events, in the order they were made."""
        self._in_flight: deque[asyncio.Future[list[Outcome]]] = deque()
        """Batches being written, oldest first (at most :data:`PIPELINE_DEPTH`)."""
        self._starting = False
        """A batch task is scheduled but has not taken its events yet."""
        self._urgent = False
        """A pending event must be written now (not only lingering ones)."""
        self._linger: asyncio.TimerHandle | None = None
        """When lingering events are written anyway."""
        self._writer: asyncio.Task[None] | None = None
        """Delivers the batches of ``_in_flight`` in order."""
        self.on_commit: Callable[[list[StoredEvent]], None] | None = None
        """Called with every committed batch, in ``seq`` order, before the
        appenders hear back (the swarm matches and triggers here)."""

    @property
    def durable(self) -> bool:
        """Whether appended events go to disk."""
        return self.database is not None and self.database.writable

    @property
    def readable(self) -> bool:
        """Whether queries read the log on disk (also one another server owns)."""
        return self.database is not None and self.database.available

    async def open(self) -> None:
        """Read where the log ends."""

        def work(db: sqlite3.Connection) -> int:
            row = db.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()
            return int(row[0]) if row else 0

        if self.readable:
            assert self.database is not None  # readable: there is a store
            self.last_seq = await self.database.read(work, "reading events") or 0

    def enqueue(
        self, event: Event, *, linger: bool = False
    ) -> asyncio.Future[StoredEvent]:
        """Fix ``event``'s place in the log now; the future resolves once it is
        committed. Events enqueued in a row are committed in that order.

        ``linger``: nobody waits for this event, so it may wait up to
        :data:`LINGER_S` for the next event to share its transaction.
        """
        future: asyncio.Future[StoredEvent] = asyncio.get_running_loop().create_future()
        self._pending.append((event, future))
        if not linger:
            self._urgent = True
        self._submit()
        return future

    async def append(self, event: Event) -> StoredEvent:
        """Persist one event; return it with its ``seq`` once committed."""
        return await self.enqueue(event)

    def also_write(self, *writes: Bookkeeping) -> None:
        """Make ``writes`` in the transaction of the next events.

        Bookkeeping that belongs with events (the run an ``agent_started``
        opens, cascade chains) rides along instead of costing a commit, and
        is written if and only if those events are.
        """
        if self.durable:
            self._extras.extend(writes)

    async def append_many(self, events: list[Event]) -> list[StoredEvent]:
        """Persist several events (one transaction when nothing else is queued)."""
        return list(await asyncio.gather(*(self.append(e) for e in events)))

    # ---- writing -----------------------------------------------------------------

    def _submit(self) -> None:
        """Start a batch if there is room in the pipeline and none is starting.

        A batch takes what is pending when its task first runs, so events
        enqueued together (in one pass of the event loop) share a commit.
        """
        if (
            self._pending
            and not self._starting
            and len(self._in_flight) < PIPELINE_DEPTH
        ):
            if self._urgent:
                self._starting = True
                self._in_flight.append(asyncio.ensure_future(self._commit()))
            elif self._linger is None:
                self._linger = asyncio.get_running_loop().call_later(
                    LINGER_S, self.flush
                )
        if self._in_flight and (self._writer is None or self._writer.done()):
            self._writer = asyncio.ensure_future(self._deliver_in_order())

    def flush(self) -> None:
        """Write lingering events now."""
        if self._linger is not None:
            self._linger.cancel()
            self._linger = None
        if self._pending:
            self._urgent = True
            self._submit()

    async def _deliver_in_order(self) -> None:
        """Hand committed batches to ``on_commit`` and the appenders, in order."""
        while self._in_flight:
            outcomes = await asyncio.shield(self._in_flight[0])
            self._in_flight.popleft()
            self._submit()  # room for the next batch
            self._deliver(outcomes)

    async def _commit(self) -> list[Outcome]:
        self._starting = self._urgent = False
        if self._linger is not None:  # what lingered goes with this batch
            self._linger.cancel()
            self._linger = None
        batch, self._pending = self._pending, []
        self._submit()  # what arrives meanwhile can go right behind this batch
        try:
            results = await self._write([event for event, _ in batch])
        except Exception as error:
            return [(future, error) for _, future in batch]
        return [
            (future, result) for (_, future), result in zip(batch, results, strict=True)
        ]

    def _deliver(self, outcomes: list[Outcome]) -> None:
        numbered = [(future, self._number(o)) for future, o in outcomes]
        committed = [o for _, o in numbered if isinstance(o, StoredEvent)]
        if committed and self.on_commit is not None:
            try:
                self.on_commit(committed)
            except Exception:
                log.exception("handling committed events failed")
        for future, outcome in numbered:
            if future.done():
                continue
            if isinstance(outcome, StoredEvent):
                future.set_result(outcome)
            else:
                future.set_exception(outcome)

    def _number(
        self, outcome: StoredEvent | Unstored | BaseException
    ) -> StoredEvent | BaseException:
        """Give an unstored event its place, in delivery (= pipeline) order."""
        if not isinstance(outcome, Unstored):
            return outcome
        self.last_seq += 1
        stored = StoredEvent(self.last_seq, outcome.event, outcome.nodes, False)
        self._memory.append(stored)
        return stored

    @property
    def pending(self) -> bool:
        """Whether events are queued or being written."""
        return bool(self._pending) or bool(self._in_flight)

    async def settled(self) -> None:
        """Wait until everything queued is committed and handled (lingering
        events are written now).
        """
        while self._pending or (self._writer is not None and not self._writer.done()):
            self.flush()
            if self._writer is not None and not self._writer.done():
                await asyncio.shield(self._writer)
            else:  # a batch is about to start
                await asyncio.sleep(0)

    async def _write(
        self, events: list[Event]
    ) -> Sequence[StoredEvent | Unstored | sqlite3.IntegrityError]:
        """Write one batch; per event, its stored form, :class:`Unstored` when
        there is no store to write to, or why the store refused it.

        What is written (and then published) is each event scrubbed of
        secrets (``redact.py``): the one place every event passes.
        """
        prepared = [_scrubbed(event) for event in events]
        events = [event for event, _ in prepared]
        nodes = [event.concerned_nodes() for event in events]
        if not self.durable:
            return [Unstored(e, n) for e, n in zip(events, nodes, strict=True)]
        assert self.database is not None
        extras, self._extras = self._extras, []
        # Made here, not in the database thread: Python work there waits for
        # the GIL while this thread is busy (up to sys.getswitchinterval()).
        batch = [
            (event, found, payload)
            for (event, payload), found in zip(prepared, nodes, strict=True)
        ]
        floor = self.last_seq
        try:
            written = await self.database.transaction(
                lambda db: _insert_events(db, batch, extras, floor), "saving events"
            )
        except BaseException:
            self._extras[:0] = extras  # rolled back: keep them pending, first
            raise
        if written is None:  # the store just failed: keep counting in memory
            return [Unstored(e, n) for e, n in zip(events, nodes, strict=True)]
        kept = [s for s in written if isinstance(s, StoredEvent)]
        if kept:
            self.last_seq = max(self.last_seq, kept[-1].seq)
            self._memory.extend(kept)
        return written

    # ---- queries -------------------------------------------------------------

    async def caught_up(self) -> None:
        """Wait until every event enqueued so far is committed — not those
        enqueued meanwhile, so a steady stream of events never holds a reader.
        """
        waiting: list[asyncio.Future[Any]] = [f for _, f in self._pending]
        waiting += self._in_flight
        if waiting:
            self.flush()
            # Bounded: a store that stopped writing must not hold every reader.
            await asyncio.wait(
                [asyncio.ensure_future(asyncio.shield(w)) for w in waiting],
                timeout=CAUGHT_UP_S,
            )

    async def _select(
        self, where: str, args: tuple[Any, ...], limit: int, newest_first: bool
    ) -> list[StoredEvent] | None:
        if not self.readable:
            return None
        # A read answers with what happened before it was asked: a run the
        # runs list shows finished has its answer in the history (its events
        # may still be on their way to the database).
        await self.caught_up()
        order = "DESC" if newest_first else "ASC"

        def work(db: sqlite3.Connection) -> list[StoredEvent]:
            rows = db.execute(
                f"SELECT seq, payload FROM events WHERE {where} "
                f"ORDER BY seq {order} LIMIT ?",
                (*args, limit),
            ).fetchall()
            return [StoredEvent(seq, parse_event(payload)) for seq, payload in rows]

        assert self.database is not None  # readable: there is a store
        return await self.database.read(work, "reading events")

    async def since(self, seq: int, limit: int = 10_000) -> list[StoredEvent]:
        """Events after ``seq`` this process published, oldest first (to replay)."""
        found = (
            await self._select("seq > ?", (seq,), limit, False)
            if self.durable
            else None
        )
        if found is None:
            found = [s for s in self._memory if s.seq > seq][:limit]
        return found

    async def for_node(self, node_id: str, limit: int = 50) -> list[StoredEvent]:
        """The latest events concerning ``node_id``, newest first."""
        found = await self._select(
            "seq IN (SELECT seq FROM event_nodes WHERE node_id = ? "
            "ORDER BY seq DESC LIMIT ?)",
            (node_id, limit),
            limit,
            True,
        )
        if found is None:
            found = [s for s in reversed(self._memory) if node_id in s.nodes][:limit]
        return found

    async def conversation_of(
        self, node_id: str, types: tuple[str, ...], limit: int
    ) -> list[StoredEvent]:
        """The latest events of ``types`` concerning ``node_id``, newest first."""
        marks = ", ".join("?" * len(types))
        found = await self._select(
            f"type IN ({marks}) AND seq IN "
            "(SELECT seq FROM event_nodes WHERE node_id = ?)",
            (*types, node_id),
            limit,
            True,
        )
        if found is None:
            found = [
                s
                for s in reversed(self._memory)
                if node_id in s.nodes and s.event.type in types
            ][:limit]
        return found

    async def latest_of_types(
        self, types: tuple[str, ...], limit: int
    ) -> list[StoredEvent]:
        """The latest events of ``types``, newest first."""
        marks = ", ".join("?" * len(types))
        found = await self._select(f"type IN ({marks})", types, limit, True)
        if found is None:
            found = [s for s in reversed(self._memory) if s.event.type in types][:limit]
        return found

    async def of_runs(
        self, run_ids: list[str], types: tuple[str, ...]
    ) -> list[StoredEvent]:
        """The events of ``types`` of the given runs, oldest first."""
        if not run_ids:
            return []
        runs, marks = ", ".join("?" * len(run_ids)), ", ".join("?" * len(types))
        found = await self._select(
            f"run_id IN ({runs}) AND type IN ({marks})",
            (*run_ids, *types),
            len(run_ids) * 4,
            False,
        )
        if found is None:
            found = [
                s
                for s in self._memory
                if s.event.run_id in run_ids and s.event.type in types
            ]
        return found

    async def by_ids(self, event_ids: list[str]) -> list[StoredEvent]:
        """The events with the given ids (those still known), oldest first."""
        if not event_ids:
            return []
        marks = ", ".join("?" * len(event_ids))
        found = await self._select(
            f"id IN ({marks})", tuple(event_ids), len(event_ids), False
        )
        if found is None:
            wanted = set(event_ids)
            found = [s for s in self._memory if s.event.id in wanted]
        return found

    async def of_type(self, event_type: str, limit: int = 50) -> list[StoredEvent]:
        """The latest events of one type, newest first."""
        found = await self._select("type = ?", (event_type,), limit, True)
        if found is None:
            found = [s for s in reversed(self._memory) if s.event.type == event_type][
                :limit
            ]
        return found

    async def of_correlation(
        self, correlation_id: str, event_type: str, limit: int = 1000
    ) -> list[StoredEvent]:
        """The events of one type in one cascade, oldest first."""
        found = await self._select(
            "correlation_id = ? AND type = ?",
            (correlation_id, event_type),
            limit,
            False,
        )
        if found is None:
            found = [
                s
                for s in self._memory
                if s.event.correlation_id == correlation_id
                and s.event.type == event_type
            ][:limit]
        return found

    async def for_correlation(
        self, correlation_id: str, limit: int = 1000
    ) -> list[StoredEvent]:
        """Every event of one cascade, oldest first."""
        found = await self._select(
            "correlation_id = ?", (correlation_id,), limit, False
        )
        if found is None:
            found = [
                s for s in self._memory if s.event.correlation_id == correlation_id
            ][:limit]
        return found

    async def close(self) -> None:
        """Finish the writes under way, and bookkeeping still waiting for one."""
        await self.settled()
        extras, self._extras = self._extras, []
        if extras and self.durable:
            assert self.database is not None

            def work(db: sqlite3.Connection) -> None:
                for extra in extras:
                    extra.write(db)

            await self.database.transaction(work, "saving bookkeeping")
