"""``remora mute NODE [--off]``: nothing wakes the node's agent but a
person's message (``--off``: its subscriptions wake it again).
"""

from __future__ import annotations

import logging

from remora_cli import output

log = logging.getLogger(__name__)

NAME = "mute"
HELP = "mute a node's agent (--off: unmute it)"


def add_arguments(parser) -> None:
    """``NODE`` and ``--off``."""
    parser.add_argument("node", metavar="NODE")
    parser.add_argument("--off", action="store_true", help="unmute")


async def run(args, backend) -> int:
    """Mute or unmute; say what holds now."""
    name = "remora.node.unmute" if args.off else "remora.node.mute"
    found = await backend.call(name, {"node_id": args.node})
    if args.json:
        output.emit_json(found)
        return 0
    state = "muted" if found["muted"] else "not muted"
    again = "" if found["changed"] else " (it already was)"
    output.say(f"{found['node_id']} is {state}{again}")
    return 0
