"""``remora subscriptions NODE [--add PATTERN | --remove SUB]``: what wakes a
node's agent — its subscriptions and the runs each fired lately — and a
person's changes to them. ``remora mute NODE`` stops them all.
"""

from __future__ import annotations

import json
import logging

from remora_cli import output

log = logging.getLogger(__name__)

NAME = "subscriptions"
HELP = "list, add or remove a node's subscriptions (what wakes its agent)"


def add_arguments(parser) -> None:
    """``NODE``, ``--add PATTERN`` (JSON), ``--remove SUB``."""
    parser.add_argument("node", metavar="NODE")
    change = parser.add_mutually_exclusive_group()
    change.add_argument(
        "--add",
        metavar="PATTERN",
        help='a JSON pattern, e.g. \'{"event_types": ["content_changed"], '
        '"path_glob": "src/*.py"}\'',
    )
    change.add_argument("--remove", metavar="SUB", help="a subscription id")


async def run(args, backend) -> int:
    """Change the subscriptions if asked, then list them."""
    if args.add is not None:
        try:
            pattern = json.loads(args.add)
        except json.JSONDecodeError as error:
            output.tell(f"--add wants a JSON object: {error}")
            return 2
        added = await backend.call(
            "remora.subscriptions.add", {"node_id": args.node, "pattern": pattern}
        )
        output.tell(f"added {added['subscription_id']}")
    elif args.remove is not None:
        await backend.call(
            "remora.subscriptions.remove",
            {"node_id": args.node, "subscription_id": args.remove},
        )
        output.tell(f"removed {args.remove}")
    found = await backend.call("remora.subscriptions.list", {"node_id": args.node})
    if args.json:
        output.emit_json(found)
        return 0
    print_subscriptions(found)
    return 0


def print_subscriptions(found: dict) -> None:
    """A node's subscriptions as a table, and whether it is muted."""
    if found["muted"]:
        output.say(f"{found['node_id']} is muted: only a person's message wakes it")
    rows = [
        (
            s["id"],
            "default" if s["default"] else "own",
            s["text"],
            str(s["fired"]),
            output.when(s["matched"][0]["at"]) if s["matched"] else "",
        )
        for s in found["subscriptions"]
    ]
    output.emit_table(
        ("SUBSCRIPTION", "KIND", "WAKES FOR", "FIRED", "LAST"), rows, "none"
    )
