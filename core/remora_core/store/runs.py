"""Persisted agent runs and cascade chains."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from remora_core.redact import scrub

if TYPE_CHECKING:
    import sqlite3

    from remora_core.store.database import Database


START_RUN_SQL = (
    "INSERT INTO runs (id, node_id, trigger_event_id, correlation_id, "
    "status, started_at) VALUES (?, ?, ?, ?, 'running', ?)"
)
CANCELLED_RUN_SQL = (
    "INSERT OR IGNORE INTO runs (id, node_id, trigger_event_id, correlation_id, "
    "status, started_at, ended_at, error) "
    "VALUES (?, ?, ?, ?, 'cancelled', ?, ?, 'cancelled before it started')"
)
"""A promised run cancelled while queued: it never started, yet is listed."""
FINISH_RUN_SQL = "UPDATE runs SET status = ?, ended_at = ?, error = ? WHERE id = ?"
ADD_CHAIN_SQL = (
    "INSERT OR REPLACE INTO activation_chain "
    "(correlation_id, agent_id, depth, timestamp) VALUES (?, ?, ?, ?)"
)


@dataclass(frozen=True, slots=True)
class RunRow:
    """One row of ``runs``."""

    id: str
    node_id: str
    trigger_event_id: str | None
    correlation_id: str | None
    status: str
    """running | completed | failed | cancelled | interrupted"""
    started_at: float
    ended_at: float | None
    error: str | None


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

        def work(db: sqlite3.Connection) -> None:
            db.execute(
                START_RUN_SQL,
                (run_id, node_id, trigger_event_id, correlation_id, time.time()),
            )

        await self.database.transaction(work, "recording a run")

    async def finish(self, run_id: str, status: str, error: str | None = None) -> None:
        """Record how a run ended."""
        if self.database is None:
            return

        if error is not None:
            error = scrub(error)  # like the runner's own writes

        def work(db: sqlite3.Connection) -> None:
            db.execute(FINISH_RUN_SQL, (status, time.time(), error, run_id))

        await self.database.transaction(work, "recording a run's end")

    async def running(self) -> list[tuple[str, str, str | None]]:
        """Runs recorded as ``running``: ``(run id, node id, correlation id)``."""
        if self.database is None:
            return []

        def work(db: sqlite3.Connection) -> list[tuple[str, str, str | None]]:
            rows = db.execute(
                "SELECT id, node_id, correlation_id FROM runs WHERE status = 'running'"
            ).fetchall()
            return [tuple(row) for row in rows]  # type: ignore[misc]

        return await self.database.read(work, "reading runs") or []

    async def mark_interrupted(self, run_id: str) -> None:
        """Record that a run died with the process that ran it."""
        await self.finish(run_id, "interrupted", "the server stopped during the run")

    async def status(self, run_id: str) -> str | None:
        """A run's recorded status."""
        if self.database is None:
            return None

        def work(db: sqlite3.Connection) -> str | None:
            row = db.execute(
                "SELECT status FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
            return row[0] if row else None

        return await self.database.read(work, "reading a run")

    async def recent(
        self, *, status: str | None, node_id: str | None, limit: int
    ) -> list[RunRow]:
        """Recorded runs, newest first, optionally of one status and node."""
        if self.database is None:
            return []
        where, args = [], []
        if status is not None:
            where.append("status = ?")
            args.append(status)
        if node_id is not None:
            where.append("node_id = ?")
            args.append(node_id)
        clause = f"WHERE {' AND '.join(where)} " if where else ""

        def work(db: sqlite3.Connection) -> list[RunRow]:
            rows = db.execute(
                "SELECT id, node_id, trigger_event_id, correlation_id, status, "
                f"started_at, ended_at, error FROM runs {clause}"
                "ORDER BY started_at DESC LIMIT ?",
                (*args, limit),
            ).fetchall()
            return [RunRow(*row) for row in rows]

        return await self.database.read(work, "listing runs") or []

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
            return [tuple(row) for row in rows]  # type: ignore[misc]

        return await self.database.transaction(work, "loading cascade chains") or []

    async def expire_chains(self, before: float) -> None:
        """Forget chain entries older than ``before``."""
        if self.database is None:
            return

        def work(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM activation_chain WHERE timestamp < ?", (before,))

        await self.database.transaction(work, "expiring cascade chains")
