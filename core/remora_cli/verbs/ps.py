"""``remora ps``: agent runs in flight (``--all``: recent ones too), each with
what woke it and what it cost so far.
"""

from __future__ import annotations

import logging

from remora_core.swarm.run_list import RunStatus

from remora_cli import output
from remora_cli.verbs.usage import duration, tokens

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
            _trigger(r["trigger"]),
            _cost(r.get("usage")),
            _outcome(r),
        )
        for r in runs
    ]
    empty = (
        "no runs" if args.all else "no runs in flight (remora ps --all: recent ones)"
    )
    output.emit_table(
        (
            "RUN",
            "STATUS",
            "STARTED",
            "ENDED",
            "NODE",
            "NAME",
            "TRIGGER",
            "TOKENS/TIME",
            "OUTCOME",
        ),
        rows,
        empty,
    )
    return 0


def _trigger(trigger: dict) -> str:
    """What woke the run, and by which subscription."""
    fired = trigger.get("subscription")
    return f"{trigger['text']} [{fired['text']}]" if fired else trigger["text"]


def _cost(usage: dict | None) -> str:
    """A run's tokens and wall time (nothing for a queued run)."""
    if not usage:
        return ""
    return f"{tokens(usage['tokens'])} / {duration(usage['seconds'])}"


def _outcome(run: dict) -> str:
    """The outcome's first line; a budget's stop says so first."""
    text = (run.get("outcome") or "").splitlines()[0][:60] if run.get("outcome") else ""
    return f"limit reached: {text}" if run.get("reason") == "limit_reached" else text
