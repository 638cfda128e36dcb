"""``remora nodes [QUERY]``: the project's nodes, best matches of QUERY first."""

from __future__ import annotations

import logging

from remora_cli import output

log = logging.getLogger(__name__)

NAME = "nodes"
HELP = "list nodes (every node, or the best matches of QUERY)"


def add_arguments(parser) -> None:
    """``QUERY`` and ``--limit``."""
    parser.add_argument("query", nargs="?", default="", metavar="QUERY")
    parser.add_argument("--limit", type=int, default=200)


async def run(args, backend) -> int:
    """Print the nodes."""
    found = await backend.call(
        "remora.nodes.search", {"query": args.query, "limit": args.limit}
    )
    if args.json:
        output.emit_json(found)
        return 0
    rows = [
        (
            n["id"],
            n["kind"],
            n["agent_status"],
            f"{n['file_path']}:{n['line'] + 1}",
            n["qualified_name"],
        )
        for n in found
    ]
    output.emit_table(("ID", "KIND", "AGENT", "WHERE", "NAME"), rows, "no nodes found")
    return 0
