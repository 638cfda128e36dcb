"""``remora nodes [QUERY]``: the project's nodes, best matches of QUERY first;
``remora nodes NODE`` (an id, ``rm_…`` prefix or ``path::name``): that node —
where it is, what its runs cost, whether it is muted, and its subscriptions.
"""

from __future__ import annotations

import logging

from remora_cli import output
from remora_cli.verbs.subscriptions import print_subscriptions
from remora_cli.verbs.usage import duration, tokens

log = logging.getLogger(__name__)

NAME = "nodes"
HELP = "list nodes (every node, or the best matches of QUERY)"


def add_arguments(parser) -> None:
    """``QUERY`` and ``--limit``."""
    parser.add_argument("query", nargs="?", default="", metavar="QUERY")
    parser.add_argument("--limit", type=int, default=200)


def names_a_node(query: str) -> bool:
    """Whether ``query`` is a node reference rather than search words."""
    return query.startswith("rm_") or "::" in query


async def run(args, backend) -> int:
    """Print the nodes (or the one node QUERY names)."""
    if names_a_node(args.query):
        return await one_node(args, backend)
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


async def one_node(args, backend) -> int:
    """Print one node's card: where, cost, muted, subscriptions."""
    card = await backend.call("remora.node.get", {"node_id": args.query})
    if args.json:
        output.emit_json(card)
        return 0
    spent = card["usage"]
    output.say(f"{card['id']}  {card['kind']}  {card['qualified_name']}")
    output.say(
        f"  {card['file_path']}:{card['line'] + 1}  agent {card['agent_status']}"
    )
    output.say(
        f"  {spent['runs']} runs, {tokens(spent['tokens'])} tokens, "
        f"{duration(spent['seconds'])}"
    )
    output.say()
    print_subscriptions(
        {
            "node_id": card["id"],
            "muted": card["muted"],
            "subscriptions": card["subscriptions"],
        }
    )
    return 0
