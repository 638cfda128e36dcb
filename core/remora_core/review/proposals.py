"""Proposals: edits agents want, kept until a person decides (DESIGN §9).

A :class:`Proposal` records where its edit goes (byte offsets in the text it was
made against, with that text's hash and document version), the exact text to
put there and a unified diff. :func:`prepare_rewrite` and
:func:`prepare_new_node` (from :mod:`remora_core.review.definition_edits`) validate an
agent's source and compute those; :class:`ProposalStore` keeps proposals in
memory, indexed for the editor's per-cursor-move questions, and writes every
change through to the project database so nothing is lost on restart.

Lifecycle: ``pending`` → ``accepted`` | ``rejected`` | ``stale`` (decided by
the person or the editor), or ``superseded`` when a newer proposal for the same
node replaces it (see :meth:`ProposalStore.add`). Decided proposals never
change again.

A pending proposal whose acceptance was sent to the editor carries the digest
of the text the edit produces (:meth:`ProposalStore.expect`, column
``accepting``), so a restart can tell that the editor applied it
(``review.py``).
"""

from __future__ import annotations

import builtins
import dataclasses
import hashlib
import json
import logging
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from remora_core.model import ProposalStatus
from remora_core.review.checks import Check
from remora_core.review.definition_edits import prepare_new_node, prepare_rewrite
from remora_core.review.source_checks import ProposalError

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable

    from remora_core.store.database import Database

log = logging.getLogger(__name__)

__all__ = [
    "DECISIONS",
    "Proposal",
    "ProposalError",
    "ProposalStore",
    "prepare_new_node",
    "prepare_rewrite",
]

DECISIONS = (ProposalStatus.ACCEPTED, ProposalStatus.REJECTED, ProposalStatus.STALE)
"""What a pending proposal may become by :meth:`ProposalStore.decide`."""

RECENT = 200
"""Decided proposals kept in memory (all pending ones are)."""


_PARTS = (
    "members",
    "depends_on",
    "anchor_path",
    "accepted_members",
    "rejected_members",
)
"""Fields stored together as JSON in the ``parts`` column."""


@dataclass(frozen=True, slots=True)
class Member:
    """One edit of a change set, or the file a ``new_file`` proposal creates.

    Its span is in the whole text of its file when the set was made, whose
    hash is ``base_hash``: any change of that file makes the set stale
    (DESIGN §15). A new file's ``base_hash`` is empty: the file must not exist.
    """

    path: str
    kind: str
    """``rewrite``, ``new_node`` or ``new_file``."""
    node_id: str | None
    """The rewritten node; a new definition's file node; None for a new file."""
    base_hash: str
    start_byte: int
    end_byte: int
    old_source: str
    new_source: str
    diff: str
    """This member's own diff (the set's ``diff`` is every file's)."""

    @classmethod
    def from_json(cls, data: Any) -> Member | None:
        """A member as stored; None (logged) when it is not one."""
        try:
            return cls(**data)
        except TypeError:
            log.warning("skipping a change set member that cannot be read: %r", data)
            return None


def _json(text: Any, default: Any) -> Any:
    try:
        return json.loads(text) if text else default
    except (TypeError, ValueError):
        return default


