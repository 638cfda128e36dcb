"""The ``usage`` facade: what agents' runs cost, in all, by node, graph run,
cascade and day (``store/usage.py`` totals the stored runs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from remora_core.front.startup import Startup
    from remora_core.store.usage import Grouping, Usage

GROUPS: tuple[Grouping, ...] = ("node", "graph", "cascade", "day")
"""How :meth:`Costs.report` groups runs."""


class Costs:
    """Token usage and wall time of one project's runs."""

    def __init__(self, startup: Startup) -> None:
        self._startup = startup

    async def report(self, since: float | None, limit: int) -> dict[str, Any]:
        """Totals since ``since`` (None: ever): in all and by node, graph
        run, cascade and day (the costliest first, the latest days first).
        """
        parts = await self._startup.parts()
        usage, graph = parts.swarm.usage, parts.swarm.graph
        report: dict[str, Any] = {
            "since": since,
            "total": (await usage.total(since=since)).to_json(),
        }
        for by in GROUPS:
            rows = await usage.grouped(by, since=since, limit=limit)
            report[f"by_{by}"] = [_row(key, spent, by, graph) for key, spent in rows]
        return report


def _row(key: str, spent: Usage, by: Grouping, graph: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"key": key, **spent.to_json()}
    if by == "node":
        node = graph.get(key)
        row["name"] = node.qualified_name if node is not None else None
    return row
