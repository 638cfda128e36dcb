"""``remora accept P [P…] [--graph-run G]``: apply proposals (through the
editor when it holds the file open, else written atomically on disk) and
record them.

One id goes to ``remora.proposal.accept``; several — or a graph run's pending
proposals (``remora.graph.status`` names them per node), which may be given
with ids — go to ``remora.proposals.accept``, one edit over every file and one
result per proposal. The output is one line per proposal (``accepted P:
applied`` or ``not accepted P: why``), the exit code 1 when any was not
applied. A change set is one id: accepted as a whole (atomically: nothing is
applied when one of its files changed), or in part with ``--member I``
(repeatable; members count from 1, as every text and editor shows them)
where its members' dependencies allow.
"""

from __future__ import annotations

import logging

from remora_cli import output

log = logging.getLogger(__name__)

NAME = "accept"
HELP = "accept proposals (applies them): ids, or a graph run's pending ones"
USAGE_ERROR = 2


def add_arguments(parser) -> None:
    """``P…`` and ``--graph-run G``."""
    parser.add_argument(
        "proposals", metavar="P", nargs="*", help="proposal ids or unique prefixes"
    )
    parser.add_argument(
        "--member",
        metavar="I",
        type=int,
        action="append",
        default=None,
        help="accept only member I of a change set (from 1; repeatable)",
    )
    parser.add_argument(
        "--graph-run",
        metavar="G",
        default=None,
        help="also accept every pending proposal of graph run G",
    )


async def run(args, backend) -> int:
    """Accept; exit 1 when an edit was not applied."""
    if not args.proposals and args.graph_run is None:
        output.tell("remora: accept needs a proposal id or --graph-run G")
        return USAGE_ERROR
    if args.member is not None and min(args.member) < 1:
        output.tell("remora: members count from 1 (--member 1 is the first)")
        return USAGE_ERROR
    if args.graph_run is None and len(args.proposals) == 1:
        return _one(args, await _accept_one(backend, args.proposals[0], args.member))
    if args.member is not None:
        output.tell("remora: --member needs exactly one change set id")
        return USAGE_ERROR
    ids = list(args.proposals)
    if args.graph_run is not None:
        found = await _pending_of_graph_run(backend, args.graph_run)
        ids += [i for i in found if i not in ids]
        if not ids:
            output.say(f"graph run {args.graph_run} has no pending proposals")
            return 0
    results = await backend.call("remora.proposals.accept", {"proposal_ids": ids})
    if args.json:
        output.emit_json(results)
    else:
        for result in results:
            output.say(_line(result["proposal_id"], result))
    return 0 if all(r.get("applied") for r in results) else 1


async def _accept_one(backend, proposal_id: str, members: list[int] | None) -> dict:
    argument: dict = {"proposal_id": proposal_id}
    if members is not None:
        argument["members"] = [i - 1 for i in members]  # the command's: from 0
    return await backend.call("remora.proposal.accept", argument)


def _one(args, result: dict) -> int:
    """One proposal's answer (a failure on stderr, as for every verb)."""
    if args.json:
        output.emit_json(result)
    elif result.get("applied"):
        output.say(_line(args.proposals[0], result))
    else:
        output.tell(f"remora: not applied: {result.get('reason')}")
    return 0 if result.get("applied") else 1


def _line(proposal_id: str, result: dict) -> str:
    if result.get("applied"):
        return f"accepted {proposal_id}: applied"
    return f"not accepted {proposal_id}: {result.get('reason')}"


async def _pending_of_graph_run(backend, graph_run_id: str) -> list[str]:
    """The graph run's proposals still pending, in the order of its nodes."""
    status = await backend.call("remora.graph.status", {"graph_run_id": graph_run_id})
    made = list(status.get("proposals", {}).values())
    if not made:
        return []
    pending = await backend.call("remora.proposals.list", {"status": "pending"})
    waiting = {p["id"] for p in pending}
    return [p for p in made if p in waiting]
