"""``remora reject P [--member I…] [--feedback TEXT]``: reject a proposal;
with feedback the agent tries again with it.

``--member I`` (repeatable; from 1, as every text shows members) rejects only
those members of a change set: the rest stays pending, to accept as one
later. Rejecting a member that another one needs is refused, naming it.

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
USAGE_ERROR = 2
HELP = "reject a proposal (the agent retries with the feedback given)"
PROMPT = "What should the agent do differently? (empty: reject without a retry)\n> "


def add_arguments(parser) -> None:
    """``P`` and ``--feedback``."""
    parser.add_argument("proposal", metavar="P", help="proposal id or unique prefix")
    parser.add_argument(
        "--member",
        metavar="I",
        type=int,
        action="append",
        default=None,
        help="reject only member I of a change set (from 1; repeatable)",
    )
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
    argument: dict = {
        "proposal_id": args.proposal,
        "feedback": feedback,
        "retry": bool(feedback),
    }
    members = getattr(args, "member", None)
    if members is not None:
        if min(members) < 1:
            output.tell("remora: members count from 1 (--member 1 is the first)")
            return USAGE_ERROR
        argument["members"] = [i - 1 for i in members]  # the command's: from 0
    result = await backend.call("remora.proposal.reject", argument)
    what = args.proposal
    if members is not None:
        said = ", ".join(str(i) for i in sorted(set(members)))
        what = f"member{'s' if len(set(members)) > 1 else ''} {said} of {what}"
    if args.json:
        output.emit_json(result)
    elif result.get("run_id"):
        output.say(f"rejected {what}; the agent retries as {result['run_id']}")
    else:
        output.say(f"rejected {what}; no feedback, so the agent does not try again")
    return 0
