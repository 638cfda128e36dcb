"""The ``proposals`` facade: list, diff, accept, reject.

A proposal reference is its id (``pr_`` + 12 hex digits) or a unique prefix of
it. Every kind — ``rewrite``, ``new_node``, ``revert``, ``new_file``,
``change_set`` — goes through the same calls; a change set's diff is every
file's, with each member's own, and ``accept(…, members=[i, …])`` accepts
part of it where its ``depends_on`` allows (``review/change_sets.py``).

Accepting is the one use case of :mod:`.accepting`, through the editor the
app was opened with (or one given per call: the control socket writes files
no editor holds open on disk). Rejecting records the feedback and runs the
agent again with it; it shares the decision lock with accepting.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from remora_core.agents.questions import Question
from remora_core.front import accepting
from remora_core.front.accept_many import accept_many
from remora_core.front.errors import (
    Ambiguous,
    CannotApply,
    InvalidArguments,
    NotFound,
)
from remora_core.model import ProposalStatus
from remora_core.review.change_sets import (
    describe,
    member_label,
    refuse_partial,
    refuse_rejecting,
)
from remora_core.review.decisions import NotApplicable
from remora_core.review.edits import FileEdit
from remora_core.review.hidden_chars import note, reveal
from remora_core.review.proposals import ProposalError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from remora_core.editor import Editor
    from remora_core.front.startup import Startup
    from remora_core.index.code_index import CodeIndex
    from remora_core.index.disk import DiskSync
    from remora_core.review.proposals import Proposal, ProposalStore

log = logging.getLogger(__name__)

PROPOSAL_PREFIX = "pr_"
FEEDBACK_WAIT_S = 600.0
"""How long a rejection waits for the person's feedback."""


