"""``remora instructions NODE [TEXT] [--clear]``: a person's standing
instructions for a node's agent — shown (no TEXT), set (TEXT) or removed
(``--clear``); in every later prompt of its agent (``remora.node.instructions.set``).
"""

from __future__ import annotations

import logging

from remora_cli import output

log = logging.getLogger(__name__)

NAME = "instructions"
HELP = "show or set a node agent's standing instructions (--clear: remove them)"


def add_arguments(parser) -> None:
    """``NODE``, the optional ``TEXT`` and ``--clear``."""
    parser.add_argument("node", metavar="NODE")
    parser.add_argument("text", metavar="TEXT", nargs="?", help="the instructions")
    parser.add_argument("--clear", action="store_true", help="remove them")


async def run(args, backend) -> int:
    """Show the node's instructions, or set them and say what holds now."""
    if args.text is None and not args.clear:
        card = await backend.call("remora.node.get", {"node_id": args.node})
        found = {"node_id": card["id"], "instructions": card.get("instructions")}
    else:
        text = "" if args.clear else args.text
        found = await backend.call(
            "remora.node.instructions.set", {"node_id": args.node, "text": text}
        )
    if args.json:
        output.emit_json(found)
        return 0
    text = found["instructions"]
    output.say(text if text else f"{found['node_id']} has no standing instructions")
    return 0
