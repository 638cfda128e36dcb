"""``remora accept P``: apply a proposal (through the editor when it holds the
file open, else written atomically on disk) and record it.
"""

from __future__ import annotations

import logging

from remora_cli import output

log = logging.getLogger(__name__)

NAME = "accept"
HELP = "accept a proposal (applies it)"


def add_arguments(parser) -> None:
    """``P``."""
    parser.add_argument("proposal", metavar="P", help="proposal id or unique prefix")


async def run(args, backend) -> int:
    """Accept; exit 1 when the edit was not applied."""
    result = await backend.call(
        "remora.proposal.accept", {"proposal_id": args.proposal}
    )
    if args.json:
        output.emit_json(result)
    elif result.get("applied"):
        output.say(f"accepted {args.proposal}: applied")
    else:
        output.tell(f"remora: not applied: {result.get('reason')}")
    return 0 if result.get("applied") else 1
