"""``remora blame FILE``: which lines came from which agent's accepted proposal."""

from __future__ import annotations

import logging
from pathlib import Path

from remora_cli import output

log = logging.getLogger(__name__)

NAME = "blame"
HELP = "show which line ranges of FILE agents wrote (accepted proposals)"


def add_arguments(parser) -> None:
    """``FILE``."""
    parser.add_argument("file", metavar="FILE")


async def run(args, backend) -> int:
    """Print ranges as 1-based line numbers."""
    given = Path(args.file)
    # A path from here when it exists here, else a project path.
    path = str(given.resolve()) if given.exists() else args.file
    found = await backend.call("remora.attribution", {"path": path})
    if args.json:
        output.emit_json(found)
        return 0
    rows = [
        (
            f"{b['range']['start']['line'] + 1}-{b['range']['end']['line']}",
            b["agent_id"],
            b["proposal_id"],
            output.when(b["accepted_at"]),
        )
        for b in found
    ]
    output.emit_table(
        ("LINES", "AGENT", "PROPOSAL", "ACCEPTED"), rows, "no agent lines"
    )
    return 0
