"""``remora ps``: agent runs in flight (``--all``: recent ones too)."""

from __future__ import annotations

import logging

from remora_core.swarm.run_list import RunStatus

from remora_cli import output

log = logging.getLogger(__name__)

NAME = "ps"
IN_FLIGHT = (RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.WAITING)
HELP = "list agent runs in flight (--all: recent runs too)"


def add_arguments(parser) -> None:
    """``--all``, ``--node`` and ``--limit``."""
    parser.add_argument("--all", "-a", action="store_true", help="finished runs too")
    parser.add_argument("--node", metavar="NODE")
    parser.add_argument("--limit", type=int, default=20)


async def run(args, backend) -> int:
    """Print the runs."""
    runs = await backend.call(
        "remora.runs.list", {"limit": args.limit, "node_id": args.node}
    )
    if not args.all:  # in flight: queued, running or waiting for a person
        runs = [r for r in runs if r["status"] in IN_FLIGHT]
    if args.json:
        output.emit_json(runs)
        return 0
    rows = [
        (
            r["id"],
            r["status"],
            output.when(r.get("started_at")),
            output.when(r.get("ended_at")),
            r["node"]["id"],
            r["node"].get("name") or "",
            r["trigger"]["text"],
            (r.get("outcome") or "").splitlines()[0][:60] if r.get("outcome") else "",
        )
        for r in runs
    ]
    empty = (
        "no runs" if args.all else "no runs in flight (remora ps --all: recent ones)"
    )
    output.emit_table(
        ("RUN", "STATUS", "STARTED", "ENDED", "NODE", "NAME", "TRIGGER", "OUTCOME"),
        rows,
        empty,
    )
    return 0
