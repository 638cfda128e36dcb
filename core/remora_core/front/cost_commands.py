"""What agents cost: ``remora.usage`` (``front/costs.py``). Each run's own
tokens and time ride in ``remora.runs.list``, a node's in its card.
"""

from __future__ import annotations

import re
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import Field, StrictFloat, StrictInt, StrictStr

from remora_core.front import answers
from remora_core.front.arguments import limit_field
from remora_core.front.errors import InvalidArguments
from remora_core.front.table import Arguments, Door, Route, command
from remora_core.store.usage import start_of_day

if TYPE_CHECKING:
    from remora_core.front.app import RemoraApp

SPAN = re.compile(r"^(\d+(?:\.\d+)?)\s*([mhdw])$")
SECONDS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


class UsageArgs(Arguments):
    """Since when, and how many rows per grouping."""

    since: StrictStr | StrictInt | StrictFloat | None = Field(
        default=None,
        description="a time in seconds since the epoch, a date (2026-11-27), "
        "'today', or a span back from now (90m, 24h, 7d, 2w); none: ever",
    )
    limit: int = limit_field(20, 1000)


def since_time(since: str | float | None, now: float | None = None) -> float | None:
    """``since`` (see :class:`UsageArgs`) as seconds since the epoch."""
    if since is None or isinstance(since, int | float):
        return None if since is None else float(since)
    text = since.strip().lower()
    now = time.time() if now is None else now
    if text == "today":
        return start_of_day(now)
    if (span := SPAN.match(text)) is not None:
        return now - float(span.group(1)) * SECONDS[span.group(2)]
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise InvalidArguments(
            f"remora.usage: since: {since!r} is not a date (2026-11-27), 'today' "
            "or a span such as 24h or 7d"
        ) from None


@command("remora.usage", UsageArgs, answers.UsageReport, Route.WORKSPACE)
async def usage(app: RemoraApp, a: UsageArgs, door: Door) -> Any:
    """Tokens and wall time of agents' runs: in all, by node, graph run,
    cascade (what one request set off) and day.
    """
    return await app.usage.report(since_time(a.since), a.limit)


COST_COMMANDS = [usage]
