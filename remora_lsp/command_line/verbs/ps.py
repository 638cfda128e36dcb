"""``remora ps``: agent runs in flight (``--all``: recent ones too)."""

from __future__ import annotations

import logging

from remora_lsp.command_line import output

log = logging.getLogger(__name__)

NAME = "ps"
HELP = "list agent runs in flight (--all: recent runs too)"


def add_arguments(parser) -> None:
    """``--all``, ``--node`` and ``--limit``."""
    parser.add_argument("--all", "-a", action="store_true", help="finished runs too")
    parser.add_argument("--node", metavar="NODE")
    parser.add_argument("--limit", type=int, default=20)


async def run(args, backend) -> int:
    """Print the runs."""
    arguments = {"limit": args.limit, "node_id": args.node}
    if not args.all:
        arguments["status"] = "running"
    runs = await backend.call("remora.runs.list", arguments)
    if args.json:
        output.emit_json(runs)
        return 0
    rows = [
        (
            r["id"],
            r["status"],
            output.when(r["started_at"]),
            output.when(r["ended_at"]),
            r["node_id"],
            r.get("node") or "",
            r.get("error") or "",
        )
        for r in runs
    ]
    empty = (
        "no runs" if args.all else "no runs in flight (remora ps --all: recent ones)"
    )
    output.emit_table(
        ("RUN", "STATUS", "STARTED", "ENDED", "NODE", "NAME", "ERROR"), rows, empty
    )
    return 0
