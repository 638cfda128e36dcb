"""``remora reject P [--feedback TEXT]``: reject a proposal; the agent tries
again with the feedback.
"""

from __future__ import annotations

import logging

from remora_lsp.command_line import output

log = logging.getLogger(__name__)

NAME = "reject"
HELP = "reject a proposal (the agent retries with --feedback)"


def add_arguments(parser) -> None:
    """``P`` and ``--feedback``."""
    parser.add_argument("proposal", metavar="P", help="proposal id or unique prefix")
    parser.add_argument("--feedback", default="", metavar="TEXT")


async def run(args, backend) -> int:
    """Reject; print the run of the agent's retry."""
    result = await backend.call(
        "remora.proposal.reject",
        {"proposal_id": args.proposal, "feedback": args.feedback},
    )
    if args.json:
        output.emit_json(result)
    else:
        retry = (
            f"; the agent retries as {result['run_id']}" if result.get("run_id") else ""
        )
        output.say(f"rejected {args.proposal}{retry}")
    return 0
