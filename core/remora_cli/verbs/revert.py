"""``remora revert P|G``: propose undoing an accepted proposal or a graph run.

A ``gr_`` id goes to ``remora.graph.revert``, anything else to
``remora.proposal.revert``. Nothing is written: the output names the revert
proposals to review (``remora diff``) and accept (``remora accept`` with
every id, accepted together), and each part refused because its lines were
edited after the accept (``refused FILE:FIRST-LAST: why``); exit 1 when
nothing could be proposed.
"""

from __future__ import annotations

import logging

from remora_cli import output

log = logging.getLogger(__name__)

NAME = "revert"
HELP = "propose undoing an accepted proposal P or a graph run G (review, accept)"


def add_arguments(parser) -> None:
    """``P|G``."""
    parser.add_argument(
        "target", metavar="P|G", help="an accepted proposal, or a graph run (gr_…)"
    )


async def run(args, backend) -> int:
    """Ask for the revert; print its proposals and refusals."""
    if args.target.startswith("gr_"):
        found = await backend.call("remora.graph.revert", {"graph_run_id": args.target})
    else:
        found = await backend.call(
            "remora.proposal.revert", {"proposal_id": args.target}
        )
    if args.json:
        output.emit_json(found)
        return 0 if found["proposal_ids"] else 1
    for proposal_id in found["proposal_ids"]:
        output.say(f"proposed {proposal_id}: review with remora diff {proposal_id}")
    for part in found["refused"]:
        lines = f"{part['first_line']}-{part['last_line']}"
        output.tell(f"refused {part['path']}:{lines}: {part['reason']}")
    ids = found["proposal_ids"]
    if len(ids) > 1:
        output.say(f"accept them together: remora accept {' '.join(ids)}")
    elif ids:
        output.say(f"accept it: remora accept {ids[0]}")
    return 0 if ids else 1
