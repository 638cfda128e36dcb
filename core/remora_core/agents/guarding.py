"""A turn's intent guard: chosen before the model runs, applied to each rewrite.

:func:`turn_guard` picks the guard of a turn: the bundle's own (``guard:`` in
``bundle.yaml``) or the one its triggers' words imply (``intent.py``): a
person's request, another agent's message, a rejection's feedback. A turn run
because a proposal was rejected — by a person or by the project's tests —
keeps the guard of that proposal when the feedback says nothing about what may
change (test output is never read as a request).

:func:`check_rewrite` applies it to a rewrite. The first violation is refused
with the guard's message (the model gets one more attempt); the second ends
the turn (:func:`refused_twice`) with a message saying what was asked and what
changed, and no proposal is made (issue 14: a proposal that breaks what the
request promised never reaches the person). On the embedded model a guarded
turn is written under a grammar that keeps the code (``agents/guided.py``),
so violations there are rare.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from remora_core.review.guards import GUARD_KINDS, Guard, GuardViolation, check_guard
from remora_core.review.intent import guard_for, read_intent
from remora_core.swarm.turns import TurnFailed

if TYPE_CHECKING:
    from remora_core.agents.bundles import Bundle
    from remora_core.agents.context import AgentContext
    from remora_core.events.store import StoredEvent
    from remora_core.review.checks import Check
    from remora_core.review.proposals import ProposalStore

log = logging.getLogger(__name__)

MAX_VIOLATIONS = 2
"""Guard violations that end a turn: the first is refused with its reason."""


def guard_from_check(name: str) -> Guard | None:
    """The guard a proposal passed, from its check's name (``docstring-only``…)."""
    if not name.endswith("-only"):
        return None
    kinds = {part.replace("-", "_") for part in name.removesuffix("-only").split("+")}
    if not kinds or not kinds <= set(GUARD_KINDS):
        return None
    return Guard(frozenset(kinds))


def _inherited(proposals: ProposalStore, proposal_id: object) -> Guard | None:
    rejected = proposals.get(str(proposal_id))
    for check in rejected.checks if rejected else ():
        guard = guard_from_check(check.name)
        if guard is not None:
            return guard
    return None


def turn_guard(
    bundle: Bundle, events: list[StoredEvent], proposals: ProposalStore
) -> Guard | None:
    """The guard of a turn of ``bundle``'s agent triggered by ``events``."""
    texts: list[str] = []
    inherited: Guard | None = None
    for stored in events:
        fields = stored.event.__dict__
        kind = stored.event.type
        if kind in ("human_chat", "agent_message"):
            texts.append(str(fields["message"]))
        elif kind == "rewrite_rejected":
            inherited = inherited or _inherited(proposals, fields["proposal_id"])
            if fields.get("by", "person") == "person":
                texts.append(str(fields.get("feedback") or ""))
    if bundle.guard:
        renames = tuple(p for t in texts for p in read_intent(t).renames)
        return Guard(
            frozenset(bundle.guard),
            renames,
            f"the {bundle.name} bundle: {bundle.description}".rstrip(": "),
        )
    return guard_for(texts, inherited)


def _indent(text: bytes, start: int) -> str:
    """The whitespace before ``start`` on its line (the node's indentation)."""
    line_start = text.rfind(b"\n", 0, start) + 1
    prefix = text[line_start:start].decode("utf-8", "replace")
    return prefix if not prefix.strip() else ""


def check_rewrite(
    context: AgentContext, text: bytes, start: int, old: str, new: str
) -> Check | None:
    """The guard's check of a rewrite of ``old`` into ``new`` (None: no guard).

    :class:`GuardViolation` refuses the first violation; at the second,
    :class:`TurnFailed` ends the turn.
    """
    guard = context.guard
    if guard is None:
        return None
    indent = _indent(text, start)
    try:
        return check_guard(guard, old, new, indent)
    except GuardViolation as violation:
        record = context.record
        record.violations.append(violation)
        if len(record.violations) < MAX_VIOLATIONS:
            raise
        raise TurnFailed(refused_twice(violation)) from None


def refuse_new_node(context: AgentContext) -> None:
    """Under a guard an agent may not add definitions: refuse with the reason."""
    guard = context.guard
    if guard is not None:
        raise GuardViolation(guard, "you proposed a new definition")


def refused_twice(violation: GuardViolation) -> str:
    """The failure of a turn whose rewrite the guard refused twice."""
    guard = violation.guard
    asked = f"“{guard.asked}”" if guard.asked else "a change"
    return (
        f"No proposal: asked {asked}, where only {guard.allowed} may change, "
        f"the agent changed the code twice; the last time {violation.change}."
    )