@dataclass(frozen=True, slots=True)
class Proposal:
    """One edit an agent proposed, and what became of it."""

    id: str
    """``pr_`` + 12 hex digits."""
    node_id: str
    """The node whose agent proposed it (the rewritten node, or the anchor)."""
    run_id: str | None
    kind: str
    """``rewrite`` (replaces the node's bytes), ``new_node`` (an insertion),
    ``revert`` (replaces a span of the whole file it was made against: undoing
    accepted proposals, ``front/reverts.py``), ``new_file`` (creates
    ``file_path``; its one member holds the content) or ``change_set``
    (several :attr:`members`, accepted as one)."""
    file_path: str
    base_version: int | None
    """The open document's version it was made against; None if from disk."""
    base_hash: str
    """sha256 of the replaced text (rewrite) or of the whole file (new_node)."""
    start_byte: int
    end_byte: int
    """Where ``new_source`` goes in that text; equal for an insertion."""
    old_source: str
    new_source: str
    """The exact text to put there, indentation and newlines already fitted."""
    diff: str
    reasoning: str
    status: ProposalStatus
    """Pending, or what became of it (a plain string given is converted)."""
    feedback: str | None
    created_at: float
    decided_at: float | None
    checks: tuple[Check, ...] = ()
    """What was checked and how it went (``checks.py``): the intent guard it
    passed, the project's tests (updated when they finish)."""
    members: tuple[Member, ...] = ()
    """The edits of a ``change_set`` (or the one file of a ``new_file``);
    empty for the other kinds (``change_sets.py``)."""
    depends_on: tuple[tuple[int, int], ...] = ()
    """``(i, j)``: member ``i`` needs member ``j`` (it uses a name ``j``
    defines); a partial accept must keep both or neither."""
    anchor_path: str | None = None
    """The file of the asking node when it is not ``file_path`` (a new file's,
    a change set's): where the proposal's diagnostic and actions are."""
    accepted_members: tuple[int, ...] | None = None
    """The members an accepted change set applied (None: all of them)."""
    rejected_members: tuple[Member, ...] = ()
    """Members a person rejected one by one, no longer in :attr:`members`
    (the rest of the set stayed pending; ``change_sets.without``)."""

    def __post_init__(self) -> None:
        if type(self.status) is not ProposalStatus:  # a row, or a caller's string
            object.__setattr__(self, "status", ProposalStatus(self.status))

    @property
    def summary(self) -> str:
        """What a change set does, in the agent's words (its first line)."""
        text = self.reasoning.strip()
        return text.splitlines()[0] if text else ""

    def paths(self) -> tuple[str, ...]:
        """Every file the proposal edits or is shown in."""
        found = [self.file_path, *(m.path for m in self.members)]
        if self.anchor_path is not None:
            found.append(self.anchor_path)
        return tuple(dict.fromkeys(found))

    def to_json(self) -> dict[str, Any]:
        """Every field, for events and command results (a change set also
        has its ``summary``).
        """
        data = dataclasses.asdict(self)
        if self.kind == "change_set":
            data["summary"] = self.summary
        return data

    def to_row(self) -> tuple[Any, ...]:
        """The ``proposals`` row (:data:`_COLUMNS`; checks and parts as JSON)."""
        values = [getattr(self, name) for name in _BASE]
        values.append(json.dumps([check.to_json() for check in self.checks]))
        values.append(json.dumps(self._parts()) if self.members else "{}")
        return tuple(values)

    def _parts(self) -> dict[str, Any]:
        return {
            "members": [dataclasses.asdict(m) for m in self.members],
            "depends_on": [list(pair) for pair in self.depends_on],
            "anchor_path": self.anchor_path,
            "accepted_members": (
                list(self.accepted_members)
                if self.accepted_members is not None
                else None
            ),
            "rejected_members": [dataclasses.asdict(m) for m in self.rejected_members],
        }

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> Proposal:
        """A proposal from a ``proposals`` row (:data:`_COLUMNS`); a row
        written before change sets has no parts (``{}``): its kind is what it
        was.
        """
        *fields, checks, parts = row
        loaded = _json(checks, [])
        parsed = (Check.from_json(item) for item in loaded or [])
        extra = _json(parts, {})
        extra = extra if isinstance(extra, dict) else {}
        members = tuple(
            m
            for m in (Member.from_json(item) for item in extra.get("members") or [])
            if m is not None
        )
        accepted = extra.get("accepted_members")
        rejected = tuple(
            m
            for m in (
                Member.from_json(item) for item in extra.get("rejected_members") or []
            )
            if m is not None
        )
        return cls(
            *fields,
            checks=tuple(c for c in parsed if c is not None),
            members=members,
            depends_on=tuple(
                (int(pair[0]), int(pair[1]))
                for pair in extra.get("depends_on") or []
                if isinstance(pair, list) and len(pair) == 2
            ),
            anchor_path=extra.get("anchor_path"),
            accepted_members=tuple(int(i) for i in accepted)
            if isinstance(accepted, list)
            else None,
            rejected_members=rejected,
        )

    def check(self, name: str) -> Check | None:
        """The check called ``name``, if the proposal has one."""
        return next((c for c in self.checks if c.name == name), None)


_BASE = tuple(
    field.name
    for field in dataclasses.fields(Proposal)
    if field.name not in ("checks", *_PARTS)
)
"""The plain columns, in the order of :class:`Proposal`'s fields."""
_COLUMNS = ", ".join((*_BASE, "checks", "parts"))
"""The ``proposals`` columns a proposal is read from and written to."""
_PLACEHOLDERS = ", ".join("?" * (len(_BASE) + 2))
_INSERT = f"INSERT OR REPLACE INTO proposals ({_COLUMNS}) VALUES ({_PLACEHOLDERS})"
_SUPERSEDE = "UPDATE proposals SET status = ?, decided_at = ? WHERE id = ?"


