"""The ``proposals`` facade: list, diff, accept, reject.

A proposal reference is its id (``pr_`` + 12 hex digits) or a unique prefix of
it. Accepting is the one use case of :mod:`.accepting`, through the editor the
app was opened with (or one given per call: the control socket writes files
no editor holds open on disk). Rejecting records the feedback and runs the
agent again with it; it shares the decision lock with accepting.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from remora_core.front import accepting
from remora_core.front.errors import Ambiguous, InvalidArguments, NotFound
from remora_core.front.runs import ensure_owner
from remora_core.model import ProposalStatus
from remora_core.review.accept_many import accept_many
from remora_core.review.proposals import ProposalError

if TYPE_CHECKING:
    from remora_core.editor import Editor
    from remora_core.project import Project
    from remora_core.review.accept_many import Apply
    from remora_core.review.decisions import PlannedEdit
    from remora_core.review.proposals import Proposal

log = logging.getLogger(__name__)

PROPOSAL_PREFIX = "pr_"


class Proposals:
    """Proposals of one project."""

    def __init__(self, project: Project, editor: Editor) -> None:
        self._project = project
        self.editor = editor

    @property
    def _store(self):
        return self._project.agents.services.proposals

    def find(self, ref: Any) -> Proposal:
        """The proposal ``ref`` names (id or unique prefix)."""
        if not isinstance(ref, str) or not ref.startswith(PROPOSAL_PREFIX[: len(ref)]):
            raise InvalidArguments(
                f"proposal_id must look like pr_ followed by 12 hex digits, got {ref!r}"
            )
        exact = self._store.get(ref)
        if exact is not None:
            return exact
        found = [p for p in self._store.list() if p.id.startswith(ref)]
        if not found:
            raise NotFound(f"no proposal {ref} in this project")
        if len(found) > 1:
            raise Ambiguous(
                f"{ref} matches {len(found)} proposals; give more of the id",
                [self.summary(p) for p in found[:20]],
            )
        return found[0]

    def get(self, proposal_id: str) -> Proposal | None:
        """The proposal with exactly this id, or None."""
        return self._store.get(proposal_id)

    def list(
        self, *, path: str | None = None, status: ProposalStatus | str | None = None
    ) -> list[Proposal]:
        """Proposals, newest first, optionally of one file and status."""
        return self._store.list(path=path, status=status and str(status))

    def pending(
        self, *, path: str | None = None, node_id: str | None = None
    ) -> list[Proposal]:
        """Pending proposals of a file or a node."""
        if node_id is not None:
            return self._store.pending(node_id=node_id)
        return self._store.pending(path=path)

    def summary(self, proposal: Proposal) -> dict[str, Any]:
        """A proposal's JSON with its node's qualified name."""
        node = self._project.graph.get(proposal.node_id)
        return {
            **proposal.to_json(),
            "node": node.qualified_name if node is not None else None,
        }

    def diff(self, ref: Any) -> dict[str, Any]:
        """``{diff, old_source, new_source, status}`` of a proposal."""
        proposal = self.find(ref)
        return {
            "diff": proposal.diff,
            "old_source": proposal.old_source,
            "new_source": proposal.new_source,
            "status": proposal.status,
        }

    def plan(self, proposal: Proposal) -> PlannedEdit:
        """The edit applying ``proposal`` now (for an editor's code action); the
        text it produces is written down in the background so an acceptance
        the editor applies just before a crash is still recorded.
        """
        review = self._project.agents.review
        planned = review.plan(proposal)
        if not self._project.following:
            self._project.tasks.spawn(review.expect(planned), name="expect acceptance")
        return planned

    async def accept(self, ref: Any, editor: Editor | None = None) -> dict[str, Any]:
        """Accept a proposal: ``{applied, reason?}`` (see :mod:`.accepting`)."""
        proposal = self.find(ref)
        project = self._project
        ensure_owner(project, "accept proposals")
        result = await accepting.accept(
            project.agents.review, editor or self.editor, proposal
        )
        if result["applied"] and proposal.file_path not in project.documents:
            # Written on disk, not in a buffer: the project reads it again now
            # that rewrite_applied is out, so its content_changed follows as
            # after an editor's didChange (DESIGN §9).
            await project.disk.files_changed(changed=[proposal.file_path])
        return result

    async def accept_many(
        self, proposal_ids: list[str], apply: Apply
    ) -> list[dict[str, Any]]:
        """Accept proposals of this project together, one edit over every file
        (``accept_many.py``): ``[{proposal_id, applied, reason?}]``.
        """
        ensure_owner(self._project, "accept proposals")
        return await accept_many(self._project.agents.review, proposal_ids, apply)

    async def reject(
        self, ref: Any, feedback: str | None, *, retry: bool = True
    ) -> str | None:
        """Reject a proposal with feedback; the run id of the agent's retry.

        ``feedback`` None asks the person through the editor first.
        ``retry=False``: only record it (the agent does not run again; None).
        """
        proposal = self.find(ref)
        ensure_owner(self._project, "reject proposals")
        if proposal.status != ProposalStatus.PENDING:
            raise InvalidArguments(
                f"proposal {proposal.id} is already {proposal.status}"
            )
        if feedback is None:
            feedback = await self._ask_feedback(proposal)
        project = self._project
        try:
            return await project.agents.review.reject(
                proposal, feedback, reserve=project.swarm.runner.reserve, retry=retry
            )
        except ProposalError as error:  # decided while the person wrote feedback
            raise InvalidArguments(str(error)) from None

    async def _ask_feedback(self, proposal: Proposal) -> str:
        from remora_core.agents.questions import Question

        question = Question(
            id=f"feedback_{proposal.id}",
            agent_id=proposal.node_id,
            run_id=proposal.run_id or "",
            question="What should the agent do differently?",
            options=(),
        )
        try:
            answer = await self.editor.ask(question)
        except Exception as error:  # the editor cannot ask: no feedback
            log.info("no feedback for %s: %s", proposal.id, error)
            return ""
        return answer or ""
