"""Accepting many proposals at once: one edit covering every file (DESIGN §10).

:func:`accept_many` plans each proposal against the current text (a stale one
is marked stale and skipped with its reason; one that overlaps an earlier one
in the same file is skipped), groups the edits per file, writes down the text
each file will hold (so a crash between the edit landing and the acceptances
being recorded still ends ``accepted`` at the next start, as for one proposal),
asks the editor to apply them all at once, then checks file by file that the
text landed and records each proposal individually (``rewrite_applied`` each,
or ``rewrite_not_applied`` with the reason).

The edits of every file go to the :class:`~remora_core.editor.Editor` at once
(over LSP: one ``workspace/applyEdit``; on disk: one atomic write per file).
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any

from remora_core.review.decisions import NotApplicable
from remora_core.review.edits import FileEdit, PlannedEdit
from remora_core.review.proposals import text_hash

if TYPE_CHECKING:
    from remora_core.editor import Editor
    from remora_core.review.decisions import Review
    from remora_core.review.proposals import Proposal

log = logging.getLogger(__name__)

LAND_WAIT_S = 3.0
"""How long the edited files may take to reach the server as ``didChange``."""


async def accept_many(
    review: Review, proposal_ids: list[str], editor: Editor
) -> list[dict[str, Any]]:
    """Accept ``proposal_ids`` together; ``[{proposal_id, applied, reason?}]``
    in the order given.
    """
    ids = list(dict.fromkeys(proposal_ids))
    async with contextlib.AsyncExitStack() as stack:
        for proposal_id in sorted(ids):
            await stack.enter_async_context(review.deciding(proposal_id))
        results, files = await _plan(review, ids)
        if files:
            await _apply(review, files, editor, results)
    return [results[i] for i in ids]


async def _plan(
    review: Review, ids: list[str]
) -> tuple[dict[str, dict[str, Any]], list[FileEdit]]:
    results: dict[str, dict[str, Any]] = {}
    files: dict[str, FileEdit] = {}
    for proposal_id in ids:
        proposal = review.services.proposals.get(proposal_id)
        if proposal is None:
            results[proposal_id] = _no(proposal_id, "there is no such proposal")
            continue
        try:
            planned = review.plan(proposal, remember=False)
        except NotApplicable as problem:
            if problem.stale:
                await review.stale(proposal, problem.reason)
            results[proposal_id] = _no(proposal_id, problem.reason)
            continue
        file = files.setdefault(
            planned.path, FileEdit(planned.path, planned.version, planned.before)
        )
        clash = next((e for e in file.edits if _overlap(e, planned)), None)
        if clash is not None:
            results[proposal_id] = _no(
                proposal_id,
                f"it overlaps {clash.proposal_id}, accepted in the same batch",
            )
            continue
        file.edits.append(planned)
        file.edits.sort(key=lambda e: (e.start_byte, e.end_byte))
        results[proposal_id] = {"proposal_id": proposal_id, "applied": False}
    return results, [f for f in files.values() if f.edits]


def _overlap(a: PlannedEdit, b: PlannedEdit) -> bool:
    """Whether two edits touch the same bytes (an insertion at an end does not)."""
    return a.start_byte < b.end_byte and b.start_byte < a.end_byte


def _no(proposal_id: str, reason: str) -> dict[str, Any]:
    return {"proposal_id": proposal_id, "applied": False, "reason": reason}


async def _apply(
    review: Review,
    files: list[FileEdit],
    editor: Editor,
    results: dict[str, dict[str, Any]],
) -> None:
    for file in files:
        digest = text_hash(file.after())
        for edit in file.edits:
            review.expected[edit.proposal_id] = digest
            await review.expect(edit)
    failure = await _editor_applies(editor, files)
    for file in files:
        proposals = [_get(review, e.proposal_id) for e in file.edits]
        if failure is None and not await review.landed(proposals[0], LAND_WAIT_S):
            reason = (
                f"{file.path} does not hold the edits after applying them (the "
                "editor may have skipped an edit made for an older version)"
            )
        else:
            reason = failure
        for proposal in proposals:
            if reason is None:
                await review.accepted(proposal)
                results[proposal.id] = {"proposal_id": proposal.id, "applied": True}
            else:
                await review.not_applied(proposal, reason)
                results[proposal.id] = _no(proposal.id, reason)


async def _editor_applies(editor: Editor, files: list[FileEdit]) -> str | None:
    """Apply every file's edits through the editor: None, or why not."""
    count = sum(len(file.edits) for file in files)
    try:
        result = await editor.apply(files, f"Remora: accept {count} proposal(s)")
    except Exception as error:  # the editor answered with an error
        return f"the editor could not apply the edit: {error}"
    if not result.applied:
        return result.reason or "the editor did not apply the edit"
    return None


def _get(review: Review, proposal_id: str) -> Proposal:
    proposal = review.services.proposals.get(proposal_id)
    assert proposal is not None  # planned a moment ago, under its lock
    return proposal
