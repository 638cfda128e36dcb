"""Persisted custom subscriptions (defaults are implicit, never stored) and
the agents a person muted.
"""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING

from remora_core.events.subscriptions import Pattern, Subscription

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    import sqlite3

    from remora_core.store.database import Database


class SubscriptionStore:
    """Repository of the ``subscriptions`` table."""

    def __init__(self, database: Database | None) -> None:
        self.database = database

    async def load(self) -> list[Subscription]:
        """Every stored subscription."""
        if self.database is None:
            return []

        def work(db: sqlite3.Connection) -> list[Subscription]:
            rows = db.execute(
                "SELECT id, agent_id, pattern, is_default, created_at "
                "FROM subscriptions"
            ).fetchall()
            found = []
            for id_, agent, pattern, default, created in rows:
                try:
                    parsed = Pattern.model_validate(json.loads(pattern))
                except (ValueError, TypeError) as error:  # a glob refused since
                    log.warning("skipping subscription %s: %s", id_, error)
                    continue
                found.append(
                    Subscription(
                        id=id_,
                        agent_id=agent,
                        pattern=parsed,
                        default=bool(default),
                        created_at=created,
                    )
                )
            return found

        return await self.database.read(work, "loading subscriptions") or []

    async def add(self, subscription: Subscription) -> None:
        """Store one subscription (replacing one with the same id)."""
        if self.database is None:
            return

        def work(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT OR REPLACE INTO subscriptions "
                "(id, agent_id, pattern, is_default, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (
                    subscription.id,
                    subscription.agent_id,
                    subscription.pattern.model_dump_json(exclude_none=True),
                    int(subscription.default),
                    subscription.created_at,
                ),
            )

        await self.database.transaction(work, "saving a subscription")

    async def remove(self, ids: list[str]) -> None:
        """Delete subscriptions by id."""
        if self.database is None or not ids:
            return

        def work(db: sqlite3.Connection) -> None:
            db.executemany(
                "DELETE FROM subscriptions WHERE id = ?", [(i,) for i in ids]
            )

        await self.database.transaction(work, "removing subscriptions")

    async def muted(self) -> set[str]:
        """Agents a person muted (``muted_agents``)."""
        if self.database is None:
            return set()

        def work(db: sqlite3.Connection) -> set[str]:
            rows = db.execute("SELECT agent_id FROM muted_agents").fetchall()
            return {row[0] for row in rows}

        return await self.database.read(work, "reading muted agents") or set()

    async def set_muted(self, agent_id: str, muted: bool) -> None:
        """Record that a person muted (or unmuted) an agent."""
        if self.database is None:
            return

        def work(db: sqlite3.Connection) -> None:
            if muted:
                db.execute(
                    "INSERT OR REPLACE INTO muted_agents (agent_id, muted_at) "
                    "VALUES (?, ?)",
                    (agent_id, time.time()),
                )
            else:
                db.execute("DELETE FROM muted_agents WHERE agent_id = ?", (agent_id,))

        await self.database.transaction(work, "muting an agent")
