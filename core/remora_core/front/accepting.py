"""Accepting a proposal: ONE use case for every editor.

decide → ``editor.apply(plan)`` → verify → record, exactly once:

1. Under the proposal's decision lock (:meth:`Review.deciding`): two accepts
   arriving together never send the edit twice; the second finds the first's
   decision.
2. A proposal that is not pending answers why. When the document already holds
   the proposal (an editor applies a code action's ``edit`` just before running
   its ``command``) the acceptance is only recorded.
3. Otherwise the edit is planned against the current text (a changed node makes
   the proposal ``stale``), the text it produces is written down first (a crash
   between the edit landing and the record still ends ``accepted`` at the next
   start), and the editor applies it.
4. The document must then hold the expected text (Neovim silently skips an edit
   made for an older version; the change reaches the engine as ``didChange`` a
   moment later, so this waits up to :data:`APPLY_WAIT_S`). Only then is the
   proposal ``accepted`` with ``rewrite_applied``; otherwise it stays pending
   with ``rewrite_not_applied`` and the reason.
5. The index takes the new text in after the record: an open buffer through
   the editor's ``didChange`` (announced when it settles), a file written on
   disk by a re-read right after (:meth:`remora_core.front.proposals.Proposals.
   accept`). Either way ``rewrite_applied`` comes first, then the
   ``content_changed`` that triggers subscribers.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from remora_core.model import ProposalStatus
from remora_core.review.decisions import NotApplicable
from remora_core.review.edits import FileEdit

if TYPE_CHECKING:
    from remora_core.editor import Editor
    from remora_core.review.decisions import Review
    from remora_core.review.proposals import Proposal

log = logging.getLogger(__name__)

APPLY_WAIT_S = 3.0
"""How long an applied edit may take to reach the engine (``didChange``)."""
NOT_HELD = (
    "the document does not hold the proposal after the edit (the editor may "
    "have skipped an edit made for an older version)"
)


async def accept(review: Review, editor: Editor, proposal: Proposal) -> dict[str, Any]:
    """Apply (if needed), verify and record an acceptance: ``{applied, reason?}``."""
    async with review.deciding(proposal.id):
        current = review.services.proposals.get(proposal.id) or proposal
        return await _accept(review, editor, current)


async def _accept(review: Review, editor: Editor, proposal: Proposal) -> dict[str, Any]:
    if proposal.status != ProposalStatus.PENDING:
        reason = f"the proposal is {proposal.status}"
        if proposal.status == ProposalStatus.STALE:
            reason += ": its code changed since it was made (ask the agent again)"
        return {"applied": False, "reason": reason}
    if not review.holds(proposal):
        reason = await _apply(review, editor, proposal)
        if reason is not None:
            return {"applied": False, "reason": reason}
    await review.accepted(proposal)
    return {"applied": True}


async def _apply(review: Review, editor: Editor, proposal: Proposal) -> str | None:
    """Plan and apply the edit and check it landed; why not, or None if it did."""
    try:
        planned = review.plan(proposal)
    except NotApplicable as problem:
        if problem.stale:
            await review.stale(proposal, problem.reason)
        return problem.reason
    # Written down before the editor applies it: after a crash between the
    # edit landing and the acceptance being recorded, the next start records
    # it accepted (not stale).
    await review.expect(planned)
    try:
        result = await editor.apply(
            [FileEdit.of(planned)], f"Remora: accept {planned.proposal_id}"
        )
    except Exception as error:  # the editor answered with an error
        reason = f"the editor could not apply the edit: {error}"
    else:
        if not result.applied:
            reason = result.reason or "the editor did not apply the edit"
        elif not await _lands(review, proposal):
            reason = NOT_HELD
        else:
            return None
    await review.not_applied(proposal, reason)
    return reason


async def _lands(review: Review, proposal: Proposal) -> bool:
    """Wait until the document holds the proposal (or give up)."""
    return await review.landed(proposal, APPLY_WAIT_S)
