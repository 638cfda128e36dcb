"""``remora proposals [--status S]``: proposals, newest first.

A change set is one row (``Change set: add currency (4 definitions in 3
files, 1 new file)``) and a new file one (``create tests/test_x.py (+24)``);
``--json`` gives their members.
"""

from __future__ import annotations

import logging

from remora_core.model import ProposalStatus

from remora_cli import output

log = logging.getLogger(__name__)

NAME = "proposals"
HELP = "list proposals (default: pending ones; --status all for every one)"
STATUSES = (*(status.value for status in ProposalStatus), "all")


def add_arguments(parser) -> None:
    """``--status``."""
    parser.add_argument(
        "--status", choices=STATUSES, default=ProposalStatus.PENDING.value
    )


def changed_lines(diff: str) -> str:
    """``+a −r`` of a unified diff."""
    added = sum(
        1 for x in diff.splitlines() if x.startswith("+") and not x.startswith("+++")
    )
    removed = sum(
        1 for x in diff.splitlines() if x.startswith("-") and not x.startswith("---")
    )
    return f"+{added} −{removed}"


async def run(args, backend) -> int:
    """Print the proposals."""
    status = None if args.status == "all" else args.status
    found = await backend.call("remora.proposals.list", {"status": status})
    if args.json:
        output.emit_json(found)
        return 0
    rows = [
        (
            p["id"],
            p["status"],
            output.when(p["created_at"]),
            changed_lines(p["diff"]),
            _what(p),
            (p.get("reasoning") or "").strip().splitlines()[0]
            if p.get("reasoning") and p.get("kind") != "change_set"
            else "",
        )
        for p in found
    ]
    output.emit_table(
        ("PROPOSAL", "STATUS", "MADE", "LINES", "WHAT", "WHY"),
        rows,
        f"no {status or ''} proposals".replace("  ", " "),
    )
    return 0


def _what(proposal: dict) -> str:
    """The node a proposal changes, or what a set or new file is."""
    if proposal.get("kind") in ("change_set", "new_file") and proposal.get("title"):
        return proposal["title"]
    return f"{proposal['file_path']}::{proposal.get('node') or proposal['node_id']}"
