"""``remora diff P``: a proposal's unified diff."""

from __future__ import annotations

import logging

from remora_core.model import ProposalStatus

from remora_cli import output

log = logging.getLogger(__name__)

NAME = "diff"
HELP = "show a proposal's diff"


def add_arguments(parser) -> None:
    """``P``."""
    parser.add_argument("proposal", metavar="P", help="proposal id or unique prefix")


async def run(args, backend) -> int:
    """Print the diff (``--json``: diff, sources and status)."""
    found = await backend.call("remora.proposal.diff", {"proposal_id": args.proposal})
    if args.json:
        output.emit_json(found)
        return 0
    output.say(found["diff"].removesuffix("\n"))
    if found["status"] != ProposalStatus.PENDING:
        output.tell(f"(this proposal is {found['status']})")
    return 0