class Proposals:
    """Proposals of one project."""

    def __init__(
        self, index: CodeIndex, disk: DiskSync, startup: Startup, editor: Editor
    ) -> None:
        self._index = index
        self._disk = disk
        self._startup = startup
        self.editor = editor

    @property
    def _store(self) -> ProposalStore:
        parts = self._startup.now()
        if parts is None:  # commands wait for the start; nothing asks before
            raise InvalidArguments("the project has not started yet")
        return parts.agents.services.proposals

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
        """The proposal with exactly this id, or None (also before the start)."""
        parts = self._startup.now()
        return parts.agents.services.proposals.get(proposal_id) if parts else None

    def list(
        self, *, path: str | None = None, status: ProposalStatus | None = None
    ) -> list[Proposal]:
        """Proposals, newest first, optionally of one file and status."""
        return self._store.list(path=path, status=status)

    def pending(
        self, *, path: str | None = None, node_id: str | None = None
    ) -> list[Proposal]:
        """Pending proposals of a file or a node (none before the start)."""
        if self._startup.now() is None:
            return []
        if node_id is not None:
            return self._store.pending(node_id=node_id)
        return self._store.pending(path=path)

    def summary(self, proposal: Proposal) -> dict[str, Any]:
        """A proposal's JSON with its node's qualified name."""
        node = self._index.graph.get(proposal.node_id)
        return {
            **proposal.to_json(),
            "node": node.qualified_name if node is not None else None,
        }

    def diff(self, ref: Any) -> dict[str, Any]:
        """``{diff, old_source, new_source, status, checks, file_path,
        start_byte}`` of a proposal.
        """
        proposal = self.find(ref)
        shown: dict[str, Any] = {
            "file_path": proposal.file_path,
            "start_byte": proposal.start_byte,
            "diff": proposal.diff,
            "old_source": proposal.old_source,
            "new_source": proposal.new_source,
            "status": proposal.status,
            "checks": [check.to_json() for check in proposal.checks],
            "kind": proposal.kind,
        }
        if proposal.members:
            shown["members"] = [
                {
                    "index": index,
                    "path": member.path,
                    "node_id": member.node_id,
                    "kind": member.kind,
                    "old_source": member.old_source,
                    "new_source": member.new_source,
                    "diff": member.diff,
                }
                for index, member in enumerate(proposal.members)
            ]
            shown["depends_on"] = [list(pair) for pair in proposal.depends_on]
        if proposal.kind == "change_set":
            shown["summary"] = proposal.summary
        return shown

    def title(self, proposal: Proposal) -> str:
        """What accepting does, in a few words: ``create tests/test_x.py
        (+24)``, ``Change set: add currency (4 definitions in 3 files, 1 new
        file)``, or the headline of any other proposal.
        """
        if proposal.kind == "new_file":
            added = _added(proposal.diff)
            return f"create {proposal.file_path} (+{added})"
        if proposal.kind == "change_set":
            return f"Change set: {proposal.summary} ({describe(proposal.members)})"
        return self.headline(proposal)

    def headline(self, proposal: Proposal) -> str:
        """What the proposal changes, in one line: ``rewrite (+3 −1): reason``."""
        added = removed = 0
        for line in proposal.diff.splitlines():
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
        what = {"new_node": "new definition", "revert": "revert"}.get(
            proposal.kind, "rewrite"
        )
        reason = (
            proposal.reasoning.strip().splitlines()[0] if proposal.reasoning else ""
        )
        text = f"{what} (+{added} −{removed})"
        if (hidden := note(proposal.new_source)) is not None:
            text = f"{text} ⚠ {hidden}"
        return f"{text}: {reveal(reason[:80])}" if reason else text

    def anchors(self, proposal: Proposal, path: str) -> list[str]:
        """The nodes of ``path`` a pending proposal is shown on: the node that
        asked for it and, for a change set, each member's node there.
        """
        found: list[str] = []
        for node_id in (proposal.node_id, *(m.node_id for m in proposal.members)):
            node = self._index.graph.get(node_id) if node_id else None
            if node is not None and node.file_path == path and node_id not in found:
                found.append(node.id)
        return found

    def member_anchors(
        self, proposal: Proposal, path: str
    ) -> list[tuple[int, str, str]]:
        """Where each member of a pending change set is decided alone in
        ``path``: ``(index, node id, "rewrite make_item")`` — on its node,
        or, for a member with none (a new file), on the node that asked for
        the set. Nothing for a set of one member: deciding it decides the set.
        """
        if proposal.kind != "change_set" or len(proposal.members) < 2:
            return []
        graph = self._index.graph
        asker = graph.get(proposal.node_id)
        found: list[tuple[int, str, str]] = []
        for index, member in enumerate(proposal.members):
            node = graph.get(member.node_id) if member.node_id else None
            node = node or asker
            if node is not None and node.file_path == path:
                found.append((index, node.id, member_label(member)))
        return found

    def describe(self, proposal: Proposal) -> str:
        """A pending proposal's diagnostic: what it changes and its reason."""
        if proposal.kind == "new_file":
            reason = proposal.summary
            said = f"Remora proposes to {self.title(proposal)}"
            return f"{said}: {reveal(reason[:80])}" if reason else said
        if proposal.kind == "change_set":
            return f"Remora proposes a {self.title(proposal)}"
        return f"Remora proposes a {self.headline(proposal)}"

    def checks_line(self, proposal: Proposal) -> str:
        """What was checked in one line: ``✓ docstring-only: … · ✓ tests: 3 passed``."""
        return " · ".join(check.summary() for check in proposal.checks)

    def plan(self, proposal: Proposal) -> list[FileEdit]:
        """The edits applying ``proposal`` now, one per file (for an editor's
        code action); :class:`CannotApply` saying why not. The text they
        produce is written down in the background so an acceptance the editor
        applies just before a crash is still recorded.
        """
        parts = self._startup.now()
        assert parts is not None  # a pending proposal exists only once started
        review = parts.agents.review
        try:
            files = review.plan_files(proposal)
        except NotApplicable as problem:
            raise CannotApply(problem.reason) from None
        if not parts.following:
            self._index.tasks.spawn(
                review.expect(files[0].edits[0]), name="expect acceptance"
            )
        return files

    async def accept(
        self,
        ref: Any,
        editor: Editor | None = None,
        *,
        edit_applied: bool = False,
        members: list[int] | None = None,
    ) -> dict[str, Any]:
        """Accept a proposal: ``{applied, reason?}`` (see :mod:`.accepting`;
        ``edit_applied``: the editor applied a code action's edit itself;
        ``members``: the part of a change set to accept).
        """
        parts = await self._startup.parts()
        proposal = self.find(ref)
        self._startup.ensure_owner("accept proposals")
        chosen = _chosen_members(proposal, members, refuse_partial)
        result = await accepting.accept(
            parts.agents.review,
            editor or self.editor,
            proposal,
            edit_applied=edit_applied,
            members=chosen,
        )
        if result["applied"]:
            await self._reread(list(proposal.paths()))
        return result

    async def accept_many(
        self, refs: list[str], editor: Editor | None = None
    ) -> list[dict[str, Any]]:
        """Accept proposals together, one edit over every file
        (``front/accept_many.py``): ``[{proposal_id, applied, reason?}]``
        in the order given; an unknown one answers why.
        """
        parts = await self._startup.parts()
        self._startup.ensure_owner("accept proposals")
        ids = {ref: self._id_of(ref) for ref in refs}
        results: dict[str, dict[str, Any]] = {}
        for found in ids.values():
            proposal = self.get(found) if found is not None else None
            if proposal is not None and proposal.members:
                # One set, one atomic edit of its own: never mixed with others.
                results[found or ""] = {
                    "proposal_id": found,
                    **await self.accept(found, editor),
                }
        known = [i for i in ids.values() if i is not None and i not in results]
        if known:
            done = await accept_many(parts.agents.review, known, editor or self.editor)
            results |= {item["proposal_id"]: item for item in done}
            applied = [self.get(i) for i, r in results.items() if r["applied"]]
            await self._reread([p.file_path for p in applied if p is not None])
        missing = {"applied": False, "reason": "there is no such proposal"}
        return [
            results.get(ids[ref] or "") or {"proposal_id": ref, **missing}
            for ref in refs
        ]

    def _id_of(self, ref: str) -> str | None:
        """The id ``ref`` names, or None (logged) when it names none."""
        try:
            return self.find(ref).id
        except InvalidArguments as problem:
            log.info("not accepting %s: %s", ref, problem)
            return None

    async def _reread(self, paths: list[str]) -> None:
        """Files written on disk, not in a buffer: the project reads them again
        now that ``rewrite_applied`` is out, so their ``content_changed``
        follows as after an editor's ``didChange`` (DESIGN §9).
        """
        on_disk = sorted({p for p in paths if p not in self._index.documents})
        if on_disk:
            await self._disk.files_changed(changed=on_disk)

    async def reject(
        self,
        ref: Any,
        feedback: str | None,
        *,
        retry: bool = True,
        editor: Editor | None = None,
        members: list[int] | None = None,
    ) -> str | None:
        """Reject a proposal with feedback; the run id of the agent's retry.

        ``feedback`` None asks the person through the editor first.
        ``retry=False``: only record it (the agent does not run again; None).
        ``members``: only those members of a change set (the rest stays
        pending; all of them: the set).
        """
        parts = await self._startup.parts()
        proposal = self.find(ref)
        self._startup.ensure_owner("reject proposals")
        if proposal.status != ProposalStatus.PENDING:
            raise InvalidArguments(
                f"proposal {proposal.id} is already {proposal.status}"
            )
        chosen = _chosen_members(proposal, members, refuse_rejecting)
        if proposal.kind == "revert":  # no agent made it: none tries again
            retry, feedback = False, feedback or ""
        if feedback is None:
            feedback = await self._ask_feedback(proposal, editor or self.editor)
        review = parts.agents.review
        try:
            if chosen is None:
                return await review.reject(
                    proposal, feedback, reserve=parts.swarm.runner.reserve, retry=retry
                )
            updated, run_id = await review.reject_members(
                proposal,
                chosen,
                feedback,
                anchor=self._home(proposal),
                reserve=parts.swarm.runner.reserve,
                retry=retry,
            )
        except ProposalError as error:  # decided while the person wrote feedback
            raise InvalidArguments(str(error)) from None
        except NotApplicable as problem:
            raise CannotApply(problem.reason) from None
        await self._test_again(updated)
        return run_id

    def _home(self, proposal: Proposal) -> str | None:
        """The file of the node that asked for ``proposal``."""
        node = self._index.graph.get(proposal.node_id)
        return node.file_path if node is not None else proposal.anchor_path

    async def _test_again(self, proposal: Proposal) -> None:
        """A set that lost members: its tests run again with the rest."""
        parts = self._startup.now()
        verifier = parts.agents.services.verifier if parts is not None else None
        if verifier is None or proposal.check("tests") is None:
            return
        check = verifier.first_check(proposal)
        if check is None:
            return
        await self._store.set_check(proposal.id, check)
        if check.status == "running":
            verifier.submit(proposal)

    async def _ask_feedback(self, proposal: Proposal, editor: Editor) -> str:
        question = Question(
            id=f"feedback_{proposal.id}",
            agent_id=proposal.node_id,
            run_id=proposal.run_id or "",
            question="What should the agent do differently?",
            options=(),
        )
        try:
            answer = await asyncio.wait_for(editor.ask(question), FEEDBACK_WAIT_S)
        except Exception as error:  # the editor cannot ask: no feedback
            log.info("no feedback for %s: %s", proposal.id, error)
            return ""
        return answer or ""


def _added(diff: str) -> int:
    """Lines a diff adds."""
    return sum(
        1
        for line in diff.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    )


def _chosen_members(
    proposal: Proposal,
    members: list[int] | None,
    refuse: Callable[[Proposal, Iterable[int]], tuple[int, ...]],
) -> tuple[int, ...] | None:
    """The members of a change set a person chose, as ``refuse`` allows them
    (it raises, naming what the choice would break); None: the whole set
    (none named, or every one).
    """
    if members is None:
        return None
    try:
        chosen = refuse(proposal, members)
    except ValueError as problem:
        raise InvalidArguments(str(problem)) from None
    return None if len(chosen) == len(proposal.members) else chosen
