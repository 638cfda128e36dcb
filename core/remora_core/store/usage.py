"""What agents' runs cost, totalled from the ``runs`` table.

Each run's row carries its tokens (summed per model response as it arrives,
``store/runs.py`` :class:`RunUsageAdded`) and its start and end; this module
adds them up per node, per graph run, per cascade (correlation id) and per
day, and answers the budgets (``agents.max_tokens_per_day`` / ``_per_graph_run``)
what has been spent. Days are the server's local calendar days. A graph run's
cascade is ``co_<graph_run_id>`` (``graphs/story.py``), so its total is its
cascade's.
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

GRAPH_CASCADE = "co_gr_"
"""How a graph run's correlation id begins."""

_KEYS: dict[Grouping, str] = {
    "node": "node_id",
    "graph": "substr(correlation_id, 4)",
    "cascade": "correlation_id",
    "day": "date(started_at, 'unixepoch', 'localtime')",
}
_WHERE: dict[Grouping, str] = {
    "node": "",
    "graph": f"AND substr(correlation_id, 1, 6) = '{GRAPH_CASCADE}'",
    "cascade": "AND correlation_id IS NOT NULL",
    "day": "",
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
    ) -> Usage:
        """What runs started since ``since`` (of a node, of a cascade) cost."""
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
            f"{_WHERE[by]} GROUP BY key ORDER BY {order} LIMIT ?"
        )

        def work(db: sqlite3.Connection) -> list[tuple[str, Usage]]:
            rows = db.execute(sql, (time.time(), since or 0.0, limit)).fetchall()
            return [(str(row[0]), _usage(row[1:])) for row in rows]

        return await self.database.read(work, "totalling usage") or []
