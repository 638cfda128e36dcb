"""``remora trust [--yes | --no | --forget]``: whether the project's
repository is trusted, who decided, what it wants that needs trust and where
the API key may go (no option); remember the person's answer (``--yes``,
``--no``); or forget every answer about the project, its trust and every key
host (``--forget``: untrusted until answered again).

The command line never asks about trust (DESIGN §12): this verb is how a
person without an editor answers. Through an editor's server the answer
restarts the project with it; an editor that manages trust itself (VS Code's
workspace trust) refuses ``--yes`` / ``--no`` with its reason.
"""

from __future__ import annotations

import logging

from remora_cli import output

log = logging.getLogger(__name__)

NAME = "trust"
HELP = "show whether the repository is trusted (--yes/--no: answer; --forget)"

WHO = {
    "client": "your editor's workspace trust",
    "person": "your remembered answer",
    "session": "your answer in this editor session",
    "undecided": "nobody has answered: untrusted",
}


def add_arguments(parser) -> None:
    """``--yes``, ``--no`` or ``--forget`` (at most one)."""
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--yes", action="store_true", help="trust the repository")
    choice.add_argument("--no", action="store_true", help="do not trust it")
    choice.add_argument(
        "--forget",
        action="store_true",
        help="forget every answer about it (trust and key hosts)",
    )


async def run(args, backend) -> int:
    """Answer, forget or only read; then say what holds now."""
    if args.yes or args.no:
        rows = await backend.call("remora.trust.set", {"trusted": bool(args.yes)})
    elif args.forget:
        rows = await backend.call("remora.trust.revoke", {})
    else:
        rows = await backend.call("remora.trust.get", {})
    if args.json:
        output.emit_json(rows)
        return 0
    for row in rows:
        state = "trusted" if row["trusted"] else "not trusted"
        output.say(f"{row['root']}: {state} ({WHO.get(row['decided_by'], '?')})")
        if row["wants"]:
            output.say(f"  it wants to {row['wants']}")
        for host, allowed in sorted(row["hosts"].items()):
            answer = "may receive" if allowed else "may not receive"
            output.say(f"  {host} {answer} your API key")
    return 0
