"""``remora logs``: the event log; ``-f`` follows it live until Ctrl-C."""

from __future__ import annotations

import logging

from remora_cli import output

log = logging.getLogger(__name__)

NAME = "logs"
HELP = "show events (-f: follow live until Ctrl-C)"


def add_arguments(parser) -> None:
    """Filters and ``-f``."""
    parser.add_argument("-f", "--follow", action="store_true")
    parser.add_argument("--node", metavar="N", help="events concerning this node")
    parser.add_argument("--run", metavar="R", help="events of this run")
    parser.add_argument(
        "--type", metavar="T", help="an event type (agent_* for a prefix)"
    )
    parser.add_argument(
        "--since", metavar="SEQ", type=int, help="events after this seq"
    )
    parser.add_argument("-n", "--limit", type=int, default=50)


def _show(event: dict, as_json: bool) -> None:
    if as_json:
        output.emit_json_line(event)
    else:
        output.say(output.event_line(event))


async def run(args, backend) -> int:
    """Print matching events (then follow)."""
    node_id = None
    if args.node is not None:
        node_id = (await backend.call("remora.node.get", {"node_id": args.node}))["id"]
    start = None
    if args.follow and args.since is None:
        # Before the list: an event stored between the list and the follow
        # (a run that starts meanwhile) is then followed, never skipped.
        start = (await backend.call("remora.events.last_seq", {}))["seq"]
    events = await backend.call(
        "remora.events.list",
        {
            "since_seq": args.since,
            "node_id": node_id,
            "run_id": args.run,
            "type": args.type,
            "limit": args.limit,
        },
    )
    for event in events:
        _show(event, args.json)
    if not args.follow:
        return 0
    last = events[-1]["seq"] if events else args.since
    if last is None:
        last = start
    async for event in backend.follow(last):
        if _wanted(event, node_id, args.run, args.type):
            _show(event, args.json)
    return 0


def _wanted(
    event: dict, node_id: str | None, run_id: str | None, kind: str | None
) -> bool:
    if run_id is not None and event.get("run_id") != run_id:
        return False
    if kind is not None:
        prefix = kind[:-1] if kind.endswith("*") else None
        if event.get("type") != kind and not (
            prefix and event["type"].startswith(prefix)
        ):
            return False
    if node_id is not None:
        mentioned = {
            event.get(k) for k in ("agent_id", "to_agent", "from_agent", "node_id")
        }
        mentioned |= set(event.get("node_ids") or [])
        return node_id in mentioned
    return True
