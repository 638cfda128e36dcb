"""Persisted custom subscriptions (defaults are implicit, never stored)."""

from __future__ import annotations

import json
import logging
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
