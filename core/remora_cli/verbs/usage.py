"""``remora usage [--since WHEN]``: what agents' runs cost, in all and by
node, graph run and day (tokens as the model reported them, wall time).
"""

from __future__ import annotations

import logging

from remora_cli import output

log = logging.getLogger(__name__)

NAME = "usage"
HELP = "tokens and time agents used: in all, by node, graph run and day"
GROUPS = (
    ("by_day", "DAY"),
    ("by_node", "NODE"),
    ("by_graph", "GRAPH RUN"),
    ("by_cascade", "CASCADE"),
)


def add_arguments(parser) -> None:
    """``--since`` and ``--limit``."""
    parser.add_argument(
        "--since",
        metavar="WHEN",
        help="a date (2026-11-27), 'today' or a span back (24h, 7d); default: ever",
    )
    parser.add_argument("--limit", type=int, default=20, help="rows per table")


def tokens(count: int) -> str:
    """A token count a person reads at a glance (12,345)."""
    return f"{count:,}"


def duration(seconds: float) -> str:
    """Wall time as ``1h02m``, ``3m05s`` or ``4.2s``."""
    if seconds >= 3600:
        return f"{int(seconds // 3600)}h{int(seconds % 3600 // 60):02d}m"
    if seconds >= 60:
        return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"
    return f"{seconds:.1f}s"


def _row(key: str, spent: dict) -> tuple[str, ...]:
    return (
        key,
        str(spent["runs"]),
        tokens(spent["input_tokens"]),
        tokens(spent["output_tokens"]),
        tokens(spent["cached_tokens"]),
        tokens(spent["tokens"]),
        duration(spent["seconds"]),
    )


async def run(args, backend) -> int:
    """Print the totals, then one table per grouping."""
    report = await backend.call(
        "remora.usage", {"since": args.since, "limit": args.limit}
    )
    if args.json:
        output.emit_json(report)
        return 0
    total = report["total"]
    since = f" since {output.when(report['since'])}" if report["since"] else ""
    output.say(
        f"{total['runs']} runs{since}: {tokens(total['tokens'])} tokens "
        f"({tokens(total['input_tokens'])} in, {tokens(total['output_tokens'])} "
        f"out, {tokens(total['cached_tokens'])} cached), "
        f"{duration(total['seconds'])}"
    )
    for field, title in GROUPS:
        rows = [
            _row(
                f"{r['key']} {r['name']}" if r.get("name") else r["key"],
                r,
            )
            for r in report[field]
        ]
        if rows:
            output.say()
            output.emit_table(
                (title, "RUNS", "IN", "OUT", "CACHED", "TOKENS", "TIME"), rows, ""
            )
    return 0
