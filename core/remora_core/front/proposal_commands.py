"""Commands that decide proposals: accept (one or several), reject, diff, list.

Every kind of proposal (``rewrite``, ``new_node``, ``revert``, ``new_file``,
``change_set``) goes through these same commands and ids; ``members`` accepts
or rejects part of a change set (DESIGN §15).

Accepting goes through the door's editor (an open buffer through the person's
editor, else the file on disk) and is verified before it is recorded
(``front/accepting.py``); rejecting runs the agent again with the feedback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, StrictBool

from remora_core.front import answers
from remora_core.front.arguments import FileArgs, ProposalArgs, ProposalRefField
from remora_core.front.locations import file_uri, project_path
from remora_core.front.table import Arguments, Door, Route, command
from remora_core.model import ProposalStatus

if TYPE_CHECKING:
    from remora_core.front.app import RemoraApp

MAX_BATCH = 10_000


class AcceptArgs(ProposalArgs):
    """A proposal, and whether the editor applied its edit already."""

    edit_applied: StrictBool = Field(
        default=False,
        description="true: the editor applied the edit itself (the command of "
        "a code action carrying it); the command waits for the change that "
        "carries it and records it, never sending the edit again",
    )
    members: list[Annotated[int, Field(ge=0)]] | None = Field(
        default=None,
        max_length=MAX_BATCH,
        description="a change set's members to accept (indices of its "
        "``members``); refused when one needs a member left out "
        "(``depends_on``). None: the whole proposal",
    )


class RejectArgs(ProposalArgs):
    """A proposal and the feedback for the agent."""

    feedback: str | None = Field(
        default=None, description="what to do differently (None: ask the person)"
    )
    retry: StrictBool = Field(
        default=True,
        description="false: record the rejection, the agent does not retry",
    )
    members: list[Annotated[int, Field(ge=0)]] | None = Field(
        default=None,
        max_length=MAX_BATCH,
        description="a change set's members to reject (indices of its "
        "``members``); the rest stays pending. Refused, naming them, when a "
        "member left in needs one of these (``depends_on``): name them too, "
        "or reject the whole set. None: the whole proposal",
    )


class ProposalsArgs(FileArgs):
    """Which proposals: of a file, of a status."""

    status: ProposalStatus | None = None


class ManyProposalsArgs(Arguments):
    """Proposals to accept together."""

    proposal_ids: list[ProposalRefField] = Field(min_length=1, max_length=MAX_BATCH)


@command("remora.proposal.accept", AcceptArgs, answers.Applied, Route.PROPOSAL)
async def proposal_accept(app: RemoraApp, a: AcceptArgs, door: Door) -> Any:
    """Apply the proposal through the editor (unless it applied it already),
    check it landed, record it.
    """
    return await app.proposals.accept(
        a.proposal_id, door.editor, edit_applied=a.edit_applied, members=a.members
    )


@command("remora.proposal.reject", RejectArgs, answers.MaybeRunId, Route.PROPOSAL)
async def proposal_reject(app: RemoraApp, a: RejectArgs, door: Door) -> Any:
    """Reject the proposal with feedback (asked of the person when missing);
    the agent tries again with it.
    """
    run_id = await app.proposals.reject(
        a.proposal_id, a.feedback, retry=a.retry, editor=door.editor, members=a.members
    )
    return {"run_id": run_id}


@command("remora.proposal.diff", ProposalArgs, answers.Diff, Route.PROPOSAL)
async def proposal_diff(app: RemoraApp, a: ProposalArgs, door: Door) -> Any:
    """The proposal's diff, old and new source, status and what was checked,
    and where it is (its file and the byte its definition starts at).
    """
    found = app.proposals.diff(a.proposal_id)
    return {**found, "uri": file_uri(app.root, found["file_path"])}


@command(
    "remora.proposals.list",
    ProposalsArgs,
    list[answers.ProposalListed],
    Route.DOCUMENT,
)
async def proposals_list(app: RemoraApp, a: ProposalsArgs, door: Door) -> Any:
    """Proposals, newest first, of a file and a status if given."""
    path = project_path(app.root, a.uri, a.path)
    return [
        {
            **app.proposals.summary(p),
            "uri": file_uri(app.root, p.file_path),
            "title": app.proposals.title(p),
        }
        for p in app.proposals.list(path=path, status=a.status)
    ]


@command(
    "remora.proposals.accept",
    ManyProposalsArgs,
    list[answers.AppliedProposal],
    Route.PROPOSAL,
)
async def proposals_accept(app: RemoraApp, a: ManyProposalsArgs, door: Door) -> Any:
    """Accept proposals together: one edit over every file, each proposal
    checked and recorded on its own; answers in the order given.
    """
    return await app.proposals.accept_many(a.proposal_ids, door.editor)


PROPOSAL_COMMANDS = [
    proposal_accept,
    proposal_reject,
    proposal_diff,
    proposals_list,
    proposals_accept,
]
