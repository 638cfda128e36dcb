"""``remora ask NODE MESSAGE [--wait]``: send a node's agent a request.

Without ``--wait`` it prints the run id and returns (the server runs it; follow
it with ``remora logs -f --run R``). With ``--wait`` — and always when no server
runs, since the run lives in this process — it shows each step on stderr
(unless ``--json``) and ends with the agent's answer and the proposals it made.
"""

from __future__ import annotations

import asyncio
import logging

from remora_core.model import RunStatus
from remora_core.store.runs import RUN_ENDS

from remora_cli import output

log = logging.getLogger(__name__)

NAME = "ask"
HELP = "ask a node's agent (NODE: id, unique prefix or path::qualified.name)"
STEPS = {
    "agent_started": "started",
    "model_request": "thinking…",
    "tool_called": "calling {tool}",
    "rewrite_proposed": "proposed {proposal_id}",
    "agent_blocked": "waiting for an answer: {question}",
}


def add_arguments(parser) -> None:
    """``NODE MESSAGE``, ``--wait`` and ``--timeout``."""
    parser.add_argument("node", metavar="NODE")
    parser.add_argument("message", metavar="MESSAGE")
    parser.add_argument("--wait", "-w", action="store_true", help="wait for the answer")
    parser.add_argument("--timeout", type=float, default=600.0, metavar="S")


async def run(args, backend) -> int:
    """Start the run; wait for it when asked (or when it runs here)."""
    since = (await backend.call("remora.events.last_seq", {}))["seq"]
    started = await backend.call(
        "remora.agent.chat", {"node_id": args.node, "message": args.message}
    )
    run_id = started["run_id"]
    if not args.wait and backend.via == "server":
        if args.json:
            output.emit_json(started)
        else:
            output.say(run_id)
        return 0
    if not args.wait and not args.json:
        output.tell("remora: no server runs this project: waiting for the run here")
    try:
        outcome = await asyncio.wait_for(
            _follow(backend, since, run_id, args.json), args.timeout
        )
    except TimeoutError:
        await backend.call("remora.agent.cancel", {"run_id": run_id})
        output.tell(f"remora: {run_id} took over {args.timeout:g} s: cancelled")
        return 1
    _print(outcome, args.json)
    return 0 if outcome["outcome"] == RunStatus.COMPLETED else 1


async def _follow(backend, since: int, run_id: str, quiet: bool) -> dict:
    proposals: list[dict] = []
    async for event in backend.follow(since):
        if event.get("run_id") != run_id:
            continue
        kind = event["type"]
        if kind == "rewrite_proposed":
            proposals.append(
                {"proposal_id": event["proposal_id"], "diff": event.get("diff", "")}
            )
        if not quiet and kind in STEPS:
            output.tell(f"{run_id}: " + STEPS[kind].format_map(_Missing(event)))
        if kind in RUN_ENDS:
            return {
                "run_id": run_id,
                "outcome": RUN_ENDS[kind],
                "answer": event.get("result") or "",
                "error": event.get("error"),
                "proposals": proposals,
            }
    raise RuntimeError("the event stream ended")


class _Missing(dict):
    def __missing__(self, key: str) -> str:
        return "?"


def _print(outcome: dict, as_json: bool) -> None:
    if as_json:
        output.emit_json(outcome)
        return
    if outcome["outcome"] != RunStatus.COMPLETED:
        output.tell(
            f"remora: the run {outcome['outcome']}: {outcome.get('error') or ''}"
        )
    if outcome["answer"]:
        output.say(outcome["answer"])
    for proposal in outcome["proposals"]:
        output.say(
            f"\nproposal {proposal['proposal_id']} (remora accept / reject / diff):"
        )
        output.say(proposal["diff"].rstrip("\n"))
