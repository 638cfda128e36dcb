"""Accepting a proposal: ONE use case for every editor.

decide → ``editor.apply(plan)`` → verify → record, exactly once:

1. Under the proposal's decision lock (:meth:`Review.deciding`): two accepts
   arriving together never send the edit twice; the second finds the first's
   decision.
2. A proposal that is not pending answers why. When the document already holds
   the proposal (an editor applied a code action's ``edit`` and its change
   arrived before the ``command``) the acceptance is only recorded.
   ``edit_applied`` (the command of a code action that carried the edit): LSP
   lets an editor apply the action's edit, run its command and send the
   ``didChange`` carrying the edit a moment later, so the command only waits
   (up to :data:`APPLY_WAIT_S`) for the document to hold the proposal and
   records it — never a second edit, which the editor would refuse (made for
   the version it already left) after asking the person. An acceptance a
   change recorded meanwhile (:meth:`~remora_core.review.decisions.Review.
   recover`) answers applied too.
3. Otherwise the edit is planned against the current text (a changed node makes
   the proposal ``stale``), the text it produces is written down first (a crash
   between the edit landing and the record still ends ``accepted`` at the next
   start), and the editor applies it.
4. The document must then hold the expected text (Neovim silently skips an edit
   made for an older version; the change reaches the engine as ``didChange`` a
   moment later, so this waits up to :data:`APPLY_WAIT_S`). Only then is the
   proposal ``accepted`` with ``rewrite_applied``; otherwise it stays pending
   with ``rewrite_not_applied`` and the reason.
5. A change set (or a new file) goes the same way with every file's edit in
   one step — one versioned ``WorkspaceEdit`` across its documents (a new
   file as ``CreateFile`` plus its text) — and lands only when every file
   holds its text; if any of its files changed since it was made, nothing is
   sent and the set is ``stale``. ``members`` accepts part of a set (checked
   against its ``depends_on`` by the caller); the rest is not applied.
6. The index takes the new text in after the record: an open buffer through
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

if TYPE_CHECKING:
    from remora_core.editor import Editor
    from remora_core.review.decisions import Review
    from remora_core.review.proposals import Proposal

log = logging.getLogger(__name__)

APPLY_WAIT_S = 3.0
"""How long an applied edit may take to reach the engine (``didChange``)."""
NOT_ARRIVED = (
    "the change carrying the code action's edit did not arrive within "
    f"{APPLY_WAIT_S:g} s (the editor may have refused the edit; choose Accept "
    "again)"
)
NOT_HELD = (
    "the document does not hold the proposal after the edit (the editor may "
    "have skipped an edit made for an older version)"
)


async def accept(
    review: Review,
    editor: Editor,
    proposal: Proposal,
    *,
    edit_applied: bool = False,
    members: tuple[int, ...] | None = None,
) -> dict[str, Any]:
    """Apply (if needed), verify and record an acceptance: ``{applied, reason?}``.

    ``edit_applied``: the editor applied the edit itself (a code action's);
    only wait for it and record it. ``members``: the part of a change set to
    accept (None: all of it).
    """
    async with review.deciding(proposal.id):
        current = review.services.proposals.get(proposal.id) or proposal
        if edit_applied:
            return await _verify(review, current)
        return await _accept(review, editor, current, members)


async def _verify(review: Review, proposal: Proposal) -> dict[str, Any]:
    """Wait for the edit the editor applied to arrive; record it."""
    if proposal.status == ProposalStatus.ACCEPTED:
        return {"applied": True}  # its change arrived first and recorded it
    if proposal.status != ProposalStatus.PENDING:
        return _not_pending(proposal)
    if proposal.id not in review.expected:  # the action came from another process
        try:
            review.plan_files(proposal)
        except NotApplicable as problem:
            return {"applied": False, "reason": problem.reason}
    if not await _lands(review, proposal):
        await review.not_applied(proposal, NOT_ARRIVED)
        return {"applied": False, "reason": NOT_ARRIVED}
    await review.accepted(proposal)
    return {"applied": True}


def _not_pending(proposal: Proposal) -> dict[str, Any]:
    reason = f"the proposal is {proposal.status}"
    if proposal.status == ProposalStatus.STALE:
        reason += ": its code changed since it was made (ask the agent again)"
    return {"applied": False, "reason": reason}


async def _accept(
    review: Review,
    editor: Editor,
    proposal: Proposal,
    members: tuple[int, ...] | None = None,
) -> dict[str, Any]:
    if proposal.status != ProposalStatus.PENDING:
        return _not_pending(proposal)
    if members is not None or not review.holds(proposal):
        reason = await _apply(review, editor, proposal, members)
        if reason is not None:
            return {"applied": False, "reason": reason}
    await review.accepted(proposal, members)
    return {"applied": True}


async def _apply(
    review: Review,
    editor: Editor,
    proposal: Proposal,
    members: tuple[int, ...] | None,
) -> str | None:
    """Plan and apply the edit and check it landed; why not, or None if it did."""
    try:
        files = review.plan_files(proposal, members)
    except NotApplicable as problem:
        if problem.stale:
            await review.stale(proposal, problem.reason)
        return problem.reason
    # Written down before the editor applies it: after a crash between the
    # edit landing and the acceptance being recorded, the next start records
    # it accepted (not stale).
    await review.expect(files[0].edits[0])
    try:
        result = await editor.apply(files, f"Remora: accept {proposal.id}")
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
