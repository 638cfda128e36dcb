"""``remora proposals [--status S]``: proposals, newest first."""

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
            f"{p['file_path']}::{p.get('node') or p['node_id']}",
            (p.get("reasoning") or "").strip().splitlines()[0]
            if p.get("reasoning")
            else "",
        )
        for p in found
    ]
    output.emit_table(
        ("PROPOSAL", "STATUS", "MADE", "LINES", "NODE", "WHY"),
        rows,
        f"no {status or ''} proposals".replace("  ", " "),
    )
    return 0
