"""Persisted agent runs and cascade chains."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from remora_core.model import RunStatus
from remora_core.redact import scrub

if TYPE_CHECKING:
    import sqlite3

    from remora_core.store.database import Database


RUN_ENDS = {
    "agent_completed": RunStatus.COMPLETED,
    "agent_failed": RunStatus.FAILED,
    "agent_cancelled": RunStatus.CANCELLED,
    "run_interrupted": RunStatus.INTERRUPTED,
}
"""The type of the event that ends a run → the status it leaves the run in."""

_START_RUN = (
    "INSERT INTO runs (id, node_id, trigger_event_id, correlation_id, "
    "status, started_at, subscription_id, graph_run_id) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_CANCELLED_RUN = (
    "INSERT OR IGNORE INTO runs (id, node_id, trigger_event_id, correlation_id, "
    "status, started_at, ended_at, error) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, 'cancelled before it started')"
)
_FINISH_RUN = (
    "UPDATE runs SET status = ?, ended_at = ?, error = ?, end_reason = ? WHERE id = ?"
)
_ADD_USAGE = (
    "UPDATE runs SET input_tokens = input_tokens + ?, "
    "output_tokens = output_tokens + ?, cached_tokens = cached_tokens + ?, "
    "requests = requests + 1 WHERE id = ?"
)
_ADD_CHAIN = (
    "INSERT OR REPLACE INTO activation_chain "
    "(correlation_id, agent_id, depth, timestamp) VALUES (?, ?, ?, ?)"
)

# Writes that ride in the transaction of the events they belong with
# (``EventStore.also_write``): this module owns the tables, so it keeps their
# SQL; the runner and the swarm say *what* happened.


@dataclass(frozen=True, slots=True)
class RunStarted:
    """A run that begins (written with its ``agent_started``)."""

    run_id: str
    node_id: str
    trigger_event_id: str | None
    correlation_id: str | None
    started_at: float
    subscription_id: str | None = None
    """The subscription that fired it (``swarm/wake.py``)."""
    graph_run_id: str | None = None
    """The graph run whose step it is."""

    def write(self, db: sqlite3.Connection) -> None:
        """Insert the run as ``running`` (in the database thread)."""
        db.execute(
            _START_RUN,
            (
                self.run_id,
                self.node_id,
                self.trigger_event_id,
                self.correlation_id,
                RunStatus.RUNNING,
                self.started_at,
                self.subscription_id,
                self.graph_run_id,
            ),
        )


@dataclass(frozen=True, slots=True)
class RunsFinished:
    """Runs that ended the same way (a turn and the runs it answered),
    written with their last events.
    """

    run_ids: tuple[str, ...]
    status: RunStatus
    ended_at: float
    error: str | None
    """Already scrubbed of secrets."""
    reason: str | None = None
    """Why it ended, when a person should know (``limit_reached``)."""

    def write(self, db: sqlite3.Connection) -> None:
        """Update the runs' rows (in the database thread)."""
        db.executemany(
            _FINISH_RUN,
            [
                (self.status, self.ended_at, self.error, self.reason, i)
                for i in self.run_ids
            ],
        )


@dataclass(frozen=True, slots=True)
class RunUsageAdded:
    """One model response's tokens, added to its run's totals (written with
    its ``model_response``).
    """

    run_id: str
    input_tokens: int
    output_tokens: int
    cached_tokens: int

    def write(self, db: sqlite3.Connection) -> None:
        """Add to the run's totals (in the database thread)."""
        db.execute(
            _ADD_USAGE,
            (self.input_tokens, self.output_tokens, self.cached_tokens, self.run_id),
        )


@dataclass(frozen=True, slots=True)
class RunCancelledEarly:
    """A promised run cancelled while queued: it never started, yet is listed
    (written with its ``agent_cancelled``).
    """

    run_id: str
    node_id: str
    trigger_event_id: str
    correlation_id: str
    queued_at: float
    ended_at: float

    def write(self, db: sqlite3.Connection) -> None:
        """Insert the run as ``cancelled`` (in the database thread)."""
        db.execute(
            _CANCELLED_RUN,
            (
                self.run_id,
                self.node_id,
                self.trigger_event_id,
                self.correlation_id,
                RunStatus.CANCELLED,
                self.queued_at,
                self.ended_at,
            ),
        )


@dataclass(frozen=True, slots=True)
class ChainsAdded:
    """Cascade chain entries the rules admitted, written with the next events."""

    entries: list[tuple[str, str, int, float]]
    """``(correlation id, agent id, depth, timestamp)`` each."""

    def write(self, db: sqlite3.Connection) -> None:
        """Insert or replace the entries (in the database thread)."""
        db.executemany(_ADD_CHAIN, self.entries)


@dataclass(frozen=True, slots=True)
class RunRow:
    """One row of ``runs``."""

    id: str
    node_id: str
    trigger_event_id: str | None
    correlation_id: str | None
    status: RunStatus
    started_at: float
    ended_at: float | None
    error: str | None
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    requests: int = 0
    end_reason: str | None = None
    subscription_id: str | None = None
    graph_run_id: str | None = None


RUN_COLUMNS = (
    "id, node_id, trigger_event_id, correlation_id, status, started_at, "
    "ended_at, error, input_tokens, output_tokens, cached_tokens, requests, "
    "end_reason, subscription_id, graph_run_id"
)
"""The columns :func:`run_row` reads, in order."""


def run_row(row: tuple[Any, ...]) -> RunRow:
    """A :class:`RunRow` from the columns :data:`RUN_COLUMNS` name."""
    run_id, node, trigger, correlation, stored, *rest = row
    return RunRow(run_id, node, trigger, correlation, _status(stored), *rest)


