"""``remora retry R``: run again a run a restart interrupted.

The same trigger, the same message (``remora.agent.retry``); prints the new
run's id (follow it with ``remora logs --run``). A run that ended otherwise
is refused, saying why.
"""

from __future__ import annotations

import logging

from remora_cli import output

log = logging.getLogger(__name__)

NAME = "retry"
HELP = "run again a run a restart interrupted (same trigger, same message)"


def add_arguments(parser) -> None:
    """``R``."""
    parser.add_argument("run", metavar="R", help="an interrupted run's id")


async def run(args, backend) -> int:
    """Retry; print the new run's id."""
    found = await backend.call("remora.agent.retry", {"run_id": args.run})
    output.emit_json(found) if args.json else output.say(found["run_id"])
    return 0
