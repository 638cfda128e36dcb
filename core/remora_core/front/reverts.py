"""The ``reverts`` facade: a way back, as proposals (DESIGN §15, revert).

Undoing accepted work never writes a file behind the editor: it makes a new
proposal of kind ``revert`` per file, reviewed and accepted like any other
(one file: ``remora.proposal.accept``; several, as one: ``remora.proposals.
accept`` with every id of the answer — there are no change sets yet, so a
graph run's revert is one proposal per file, accepted together).

- :meth:`Reverts.proposal` undoes one accepted proposal;
- :meth:`Reverts.graph` undoes every proposal a graph run made and a person
  accepted (a file's several ones undone newest first, in one proposal);
- :meth:`Reverts.checkpoint` proposes each file back to its content at a
  checkpoint (kept by the checkpoint, ``history/checkpoints.py``).

What the person changed since is kept where it does not overlap what is
undone; an overlapping part is refused with its lines named
(``history/reverting.py``), never overwritten. A revert proposal replaces a
span of the whole file it was computed against: any change of the file
before it is accepted makes it ``stale`` (ask for the revert again). It
supersedes nothing and rejecting it runs no agent.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import uuid
from typing import TYPE_CHECKING, Any

from remora_core.discovery.files import content_hash
from remora_core.events.models import RewriteProposed
from remora_core.front.errors import FrontError, InvalidArguments, NotFound
from remora_core.history.checkpoints import DamagedCheckpoint
from remora_core.history.reverting import Refused, revert_in
from remora_core.model import ProposalStatus
from remora_core.review.diffs import CONTEXT, file_diff, split_lines
from remora_core.review.proposals import Proposal, text_hash

if TYPE_CHECKING:
    from collections.abc import Callable

    from remora_core.front.proposals import Proposals
    from remora_core.front.startup import Startup
    from remora_core.parts import ProjectParts

log = logging.getLogger(__name__)


class Reverts:
    """Proposals that undo accepted ones, of one project."""

    def __init__(self, startup: Startup, proposals: Proposals) -> None:
        self._startup = startup
        self._proposals = proposals

    async def proposal(self, ref: Any) -> dict[str, Any]:
        """Propose undoing one accepted proposal:
        ``{proposal_ids, reverted, refused}``.
        """
        parts = await self._startup.parts()
        self._startup.ensure_owner("revert proposals")
        found = self._proposals.find(ref) if _is_ref(ref) else None
        accepted = found or await self._stored(ref)
        if accepted.status != ProposalStatus.ACCEPTED:
            raise InvalidArguments(
                f"proposal {accepted.id} is {accepted.status}: only an accepted "
                "proposal can be reverted"
            )
        return await self._undo(parts, [accepted], f"revert {accepted.id}")

    async def graph(self, graph_run_id: str) -> dict[str, Any]:
        """Propose undoing what a graph run changed (its accepted proposals),
        one proposal per file, to be accepted together.
        """
        parts = await self._startup.parts()
        self._startup.ensure_owner("revert graph runs")
        status = await parts.graphs.status(graph_run_id)
        if status is None:
            raise NotFound(f"no graph run {graph_run_id}")
        store = parts.agents.services.proposals
        accepted = []
        for proposal_id in dict.fromkeys(status.get("proposals", {}).values()):
            found = await store.fetch(proposal_id)
            if found is not None and found.status == ProposalStatus.ACCEPTED:
                accepted.append(found)
        if not accepted:
            raise InvalidArguments(
                f"graph run {graph_run_id} has no accepted proposal to revert"
            )
        return await self._undo(parts, accepted, f"revert graph run {graph_run_id}")

    async def checkpoint(self, checkpoint_id: str) -> dict[str, Any]:
        """Propose each file that differs back to its content at the
        checkpoint: ``{proposal_ids, not_restored: [{path, reason}]}``.
        """
        parts = await self._startup.indexed_parts()
        self._startup.ensure_owner("restore checkpoints")
        read = parts.agents.services.read_text
        paths = [p for p, r in parts.records.items() if r.status == "present"]
        # An open buffer's text counts, not the file on disk; every file is
        # read and hashed, off the event loop, and only differing ones kept.
        hashes = await asyncio.to_thread(_hashes, read, paths)
        try:
            present, then = await parts.checkpoints.file_texts(checkpoint_id, hashes)
        except DamagedCheckpoint as problem:
            raise FrontError(str(problem)) from None
        except KeyError:
            raise NotFound(f"no checkpoint {checkpoint_id}") from None
        made: list[str] = []
        skipped: list[dict[str, str]] = []
        for path in sorted(then.keys() | (hashes.keys() - present)):
            old, current = then.get(path), read(path) if path in hashes else None
            if path not in present:
                skipped.append(
                    {"path": path, "reason": "created since: delete it by hand"}
                )
            elif current is None:
                skipped.append({"path": path, "reason": "deleted since"})
            elif old is None:
                skipped.append(
                    {"path": path, "reason": "the checkpoint did not keep its content"}
                )
            elif old != current:
                made += await self._propose_text(
                    parts,
                    path,
                    current,
                    old.decode("utf-8", "replace"),
                    f"restore {path} as at checkpoint {checkpoint_id}",
                )
        return {"proposal_ids": made, "not_restored": skipped}

    async def _stored(self, ref: Any) -> Proposal:
        """A proposal memory no longer holds, by its exact id."""
        parts = await self._startup.parts()
        found = (
            await parts.agents.services.proposals.fetch(ref)
            if isinstance(ref, str)
            else None
        )
        if found is None:
            raise NotFound(f"no proposal {ref} in this project")
        return found

    async def _undo(
        self, parts: ProjectParts, accepted: list[Proposal], why: str
    ) -> dict[str, Any]:
        """One revert proposal per file of ``accepted`` (newest undone first;
        a change set's accepted members each in its file; a created file is
        not deleted — refused, naming it).
        """
        by_file: dict[str, list[Proposal]] = {}
        refused: list[Refused] = []
        for proposal in sorted(accepted, key=lambda p: p.decided_at or 0, reverse=True):
            for part in _edits_of(proposal, refused):
                by_file.setdefault(part.file_path, []).append(part)
        made: list[str] = []
        for path, undone in by_file.items():
            data = parts.agents.services.read_text(path)
            if data is None:
                raise InvalidArguments(f"{path} cannot be read: nothing to revert")
            text = data.decode("utf-8", "replace")
            for proposal in undone:
                near = len(data[: proposal.start_byte].decode("utf-8", "replace"))
                result = revert_in(
                    text,
                    proposal.old_source,
                    proposal.new_source,
                    near=near,
                    proposal_id=proposal.id,
                    path=path,
                )
                text, refused = result.text, refused + result.refused
            made += await self._propose_text(parts, path, data, text, why)
        return {
            "proposal_ids": made,
            "reverted": [p.id for p in accepted],
            "refused": [r.to_json() for r in refused],
        }

    async def _propose_text(
        self, parts: ProjectParts, path: str, data: bytes, after: str, why: str
    ) -> list[str]:
        """Store and announce a revert proposal turning ``data`` into
        ``after``; its id (none when nothing changes).
        """
        proposal = _revert_proposal(parts, path, data, after, why)
        if proposal is None:
            return []
        await parts.agents.services.proposals.add(proposal)
        await parts.swarm.emit(
            RewriteProposed(
                agent_id=proposal.node_id,
                proposal_id=proposal.id,
                node_id=proposal.node_id,
                diff=proposal.diff,
            )
        )
        return [proposal.id]


def _edits_of(proposal: Proposal, refused: list[Refused]) -> list[Proposal]:
    """The edits an accepted proposal made, one per place: itself, or each
    accepted member of a set (a new file goes to ``refused``: no proposal
    deletes a file).
    """
    if not proposal.members:
        return [proposal]
    chosen = proposal.accepted_members
    parts: list[Proposal] = []
    for index, member in enumerate(proposal.members):
        if chosen is not None and index not in chosen:
            continue
        if member.kind == "new_file":
            lines = max(1, member.new_source.count("\n"))
            why = f"{member.path} was created by {proposal.id}: delete it by hand"
            refused.append(Refused(proposal.id, member.path, 1, lines, why))
            continue
        parts.append(
            dataclasses.replace(
                proposal,
                file_path=member.path,
                start_byte=member.start_byte,
                old_source=member.old_source,
                new_source=member.new_source,
                members=(),
            )
        )
    return parts


def _hashes(read: Callable[[str], bytes | None], paths: list[str]) -> dict[str, str]:
    """Path → content hash of its text now (buffer or disk), for those readable."""
    found: dict[str, str] = {}
    for path in paths:
        text = read(path)
        if text is not None:
            found[path] = content_hash(text)
    return found


def _is_ref(ref: Any) -> bool:
    """Whether ``ref`` can name a proposal memory holds (else: the store)."""
    return not isinstance(ref, str) or len(ref) < len("pr_") + 12


def _revert_proposal(
    parts: ProjectParts, path: str, data: bytes, after: str, why: str
) -> Proposal | None:
    """A ``revert`` proposal replacing the lines of ``data`` that differ from
    ``after`` (None when none do).
    """
    before = split_lines(data.decode("utf-8", "replace"))
    wanted = split_lines(after)
    first = 0
    while first < min(len(before), len(wanted)) and before[first] == wanted[first]:
        first += 1
    if first == len(before) == len(wanted):
        return None
    tail = 0
    while (
        tail < min(len(before), len(wanted)) - first
        and before[-1 - tail] == wanted[-1 - tail]
    ):
        tail += 1
    old = "".join(before[first : len(before) - tail])
    new = "".join(wanted[first : len(wanted) - tail])
    start = len("".join(before[:first]).encode("utf-8"))
    shown = max(0, first - CONTEXT)
    context = max(0, tail - CONTEXT)
    diff = file_diff(
        path,
        before[shown : len(before) - context],
        wanted[shown : len(wanted) - context],
        first_line=shown + 1,
    )
    services = parts.agents.services
    file_node = services.graph.file_node(path)
    return Proposal(
        id=f"pr_{uuid.uuid4().hex[:12]}",
        node_id=file_node.id if file_node is not None else path,
        run_id=None,
        kind="revert",
        file_path=path,
        base_version=services.document_version(path),
        base_hash=text_hash(data),
        start_byte=start,
        end_byte=start + len(old.encode("utf-8")),
        old_source=old,
        new_source=new,
        diff=diff,
        reasoning=why,
        status=ProposalStatus.PENDING,
        feedback=None,
        created_at=time.time(),
        decided_at=None,
    )