@dataclass(frozen=True, slots=True)
class ProposalSaved:
    """A new proposal and the pending ones it supersedes, as written: in a
    transaction of its own, or in that of its ``rewrite_proposed`` event
    (``EventStore.also_write``).
    """

    row: tuple[Any, ...]
    """The proposal's row (:meth:`Proposal.to_row`)."""
    superseded: tuple[str, ...]
    decided_at: float
    """When the superseded ones were."""

    def write(self, db: sqlite3.Connection) -> None:
        """Insert the proposal, mark the others (in the database thread)."""
        db.execute(_INSERT, self.row)
        db.executemany(
            _SUPERSEDE,
            [(ProposalStatus.SUPERSEDED, self.decided_at, i) for i in self.superseded],
        )


class ProposalStore:
    """Every pending proposal and the recent decided ones, in memory.

    Written through to the database when there is one; memory-only otherwise
    (or when the database has failed: then changes last until the server stops).
    """

    def __init__(self, database: Database | None) -> None:
        self.database = database
        self._by_id: dict[str, Proposal] = {}
        """Proposals in memory: all pending ones, the recent decided ones."""
        self._pending_by_node: dict[str, dict[str, Proposal]] = {}
        self._pending_by_path: dict[str, dict[str, Proposal]] = {}
        self.accepting: dict[str, str] = {}
        """Pending proposal id → digest of the text its accepted edit produces,
        as stored by an earlier process (read by :meth:`load`)."""

    async def load(self) -> None:
        """Read the pending proposals and the :data:`RECENT` latest decided ones."""
        if self.database is None:
            return

        def work(
            db: sqlite3.Connection,
        ) -> tuple[builtins.list[Proposal], dict[str, str]]:
            rows: builtins.list[Any] = []
            pending = (ProposalStatus.PENDING,)
            for query in (
                f"SELECT {_COLUMNS} FROM proposals WHERE status = ?",
                f"SELECT {_COLUMNS} FROM proposals WHERE status != ? "
                f"ORDER BY created_at DESC LIMIT {RECENT}",
            ):
                rows.extend(db.execute(query, pending).fetchall())
            accepting = db.execute(
                "SELECT id, accepting FROM proposals "
                "WHERE status = ? AND accepting IS NOT NULL",
                pending,
            ).fetchall()
            proposals = [Proposal.from_row(tuple(row)) for row in rows]
            return proposals, {key: value for key, value in accepting}

        loaded = await self.database.read(work, "loading proposals")
        proposals, self.accepting = loaded if loaded is not None else ([], {})
        for proposal in proposals:
            self._remember(proposal)

    async def reload(self) -> None:
        """Forget what is in memory and read the store again (a restore)."""
        self._by_id.clear()
        self._pending_by_node.clear()
        self._pending_by_path.clear()
        await self.load()

    async def expect(self, proposal_id: str, digest: str) -> None:
        """Remember, durably, the digest of the text accepting ``proposal_id``
        produces (before the editor is asked to apply it).
        """
        if self.database is None:
            return

        def work(db: sqlite3.Connection) -> None:
            db.execute(
                "UPDATE proposals SET accepting = ? WHERE id = ? AND status = ?",
                (digest, proposal_id, ProposalStatus.PENDING),
            )

        await self.database.transaction(work, "recording an acceptance under way")

    async def add(
        self,
        proposal: Proposal,
        *,
        write: Callable[[ProposalSaved], None] | None = None,
        replaces: Iterable[str] = (),
    ) -> builtins.list[str]:
        """Keep ``proposal``; the ids of the pending ones of its node it supersedes.

        A rewrite supersedes the node's pending rewrite; a new node supersedes a
        pending new node of the same name from the same agent. A rewrite and a
        new helper it calls are both kept: they belong together.

        ``write``, when given, takes what is saved instead of a transaction
        of its own (the event log's ``also_write``: the proposal is then stored
        in the same transaction as its ``rewrite_proposed`` event).
        ``replaces``: pending proposals it supersedes too (those a cascade's
        change set gathers).
        """
        superseded: builtins.list[Proposal] = []
        now = time.time()
        gathered = set(replaces)
        if proposal.status == ProposalStatus.PENDING:
            candidates = {p.id: p for p in self.pending(node_id=proposal.node_id)}
            for other in gathered:
                found = self._by_id.get(other)
                if found is not None and found.status == ProposalStatus.PENDING:
                    candidates[other] = found
            for old in candidates.values():
                if old.id != proposal.id and (
                    old.id in gathered or _replaces(proposal, old)
                ):
                    superseded.append(
                        dataclasses.replace(
                            old, status=ProposalStatus.SUPERSEDED, decided_at=now
                        )
                    )
        for changed in (*superseded, proposal):
            self._remember(changed)
        self._forget_old()
        ids = [p.id for p in superseded]
        saved = ProposalSaved(proposal.to_row(), tuple(ids), now)
        if write is not None:
            write(saved)
        elif self.database is not None:
            await self.database.transaction(saved.write, "saving a proposal")
        return ids

    def get(self, proposal_id: str) -> Proposal | None:
        """A proposal by id (None if unknown or long decided)."""
        return self._by_id.get(proposal_id)

    async def fetch(self, proposal_id: str) -> Proposal | None:
        """A proposal by id, from the store when memory no longer holds it."""
        found = self._by_id.get(proposal_id)
        if found is not None or self.database is None:
            return found

        def work(db: sqlite3.Connection) -> Proposal | None:
            row = db.execute(
                f"SELECT {_COLUMNS} FROM proposals WHERE id = ?", (proposal_id,)
            ).fetchone()
            return Proposal.from_row(tuple(row)) if row else None

        return await self.database.read(work, "reading a proposal")

    def pending(
        self, *, node_id: str | None = None, path: str | None = None
    ) -> builtins.list[Proposal]:
        """Pending proposals, oldest first, of one node and/or one file (cheap)."""
        found: Iterable[Proposal]
        if node_id is not None:
            found = self._pending_by_node.get(node_id, {}).values()
            if path is not None:
                found = [p for p in found if path in p.paths()]
        elif path is not None:
            found = self._pending_by_path.get(path, {}).values()
        else:
            found = [
                p for p in self._by_id.values() if p.status == ProposalStatus.PENDING
            ]
        return sorted(found, key=lambda p: p.created_at)

    async def decide(
        self,
        proposal_id: str,
        status: ProposalStatus,
        feedback: str | None = None,
        *,
        members: tuple[int, ...] | None = None,
    ) -> Proposal:
        """Mark a pending proposal accepted, rejected or stale; the updated
        proposal (``members``: the part of a change set that was accepted).
        """
        if status not in DECISIONS:
            raise ProposalError(
                f"a proposal can be decided as {', '.join(DECISIONS)}, "
                f"not {str(status)!r}"
            )
        current = self._by_id.get(proposal_id)
        if current is None:
            raise ProposalError(f"there is no proposal {proposal_id}")
        if current.status != ProposalStatus.PENDING:
            raise ProposalError(f"proposal {proposal_id} is already {current.status}")
        decided = dataclasses.replace(
            current,
            status=status,
            feedback=feedback,
            decided_at=time.time(),
            accepted_members=members,
        )
        self._remember(decided)
        if self.database is not None:
            parts = decided.to_row()[-1]

            def work(db: sqlite3.Connection) -> None:
                db.execute(
                    "UPDATE proposals SET status = ?, feedback = ?, decided_at = ?, "
                    "parts = ? WHERE id = ?",
                    (status, feedback, decided.decided_at, parts, proposal_id),
                )

            await self.database.transaction(work, "recording a decision")
        return decided

    async def replace_members(self, updated: Proposal) -> Proposal:
        """Keep ``updated`` — a pending set with fewer members (some were
        rejected) — in place of the stored one; ProposalError if that is no
        longer pending.
        """
        current = self._by_id.get(updated.id)
        if current is None or current.status != ProposalStatus.PENDING:
            state = "gone" if current is None else current.status
            raise ProposalError(f"proposal {updated.id} is already {state}")
        self._remember(updated)
        if self.database is not None:
            row = updated.to_row()
            values = dict(zip((*_BASE, "checks", "parts"), row, strict=True))

            def work(db: sqlite3.Connection) -> None:
                db.execute(
                    "UPDATE proposals SET file_path = ?, base_hash = ?, diff = ?, "
                    "checks = ?, parts = ?, accepting = NULL WHERE id = ?",
                    (
                        values["file_path"],
                        values["base_hash"],
                        values["diff"],
                        values["checks"],
                        values["parts"],
                        updated.id,
                    ),
                )

            await self.database.transaction(work, "rejecting members of a set")
        return updated

    async def set_check(self, proposal_id: str, check: Check) -> Proposal | None:
        """Put ``check`` on a pending proposal (replacing its check of the same
        name); the updated proposal, or None if it is no longer pending.
        """
        current = self._by_id.get(proposal_id)
        if current is None or current.status != ProposalStatus.PENDING:
            return None
        others = tuple(c for c in current.checks if c.name != check.name)
        updated = dataclasses.replace(current, checks=(*others, check))
        self._remember(updated)
        if self.database is not None:
            body = updated.to_row()[-2]

            def work(db: sqlite3.Connection) -> None:
                db.execute(
                    "UPDATE proposals SET checks = ? WHERE id = ?", (body, proposal_id)
                )

            await self.database.transaction(work, "recording a proposal's check")
        return updated

    async def move_file(self, old: str, new: str) -> None:
        """Follow a renamed file (or folder: paths under ``old/`` move too)."""
        prefix = old.rstrip("/") + "/"

        def moved(path: str) -> str | None:
            if path == old:
                return new
            if path.startswith(prefix):
                return new.rstrip("/") + "/" + path[len(prefix) :]
            return None

        for proposal in builtins.list(self._by_id.values()):
            target = moved(proposal.file_path)
            if target is not None:
                self._remember(dataclasses.replace(proposal, file_path=target))
        if self.database is None:
            return

        def work(db: sqlite3.Connection) -> None:
            db.execute(
                "UPDATE proposals SET file_path = ? WHERE file_path = ?", (new, old)
            )
            db.execute(
                "UPDATE proposals SET file_path = ? || substr(file_path, ?) "
                "WHERE substr(file_path, 1, ?) = ?",
                (new.rstrip("/") + "/", len(prefix) + 1, len(prefix), prefix),
            )

        await self.database.transaction(work, "moving proposals to a renamed file")

    def list(
        self, *, path: str | None = None, status: ProposalStatus | None = None
    ) -> builtins.list[Proposal]:
        """Proposals in memory, newest first, optionally of one file and status."""
        found = [
            p
            for p in self._by_id.values()
            if (path is None or path in p.paths())
            and (status is None or p.status == status)
        ]
        return sorted(found, key=lambda p: p.created_at, reverse=True)

    def _remember(self, proposal: Proposal) -> None:
        """Put ``proposal`` in memory, replacing its previous state in every index."""
        previous = self._by_id.get(proposal.id)
        if previous is not None:
            _discard(self._pending_by_node, previous.node_id, previous.id)
            for path in previous.paths():
                _discard(self._pending_by_path, path, previous.id)
        self._by_id[proposal.id] = proposal
        if proposal.status == ProposalStatus.PENDING:
            self._pending_by_node.setdefault(proposal.node_id, {})[proposal.id] = (
                proposal
            )
            for path in proposal.paths():  # a set shows in each of its files
                self._pending_by_path.setdefault(path, {})[proposal.id] = proposal

    def _forget_old(self) -> None:
        """Drop decided proposals beyond twice :data:`RECENT` from memory."""
        decided = [
            p for p in self._by_id.values() if p.status != ProposalStatus.PENDING
        ]
        if len(decided) <= 2 * RECENT:
            return
        decided.sort(key=lambda p: p.created_at, reverse=True)
        for proposal in decided[RECENT:]:
            del self._by_id[proposal.id]


_DEFINED = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", re.M)


def _replaces(new: Proposal, old: Proposal) -> bool:
    """Whether ``new`` makes the pending ``old`` (same node) pointless."""
    if new.kind != old.kind or new.kind in ("revert", "change_set"):
        return False  # two reverts (or sets) are two requests: both stay
    if new.kind == "new_file":
        return new.file_path == old.file_path
    if new.kind != "new_node":
        return True
    names = [_DEFINED.search(p.new_source) for p in (new, old)]
    return (
        names[0] is not None
        and names[1] is not None
        and (names[0].group(1) == names[1].group(1))
    )


def _discard(index: dict[str, dict[str, Proposal]], key: str, proposal_id: str) -> None:
    """Remove a proposal from one index, and its key once empty."""
    entries = index.get(key)
    if entries is not None:
        entries.pop(proposal_id, None)
        if not entries:
            del index[key]


def text_hash(text: str | bytes) -> str:
    """sha256 of a text (UTF-8), as proposals record their base."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()
