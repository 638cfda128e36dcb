"""``remora trailers``: ``Remora-Agent`` commit trailers for uncommitted work.

For a ``prepare-commit-msg`` hook: ``remora trailers >> "$1"``.
"""

from __future__ import annotations

import logging

from remora_cli import output

log = logging.getLogger(__name__)

NAME = "trailers"
HELP = "print Remora-Agent commit trailers for accepted, uncommitted proposals"


def add_arguments(parser) -> None:
    """No options."""


async def run(args, backend) -> int:
    """Print one trailer a line."""
    found = await backend.call("remora.trailers", {})
    if args.json:
        output.emit_json(found["trailers"])
        return 0
    for line in found["trailers"]:
        output.say(line)
    return 0
