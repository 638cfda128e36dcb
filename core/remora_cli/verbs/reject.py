"""``remora reject P [--feedback TEXT]``: reject a proposal; with feedback the
agent tries again with it.

Without ``--feedback``, a person at a terminal is asked for it (on stderr,
one line; the prompt comes before the project is opened). No feedback — an
empty answer, Ctrl-D, or no terminal (a script, a pipe) — rejects the proposal
*without* a retry: an agent told nothing would only propose much the same
again. The output says which happened; Ctrl-C at the prompt rejects nothing.
"""

from __future__ import annotations

import logging
import sys

from remora_cli import output

log = logging.getLogger(__name__)

NAME = "reject"
HELP = "reject a proposal (the agent retries with the feedback given)"
PROMPT = "What should the agent do differently? (empty: reject without a retry)\n> "


def add_arguments(parser) -> None:
    """``P`` and ``--feedback``."""
    parser.add_argument("proposal", metavar="P", help="proposal id or unique prefix")
    parser.add_argument(
        "--feedback",
        default=None,
        metavar="TEXT",
        help="what the agent should do differently (asked when on a terminal)",
    )


def prepare(args) -> None:
    """Ask for feedback at a terminal when none was given."""
    if args.feedback is not None:
        return
    if not sys.stdin.isatty():
        args.feedback = ""
        return
    output.ask(PROMPT)
    args.feedback = sys.stdin.readline().strip()  # "" at end of input


async def run(args, backend) -> int:
    """Reject; print the run of the agent's retry, or that there is none."""
    feedback = (args.feedback or "").strip()
    result = await backend.call(
        "remora.proposal.reject",
        {"proposal_id": args.proposal, "feedback": feedback, "retry": bool(feedback)},
    )
    if args.json:
        output.emit_json(result)
    elif result.get("run_id"):
        output.say(f"rejected {args.proposal}; the agent retries as {result['run_id']}")
    else:
        output.say(
            f"rejected {args.proposal}; no feedback, so the agent does not try again"
        )
    return 0
