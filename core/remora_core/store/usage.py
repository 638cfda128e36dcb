"""What agents' runs cost, totalled from the ``runs`` table.

Each run's row carries its tokens (summed per model response as it arrives,
``store/runs.py`` :class:`RunUsageAdded`) and its start and end; this module
adds them up per node, per graph run, per cascade (correlation id) and per
day, and answers the budgets (``agents.max_tokens_per_day`` / ``_per_graph_run``)
what has been spent. Days are the server's local calendar days. A graph run
costs what its steps' runs cost (``runs.graph_run_id``) and what they set off:
the runs of their cascades (:data:`GRAPH_OF`).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import sqlite3

    from remora_core.store.database import Database

Grouping = Literal["node", "graph", "cascade", "day"]

GRAPH_OF = (
    "COALESCE(graph_run_id, (SELECT g.graph_run_id FROM runs AS g "
    "WHERE g.correlation_id = runs.correlation_id AND g.graph_run_id IS NOT NULL "
    "LIMIT 1))"
)
"""A run's graph run: its own (a step's run), else that of a step's run in
its cascade (what the step set off)."""

_KEYS: dict[Grouping, str] = {
    "node": "node_id",
    "graph": GRAPH_OF,
    "cascade": "correlation_id",
    "day": "date(started_at, 'unixepoch', 'localtime')",
}
_SUMS = (
    "COUNT(*), SUM(input_tokens), SUM(output_tokens), SUM(cached_tokens), "
    "SUM(requests), SUM(COALESCE(ended_at, ?) - started_at)"
)


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens and wall time of some runs."""

    runs: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    """Input tokens the server read from its cache (where it reports them)."""
    requests: int = 0
    seconds: float = 0.0
    """Wall time of the runs, summed (a running one counts until now)."""

    @property
    def tokens(self) -> int:
        """Input plus output tokens (what the budgets count)."""
        return self.input_tokens + self.output_tokens

    def to_json(self) -> dict[str, Any]:
        """The totals as JSON, ``tokens`` included."""
        return {**asdict(self), "tokens": self.tokens}


def _usage(row: tuple[Any, ...] | None) -> Usage:
    if row is None:
        return Usage()
    runs, i, o, c, n, s = row
    return Usage(runs or 0, i or 0, o or 0, c or 0, n or 0, round(s or 0.0, 3))


def start_of_day(now: float | None = None) -> float:
    """The local midnight that began the day of ``now``."""
    moment = datetime.fromtimestamp(time.time() if now is None else now)
    return moment.replace(hour=0, minute=0, second=0, microsecond=0).timestamp()


class UsageStore:
    """Reads totals; without a database there are none (all zero)."""

    def __init__(self, database: Database | None) -> None:
        self.database = database

    async def total(
        self,
        *,
        since: float | None = None,
        node_id: str | None = None,
        correlation_id: str | None = None,
        graph_run_id: str | None = None,
    ) -> Usage:
        """What runs started since ``since`` (of a node, a cascade, a graph
        run) cost.
        """
        if self.database is None:
            return Usage()
        where: list[str] = ["started_at >= ?"]
        args: list[Any] = [since or 0.0]
        if node_id is not None:
            where.append("node_id = ?")
            args.append(node_id)
        if correlation_id is not None:
            where.append("correlation_id = ?")
            args.append(correlation_id)
        if graph_run_id is not None:
            # Its steps' runs and their cascades, through the indexes (not
            # GRAPH_OF per row: a graph's budget asks before every turn).
            where.append(
                "(graph_run_id = ? OR correlation_id IN (SELECT correlation_id "
                "FROM runs WHERE graph_run_id = ?))"
            )
            args += [graph_run_id, graph_run_id]
        sql = f"SELECT {_SUMS} FROM runs WHERE {' AND '.join(where)}"

        def work(db: sqlite3.Connection) -> Usage:
            return _usage(db.execute(sql, (time.time(), *args)).fetchone())

        return await self.database.read(work, "totalling usage") or Usage()

    async def grouped(
        self, by: Grouping, *, since: float | None = None, limit: int = 100
    ) -> list[tuple[str, Usage]]:
        """Totals per node / graph run / cascade / day, the costliest (for
        days: the latest) first.
        """
        if self.database is None:
            return []
        key = _KEYS[by]
        order = "key DESC" if by == "day" else "SUM(input_tokens + output_tokens) DESC"
        sql = (
            f"SELECT {key} AS key, {_SUMS} FROM runs WHERE started_at >= ? "
            "GROUP BY key HAVING key IS NOT NULL "
            f"ORDER BY {order} LIMIT ?"
        )

        def work(db: sqlite3.Connection) -> list[tuple[str, Usage]]:
            rows = db.execute(sql, (time.time(), since or 0.0, limit)).fetchall()
            return [(str(row[0]), _usage(row[1:])) for row in rows]

        return await self.database.read(work, "totalling usage") or []

    async def graph_of(self, correlation_id: str) -> str | None:
        """The graph run a cascade belongs to (one of its runs is a step's)."""
        if self.database is None:
            return None

        def work(db: sqlite3.Connection) -> str | None:
            row = db.execute(
                "SELECT graph_run_id FROM runs WHERE correlation_id = ? "
                "AND graph_run_id IS NOT NULL LIMIT 1",
                (correlation_id,),
            ).fetchone()
            return row[0] if row else None

        return await self.database.read(work, "reading runs")
