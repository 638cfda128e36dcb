"""A person's review of proposals: where an edit goes, accept, reject, stale.

The editor applies edits (so undo works); this module says what the edit is
and checks what landed:

- :meth:`Review.plan` computes the edit of a pending proposal against the
  *current* text — a rewrite replaces the node's current span, provided the
  node's text is still the one the proposal was made against; a new node goes
  where it was computed, provided the file is unchanged. Otherwise the proposal
  is stale (:class:`NotApplicable`). The whole text expected after the edit is
  remembered, so the server can tell that an edit landed.
- :meth:`Review.holds` says whether the document now holds a planned edit (an
  editor applies a code action's ``edit`` before running its ``command``: the
  acceptance is then only recorded, never applied twice).
- :meth:`Review.document_changed` runs after every edit of a file with pending
  proposals: one whose node changed (and does not hold the proposal) becomes
  ``stale`` with a ``rewrite_stale`` event and is never applied.
- :meth:`Review.reject` records the feedback and sends the agent a
  ``rewrite_rejected`` event addressed to it (a new correlation), which runs it
  again with the feedback and the rejected source. It takes the same decision
  lock as accepting (:meth:`Review.deciding`): an accept and a reject of one
  proposal arriving together never both act — the second finds the first's
  decision, and the record matches the buffer. :meth:`Review.reject_members`
  rejects part of a change set the same way: those members leave the set
  (which stays pending, its diff redone) and the agent gets the feedback
  with the rejected members only.
- :meth:`Review.expect` writes down the text a planned edit produces before an
  editor may apply it (a code action carrying the edit, or the accept command
  sending it). Until the acceptance is recorded, :meth:`Review.recover` (at
  start-up, and whenever the file changes) records the proposal ``accepted``
  once the document holds that text — never ``stale``: after a crash between
  the editor applying it and the server recording it, and when an editor
  applies a code action's edit whose command comes late or never.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Literal

from remora_core.events.models import (
    RewriteApplied,
    RewriteNotApplied,
    RewriteRejected,
    RewriteStale,
)
from remora_core.model import NodeStatus, ProposalStatus
from remora_core.review.change_sets import Stale, plan_members, without
from remora_core.review.edits import FileEdit, PlannedEdit
from remora_core.review.proposals import ProposalError, text_hash

if TYPE_CHECKING:
    from remora_core.events.models import Event
    from remora_core.review.ports import ReviewServices
    from remora_core.review.proposals import Proposal

log = logging.getLogger(__name__)


class NotApplicable(Exception):
    """A proposal cannot be applied; ``stale`` if it never will be."""

    def __init__(self, reason: str, *, stale: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.stale = stale


class Review:
    """Proposal decisions of one project."""

    def __init__(
        self, services: ReviewServices, emit: Callable[[Event], Awaitable[object]]
    ) -> None:
        self.services = services
        self.emit = emit
        self.expected: dict[str, str] = {}
        """Proposal id → digest of the whole text once its planned edit landed."""
        self.unfinished: set[str] = set()
        """Edits handed to an editor (by this process or an earlier one) whose
        acceptance is not recorded yet: the document holding their text
        records it (:meth:`recover`)."""
        self._written: dict[str, str] = {}
        """What :meth:`expect` last wrote down per proposal."""
        self._locks: dict[str, asyncio.Lock] = {}

    def load(self) -> None:
        """Take up the acceptances the store says are under way (after the
        proposals are loaded).
        """
        accepting = self.services.proposals.accepting
        self.expected.update(accepting)
        self._written.update(accepting)
        self.unfinished |= set(accepting)

    @contextlib.asynccontextmanager
    async def deciding(self, proposal_id: str) -> AsyncIterator[None]:
        """Hold while deciding on a proposal: decisions on it do not overlap."""
        lock = self._locks.setdefault(proposal_id, asyncio.Lock())
        async with lock:
            yield

    # ---- planning -----------------------------------------------------------------

    def plan(self, proposal: Proposal, *, remember: bool = True) -> PlannedEdit:
        """The edit for ``proposal`` now; :class:`NotApplicable` if there is none.

        ``remember``: note the text it produces, for :meth:`holds`.
        """
        if proposal.status != ProposalStatus.PENDING:
            raise NotApplicable(
                f"proposal {proposal.id} is already {proposal.status}", stale=False
            )
        services = self.services
        text = services.read_text(proposal.file_path)
        if text is None:
            raise NotApplicable(f"{proposal.file_path} cannot be read", stale=False)
        if proposal.kind == "rewrite":
            start, end = self._rewrite_span(proposal, text)
        else:
            if text_hash(text) != proposal.base_hash:
                raise NotApplicable(
                    f"{proposal.file_path} changed since the proposal was made",
                    stale=True,
                )
            # A new node inserts (its span is empty); a revert replaces a span
            # of the whole file it was made against.
            start, end = proposal.start_byte, proposal.end_byte
        new = proposal.new_source.encode("utf-8")
        if remember:
            self.expected[proposal.id] = text_hash(text[:start] + new + text[end:])
        return PlannedEdit(
            proposal_id=proposal.id,
            path=proposal.file_path,
            version=services.document_version(proposal.file_path),
            start_byte=start,
            end_byte=end,
            new_text=proposal.new_source,
            before=text,
        )

    def plan_files(
        self,
        proposal: Proposal,
        members: tuple[int, ...] | None = None,
        *,
        remember: bool = True,
    ) -> list[FileEdit]:
        """The edits of ``proposal`` now, one per file (a change set's chosen
        ``members``, all when None); :class:`NotApplicable` if there are none
        — a set is stale as a whole when any of its files changed.
        """
        if not proposal.members:
            return [FileEdit.of(self.plan(proposal, remember=remember))]
        if proposal.status != ProposalStatus.PENDING:
            raise NotApplicable(
                f"proposal {proposal.id} is already {proposal.status}", stale=False
            )
        landing = self._digests(proposal.id)
        try:
            files = plan_members(
                proposal,
                members,
                self.services.read_text,
                self.services.document_version,
                held=lambda path, text: landing.get(path) == text_hash(text),
            )
        except Stale as stale:
            raise NotApplicable(str(stale), stale=True) from None
        if remember:
            digests = {file.path: text_hash(file.after()) for file in files}
            self.expected[proposal.id] = json.dumps(digests, sort_keys=True)
        return files

    def _digests(self, proposal_id: str) -> dict[str, str]:
        """Path → digest each file of a set holds once its accepted edit
        landed (a set's expectation is JSON; a single proposal's is a digest).
        """
        expected = self.expected.get(proposal_id)
        if expected is None or not expected.startswith("{"):
            return {}
        try:
            found = json.loads(expected)
        except ValueError:
            return {}
        return found if isinstance(found, dict) else {}

    def _rewrite_span(self, proposal: Proposal, text: bytes) -> tuple[int, int]:
        node = self.services.graph.get(proposal.node_id)
        if node is None or node.status is not NodeStatus.ACTIVE:
            raise NotApplicable(
                f"the node of proposal {proposal.id} no longer exists", stale=True
            )
        current = text[node.span.start_byte : node.span.end_byte]
        if text_hash(current) != proposal.base_hash:
            raise NotApplicable(
                f"{node.qualified_name} changed since the proposal was made",
                stale=True,
            )
        return node.span.start_byte, node.span.end_byte

    def holds(self, proposal: Proposal) -> bool:
        """Whether the file's current text is the one a planned edit produces."""
        expected = self.expected.get(proposal.id)
        if expected is None:
            return False
        if expected.startswith("{"):  # a change set (or new file): every file
            digests = self._digests(proposal.id)
            read = self.services.read_text
            return bool(digests) and all(
                (text := read(path)) is not None and text_hash(text) == digest
                for path, digest in digests.items()
            )
        text = self.services.read_text(proposal.file_path)
        return text is not None and text_hash(text) == expected

    async def landed(self, proposal: Proposal, timeout: float) -> bool:
        """Wait until the file's text is the one the planned edit of
        ``proposal`` produces (:meth:`holds`), at most ``timeout`` seconds;
        whether it is. An editor's edit reaches the index a moment after the
        editor says it applied it (``didChange``); each change of the file
        wakes this wait (``index/text_watch.py``).
        """
        paths = list(self._digests(proposal.id)) or [proposal.file_path]
        for path in paths:  # each file's change wakes the wait on it
            if not await self.services.text_watch.until(
                path, lambda: self.holds(proposal), timeout
            ):
                return False
        return True

    async def expect(self, planned: PlannedEdit) -> None:
        """Write down the text ``planned`` produces, before the editor applies
        it: what a restart needs to tell that the edit landed.
        """
        digest = self.expected.get(planned.proposal_id)
        if digest is None:
            return
        self.unfinished.add(planned.proposal_id)
        if self._written.get(planned.proposal_id) == digest:
            return
        self._written[planned.proposal_id] = digest
        await self.services.proposals.expect(planned.proposal_id, digest)

    async def recover(self, path: str | None = None) -> list[str]:
        """Record as accepted the unfinished acceptances (of ``path``, or all)
        whose text the document now holds; their ids.
        """
        recorded: list[str] = []
        for proposal_id in sorted(self.unfinished):
            proposal = self.services.proposals.get(proposal_id)
            if proposal is None or proposal.status != ProposalStatus.PENDING:
                self.unfinished.discard(proposal_id)
                continue
            if path is not None and path not in proposal.paths():
                continue
            async with self.deciding(proposal_id):
                current = self.services.proposals.get(proposal_id)
                if (
                    current is None
                    or current.status != ProposalStatus.PENDING
                    or proposal_id not in self.unfinished
                    or not self.holds(current)
                ):
                    continue
                self.unfinished.discard(proposal_id)
                log.info("%s: the document holds its edit: accepted", proposal_id)
                await self.accepted(current)
                recorded.append(proposal_id)
        return recorded

    # ---- decisions -------------------------------------------------------------------

    async def accepted(
        self, proposal: Proposal, members: tuple[int, ...] | None = None
    ) -> Proposal:
        """Record that ``proposal`` (a set's ``members``) is in the document."""
        decided = await self.services.proposals.decide(
            proposal.id, ProposalStatus.ACCEPTED, members=members
        )
        self.expected.pop(proposal.id, None)
        self.unfinished.discard(proposal.id)
        await self.emit(
            RewriteApplied(
                agent_id=proposal.node_id,
                proposal_id=proposal.id,
                node_id=proposal.node_id,
            )
        )
        return decided

    async def not_applied(self, proposal: Proposal, reason: str) -> None:
        """Tell that an accepted edit did not land; the proposal stays pending."""
        await self.emit(
            RewriteNotApplied(
                agent_id=proposal.node_id,
                proposal_id=proposal.id,
                node_id=proposal.node_id,
                reason=reason,
            )
        )

    async def reject(
        self,
        proposal: Proposal,
        feedback: str,
        reserve: Callable[[str], str] | None = None,
        by: Literal["person", "tests"] = "person",
        *,
        retry: bool = True,
    ) -> str | None:
        """Record a rejection and send the agent its feedback (a new cascade).

        ``reserve`` (the runner's) promises a run id for the turn that follows;
        it is returned. ``by``: ``tests`` when the project's tests failed
        with it (``verification/``). ``retry=False`` only records it: the
        event is addressed to nobody, so the agent does not run again (None).
        :class:`ProposalError` if it was decided meanwhile (an accept running
        now finishes first: they share :meth:`deciding`).
        """
        async with self.deciding(proposal.id):
            await self.services.proposals.decide(
                proposal.id, ProposalStatus.REJECTED, feedback
            )
        self.expected.pop(proposal.id, None)
        event = RewriteRejected(
            agent_id=proposal.node_id,
            to_agent=proposal.node_id if retry else None,
            proposal_id=proposal.id,
            node_id=proposal.node_id,
            feedback=feedback,
            by=by,
        )
        run_id = reserve(event.id) if reserve is not None and retry else None
        await self.emit(event)
        return run_id

    async def reject_members(
        self,
        proposal: Proposal,
        members: tuple[int, ...],
        feedback: str,
        *,
        anchor: str | None,
        reserve: Callable[[str], str] | None = None,
        retry: bool = True,
    ) -> tuple[Proposal, str | None]:
        """Reject ``members`` of a pending set (checked by the caller against
        its ``depends_on``): the set without them, still pending, and the run
        id of the agent's retry. The agent's ``rewrite_rejected`` names the
        rejected members (indices of the set's ``rejected_members``).
        :class:`ProposalError` if the set was decided meanwhile;
        :class:`NotApplicable` (the set now ``stale``) if a file changed.
        """
        async with self.deciding(proposal.id):
            current = self.services.proposals.get(proposal.id)
            if current is None or current.status != ProposalStatus.PENDING:
                state = "gone" if current is None else current.status
                raise ProposalError(f"proposal {proposal.id} is already {state}")
            if current.members != proposal.members:
                raise ProposalError(
                    f"the members of {proposal.id} changed meanwhile; look again"
                )
            try:  # the rest's diff is redone against the current texts
                self.plan_files(current, remember=False)
            except NotApplicable as problem:
                if problem.stale:
                    await self.stale(current, problem.reason)
                raise
            before = len(current.rejected_members)
            updated = without(current, members, self.services.read_text, anchor)
            updated = await self.services.proposals.replace_members(updated)
            self.expected.pop(proposal.id, None)
            self._written.pop(proposal.id, None)
            self.unfinished.discard(proposal.id)
        event = RewriteRejected(
            agent_id=proposal.node_id,
            to_agent=proposal.node_id if retry else None,
            proposal_id=proposal.id,
            node_id=proposal.node_id,
            feedback=feedback,
            members=list(range(before, len(updated.rejected_members))),
        )
        run_id = reserve(event.id) if reserve is not None and retry else None
        await self.emit(event)
        return updated, run_id

    async def stale(self, proposal: Proposal, reason: str) -> None:
        """Mark ``proposal`` stale (it will never be applied)."""
        try:
            await self.services.proposals.decide(proposal.id, ProposalStatus.STALE)
        except ProposalError:  # decided meanwhile
            return
        self.expected.pop(proposal.id, None)
        await self.emit(
            RewriteStale(
                agent_id=proposal.node_id,
                proposal_id=proposal.id,
                node_id=proposal.node_id,
                reason=reason,
            )
        )

    async def files_moved(self, old: str, new: str) -> list[str]:
        """Mark stale the pending change sets with a member in the renamed
        file (or folder) ``old``: their edits were made for a file that is
        gone, never applied elsewhere. Their ids.
        """
        prefix = old.rstrip("/") + "/"
        became_stale: list[str] = []
        for proposal in self.services.proposals.pending():
            for member in proposal.members:
                if member.path == old:
                    target = new
                elif member.path.startswith(prefix):
                    target = new.rstrip("/") + "/" + member.path[len(prefix) :]
                else:
                    continue
                reason = (
                    f"{member.path} was renamed to {target} since the change "
                    "set was made"
                )
                await self.stale(proposal, reason)
                became_stale.append(proposal.id)
                break
        return became_stale

    async def document_changed(self, path: str) -> list[str]:
        """Mark stale the pending proposals of ``path`` whose node changed (an
        unfinished acceptance whose text arrived is recorded first).
        """
        became_stale: list[str] = []
        if self.unfinished:
            await self.recover(path)
        for proposal in self.services.proposals.pending(path=path):
            if self.holds(proposal):
                continue  # the edit that accepts it
            try:
                self.plan_files(proposal, remember=False)
            except NotApplicable as problem:
                if problem.stale:
                    await self.stale(proposal, problem.reason)
                    became_stale.append(proposal.id)
        return became_stale
