"""``remora checkpoint create [LABEL] | list | restore C [--files]``: agents'
state; ``--files`` also proposes the files back as they were (revert
proposals to review and accept).
"""

from __future__ import annotations

import logging

from remora_cli import output

log = logging.getLogger(__name__)

NAME = "checkpoint"
HELP = "take, list or restore checkpoints of the agents' state"


def add_arguments(parser) -> None:
    """``create [LABEL]``, ``list``, ``restore C``."""
    parser.add_argument("action", choices=["create", "list", "restore"])
    parser.add_argument("target", nargs="?", metavar="LABEL|C")
    parser.add_argument(
        "--files",
        action="store_true",
        help="restore: also propose the files back to their content then",
    )


async def run(args, backend) -> int:
    """Do the action; print what happened."""
    if args.action == "create":
        found = await backend.call("remora.checkpoint.create", {"label": args.target})
        output.emit_json(found) if args.json else output.say(found["checkpoint_id"])
        return 0
    if args.action == "restore":
        if not args.target:
            output.tell("remora checkpoint restore needs a checkpoint id")
            return 2
        arguments = {"checkpoint_id": args.target}
        if args.files:
            arguments["files"] = True
        found = await backend.call("remora.checkpoint.restore", arguments)
        if args.json:
            output.emit_json(found)
            return 0
        output.say(f"restored {args.target}")
        for path in found["files_differing"]:
            output.say(f"differs from the checkpoint: {path}")
        for proposal_id in found.get("proposal_ids", []):
            output.say(f"proposed {proposal_id}: review with remora diff {proposal_id}")
        for skipped in found.get("not_restored", []):
            output.tell(f"not restored {skipped['path']}: {skipped['reason']}")
        return 0
    listed = await backend.call("remora.checkpoint.list", {})
    if args.json:
        output.emit_json(listed)
        return 0
    rows = [
        (
            c["checkpoint_id"],
            output.when(c["created_at"]),
            c["git_head"] or "",
            c["label"],
        )
        for c in listed
    ]
    output.emit_table(("CHECKPOINT", "CREATED", "GIT HEAD", "LABEL"), rows, "none")
    return 0