def _status(stored: str) -> RunStatus:
    """A stored status; one this version does not know (written by a newer
    one) reads as running, as the list of runs always showed it.
    """
    try:
        return RunStatus(stored)
    except ValueError:
        return RunStatus.RUNNING


class RunStore:
    """Repository of the ``runs`` and ``activation_chain`` tables.

    Every method is a no-op without a database: runs then live in memory only.
    """

    def __init__(self, database: Database | None) -> None:
        self.database = database

    async def start(
        self,
        run_id: str,
        node_id: str,
        trigger_event_id: str | None,
        correlation_id: str | None,
    ) -> None:
        """Record a run that begins now."""
        if self.database is None:
            return

        started = RunStarted(
            run_id, node_id, trigger_event_id, correlation_id, time.time()
        )
        await self.database.transaction(started.write, "recording a run")

    async def finish(
        self, run_id: str, status: RunStatus, error: str | None = None
    ) -> None:
        """Record how a run ended."""
        if self.database is None:
            return

        if error is not None:
            error = scrub(error)  # like the runner's own writes

        finished = RunsFinished((run_id,), status, time.time(), error)
        await self.database.transaction(finished.write, "recording a run's end")

    async def running(self) -> list[tuple[str, str, str | None]]:
        """Runs recorded as ``running``: ``(run id, node id, correlation id)``."""
        if self.database is None:
            return []

        def work(db: sqlite3.Connection) -> list[tuple[str, str, str | None]]:
            rows = db.execute(
                "SELECT id, node_id, correlation_id FROM runs WHERE status = ?",
                (RunStatus.RUNNING,),
            ).fetchall()
            return [(row[0], row[1], row[2]) for row in rows]

        return await self.database.read(work, "reading runs") or []

    async def mark_interrupted(self, run_id: str) -> None:
        """Record that a run died with the process that ran it."""
        await self.finish(
            run_id, RunStatus.INTERRUPTED, "the server stopped during the run"
        )

    async def status(self, run_id: str) -> RunStatus | None:
        """A run's recorded status."""
        if self.database is None:
            return None

        def work(db: sqlite3.Connection) -> RunStatus | None:
            row = db.execute(
                "SELECT status FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
            return _status(row[0]) if row else None

        return await self.database.read(work, "reading a run")

    async def one(self, run_id: str) -> RunRow | None:
        """The row of one run, None if the store has none."""
        if self.database is None:
            return None

        def work(db: sqlite3.Connection) -> RunRow | None:
            row = db.execute(
                "SELECT id, node_id, trigger_event_id, correlation_id, status, "
                "started_at, ended_at, error FROM runs WHERE id = ?",
                (run_id,),
            ).fetchone()
            if row is None:
                return None
            i, node, trigger, correlation, stored, *rest = row
            return RunRow(i, node, trigger, correlation, _status(stored), *rest)

        return await self.database.read(work, "reading a run")

    async def recent(
        self, *, status: RunStatus | None, node_id: str | None, limit: int
    ) -> list[RunRow]:
        """Recorded runs, newest first, optionally of one status and node."""
        if self.database is None:
            return []
        where: list[str] = []
        args: list[str] = []
        if status is not None:
            where.append("status = ?")
            args.append(status)
        if node_id is not None:
            where.append("node_id = ?")
            args.append(node_id)
        clause = f"WHERE {' AND '.join(where)} " if where else ""

        def work(db: sqlite3.Connection) -> list[RunRow]:
            rows = db.execute(
                f"SELECT {RUN_COLUMNS} FROM runs {clause}"
                "ORDER BY started_at DESC LIMIT ?",
                (*args, limit),
            ).fetchall()
            return [run_row(row) for row in rows]

        return await self.database.read(work, "listing runs") or []

    async def by_ids(self, run_ids: list[str]) -> dict[str, RunRow]:
        """The recorded runs of ``run_ids`` (unknown ones are left out)."""
        if self.database is None or not run_ids:
            return {}
        marks = ", ".join("?" * len(run_ids))

        def work(db: sqlite3.Connection) -> dict[str, RunRow]:
            rows = db.execute(
                f"SELECT {RUN_COLUMNS} FROM runs WHERE id IN ({marks})", run_ids
            ).fetchall()
            return {row[0]: run_row(row) for row in rows}

        return await self.database.read(work, "reading runs") or {}

    async def for_triggers(self, event_ids: list[str]) -> dict[str, str]:
        """Trigger event id → the run it started (the first, if coalesced)."""
        if self.database is None or not event_ids:
            return {}
        marks = ", ".join("?" * len(event_ids))

        def work(db: sqlite3.Connection) -> dict[str, str]:
            rows = db.execute(
                f"SELECT trigger_event_id, id FROM runs WHERE trigger_event_id "
                f"IN ({marks}) ORDER BY started_at DESC",
                event_ids,
            ).fetchall()
            return {trigger: run for trigger, run in rows}

        return await self.database.read(work, "reading runs") or {}

    async def load_chains(self, since: float) -> list[tuple[str, str, int, float]]:
        """Chain entries younger than ``since`` (older ones are deleted)."""
        if self.database is None:
            return []

        def work(db: sqlite3.Connection) -> list[tuple[str, str, int, float]]:
            db.execute("DELETE FROM activation_chain WHERE timestamp < ?", (since,))
            rows = db.execute(
                "SELECT correlation_id, agent_id, depth, timestamp "
                "FROM activation_chain"
            ).fetchall()
            return [(row[0], row[1], row[2], row[3]) for row in rows]

        return await self.database.transaction(work, "loading cascade chains") or []

    async def expire_chains(self, before: float) -> None:
        """Forget chain entries older than ``before``."""
        if self.database is None:
            return

        def work(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM activation_chain WHERE timestamp < ?", (before,))

        await self.database.transaction(work, "expiring cascade chains")
