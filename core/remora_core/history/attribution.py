"""Which lines of a file came from which agent (DESIGN §10, attribution).

Every accepted proposal is already recorded in ``proposals``: its agent (the
node that proposed it), node, file, old and new source, and when it was
accepted (``decided_at``). The lines it *wrote* are those of its new source
that its old source did not have (a line-level diff). :func:`attribute` finds
which of those lines the current text still holds — each accepted proposal's
new source is matched line by line against the text (``difflib``), so a line
edited since no longer counts, and a later proposal's lines win over an
earlier one's.

Every accepted proposal of the file counts, however many there are (no cap
that could silently drop a line a person expects to see attributed). They are
read newest first, a page at a time, and a line belongs to the first proposal
that claims it — the same as "later ones win" — so the cost stays small:

- a proposal none of whose written lines is among the text's still unclaimed
  lines (compared as strings, a set lookup each) is passed over without
  matching it against the text — a line it could claim has that content;
- reading stops once every non-blank line of the text is claimed.

Only a proposal that could still claim a line pays for a match against the
whole text.

:func:`trailers` gives ``Remora-Agent: rm_… (pr_…)`` commit trailers for the
accepted proposals whose lines are in the working text but not in ``HEAD``
(not yet committed), for a person or a ``prepare-commit-msg`` hook. Each file
with accepted proposals is compared with its text at ``HEAD`` (read through
:mod:`remora_core.safe_git`); a file the same as at ``HEAD`` is skipped, and
without git (or before the first commit) ``HEAD`` holds nothing.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any

from remora_core import safe_git
from remora_core.model import ProposalStatus

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import AsyncIterator, Callable
    from pathlib import Path

    from remora_core.store.database import Database

log = logging.getLogger(__name__)

PAGE = 200
"""Accepted proposals read from the store at a time (newest first)."""


@dataclass(frozen=True)
class Accepted:
    """An accepted proposal, as attribution needs it."""

    proposal_id: str
    agent_id: str
    file_path: str
    old_source: str
    new_source: str
    accepted_at: float


@dataclass(frozen=True)
class Attributed:
    """Lines ``start_line``..``end_line`` (0-based, inclusive) of the text."""

    start_line: int
    end_line: int
    agent_id: str
    proposal_id: str
    accepted_at: float

    def to_json(self) -> dict[str, Any]:
        """The fields, for commands."""
        return {
            "start_line": self.start_line,
            "end_line": self.end_line,
            "agent_id": self.agent_id,
            "proposal_id": self.proposal_id,
            "accepted_at": self.accepted_at,
        }


async def newest_first(
    database: Database | None, path: str
) -> AsyncIterator[list[Accepted]]:
    """Every accepted proposal of ``path``, newest first, a page at a time."""
    if database is None:
        return

    def order(db: sqlite3.Connection) -> list[int]:
        # Only the keys are sorted (a few bytes a proposal); the sources are
        # read a page at a time, by rowid.
        # A change set's edits are its members (``parts``): its rows are
        # those whose JSON names the path, checked exactly when read.
        rows = db.execute(
            "SELECT rowid FROM proposals WHERE status = ? AND (file_path = ? "
            "OR (kind = 'change_set' AND instr(parts, ?) > 0)) "
            "ORDER BY COALESCE(decided_at, 0) DESC, rowid DESC",
            (ProposalStatus.ACCEPTED, path, json.dumps(path)),
        )
        return [row[0] for row in rows]

    rowids = await database.read(order, "reading accepted proposals") or []
    for at in range(0, len(rowids), PAGE):
        page = rowids[at : at + PAGE]

        def work(db: sqlite3.Connection, page=page) -> list[Accepted]:
            marks = ", ".join("?" * len(page))
            found: dict[int, list[Accepted]] = {}
            for row in db.execute(
                "SELECT rowid, id, node_id, file_path, old_source, new_source, "
                "COALESCE(decided_at, 0), kind, parts FROM proposals "
                f"WHERE rowid IN ({marks})",
                page,
            ):
                *fields, kind, parts = row[1:]
                found[row[0]] = (
                    _members_in(path, fields, parts)
                    if kind == "change_set"
                    else [Accepted(*fields)]
                )
            return [a for rowid in page for a in found.get(rowid, [])]

        yield await database.read(work, "reading accepted proposals") or []


def _members_in(path: str, fields: list[Any], parts: str) -> list[Accepted]:
    """The accepted members of a change set that edited ``path``."""
    try:
        loaded = json.loads(parts or "{}")
    except ValueError:
        return []
    chosen = loaded.get("accepted_members") if isinstance(loaded, dict) else None
    members = loaded.get("members") if isinstance(loaded, dict) else None
    proposal_id, agent_id, _file, _old, _new, accepted_at = fields
    return [
        Accepted(
            proposal_id,
            agent_id,
            path,
            str(member.get("old_source") or ""),
            str(member.get("new_source") or ""),
            accepted_at,
        )
        for index, member in enumerate(members or [])
        if isinstance(member, dict)
        and member.get("path") == path
        and (chosen is None or index in chosen)
    ]


def written(proposal: Accepted) -> list[tuple[int, str]]:
    """(index in the new source, line) of each line the proposal wrote."""
    old = proposal.old_source.splitlines()
    new = proposal.new_source.splitlines()
    kept: set[int] = set()
    for block in SequenceMatcher(None, old, new, autojunk=False).get_matching_blocks():
        kept.update(range(block.b, block.b + block.size))
    return [(i, line) for i, line in enumerate(new) if i not in kept and line.strip()]


class LineOwners:
    """Which accepted proposal wrote each line of one text.

    Offer proposals newest first (:meth:`offer`); a line goes to the first
    proposal that claims it.
    """

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.owners: dict[int, Accepted] = {}
        """Line number of the text → the proposal that wrote it."""
        self._open: dict[str, set[int]] = {}
        """A line's content → the numbers of its lines no proposal claimed yet."""
        for number, line in enumerate(self.lines):
            if line.strip():  # a proposal never claims a blank line
                self._open.setdefault(line, set()).add(number)

    @property
    def complete(self) -> bool:
        """Every line a proposal could claim is claimed: older ones cannot."""
        return not self._open

    def offer(self, proposal: Accepted) -> None:
        """Give the lines of the text ``proposal`` wrote and no newer one did."""
        mine = dict(written(proposal))
        if not any(line in self._open for line in mine.values()):
            return  # nothing it wrote is an unclaimed line: no match needed
        new = proposal.new_source.splitlines()
        matcher = SequenceMatcher(None, self.lines, new, autojunk=False)
        for block in matcher.get_matching_blocks():
            for offset in range(block.size):
                number = block.a + offset
                if block.b + offset in mine and number not in self.owners:
                    self.owners[number] = proposal
                    self._claimed(number)

    def offer_all(self, proposals: list[Accepted]) -> None:
        """Offer ``proposals`` (newest first) until the text is complete."""
        for proposal in proposals:
            if self.complete:
                return
            self.offer(proposal)

    def _claimed(self, number: int) -> None:
        line = self.lines[number]
        left = self._open.get(line)
        if left is not None:
            left.discard(number)
            if not left:
                del self._open[line]


def line_owners(text: str, accepted: list[Accepted]) -> dict[int, Accepted]:
    """Line number of ``text`` → the accepted proposal that wrote it
    (``accepted`` oldest first: later ones win).
    """
    owners = LineOwners(text)
    owners.offer_all(list(reversed(accepted)))
    return owners.owners


async def owners_in(
    database: Database | None, path: str, texts: list[str]
) -> list[dict[int, Accepted]]:
    """:func:`line_owners` of each of ``texts`` (versions of ``path``), from
    every accepted proposal of ``path`` in the store.
    """
    found = [LineOwners(text) for text in texts]
    async for page in newest_first(database, path):
        waiting = [owners for owners in found if not owners.complete]
        if not waiting:
            break
        # Matching is CPU work: off the event loop.
        await asyncio.to_thread(
            lambda page=page, waiting=waiting: [o.offer_all(page) for o in waiting]
        )
    return [owners.owners for owners in found]


def attribute_owners(owners: dict[int, Accepted]) -> list[Attributed]:
    """Runs of lines with the same owner, in text order."""
    ranges: list[Attributed] = []
    for line in sorted(owners):
        proposal = owners[line]
        last = ranges[-1] if ranges else None
        if (
            last
            and last.end_line == line - 1
            and last.proposal_id == proposal.proposal_id
        ):
            ranges[-1] = Attributed(
                last.start_line, line, last.agent_id, last.proposal_id, last.accepted_at
            )
        else:
            ranges.append(
                Attributed(
                    line,
                    line,
                    proposal.agent_id,
                    proposal.proposal_id,
                    proposal.accepted_at,
                )
            )
    return ranges


def attribute(text: str, accepted: list[Accepted]) -> list[Attributed]:
    """Ranges of ``text`` still written by ``accepted`` (oldest first), in text
    order.
    """
    return attribute_owners(line_owners(text, accepted))


async def attribution_json(
    database: Database | None, path: str, text: bytes
) -> list[dict[str, Any]]:
    """``remora.attribution``'s answer for ``path`` holding ``text``: line
    ranges (end exclusive, at column 0) with the proposal that wrote them.
    """
    [owners] = await owners_in(database, path, [text.decode("utf-8", errors="replace")])
    return [
        {
            "range": {
                "start": {"line": found.start_line, "character": 0},
                "end": {"line": found.end_line + 1, "character": 0},
            },
            "agent_id": found.agent_id,
            "proposal_id": found.proposal_id,
            "accepted_at": found.accepted_at,
        }
        for found in attribute_owners(owners)
    ]


def head_texts(root: Path, paths: list[str]) -> dict[str, str]:
    """The text each of ``paths`` (project paths) has in ``HEAD``; a path
    missing there, or every path without git or before the first commit, is
    left out. One ``git cat-file --batch`` for all of them.
    """
    asked = [p for p in paths if "\n" not in p]
    if not asked:
        return {}
    # ``HEAD:./path`` is relative to the project folder, which need not be the
    # repository's top.
    given = "".join(f"HEAD:./{p}\n" for p in asked).encode()
    # Read, never obeyed: a partial clone's missing blob is not fetched (the
    # file then counts as not in HEAD), and no command of the repository runs.
    done = safe_git.run(root, ["cat-file", "--batch"], given=given)
    if done is None or done.returncode != 0:
        return {}
    found: dict[str, str] = {}
    out, at = done.stdout, 0
    for path in asked:
        end = out.find(b"\n", at)
        if end < 0:
            break
        header = out[at:end].split()
        at = end + 1
        if len(header) != 3 or not header[2].isdigit():
            continue  # "<name> missing" (or ambiguous): not in HEAD
        size = int(header[2])
        if header[1] == b"blob":
            found[path] = out[at : at + size].decode("utf-8", errors="replace")
        at += size + 1  # the contents, then a newline
    return found


async def attributed_paths(database: Database | None) -> list[str]:
    """Every file with accepted proposals."""
    if database is None:
        return []

    def work(db: sqlite3.Connection) -> list[str]:
        rows = db.execute(
            "SELECT DISTINCT file_path FROM proposals WHERE status = ? "
            "ORDER BY file_path",
            (ProposalStatus.ACCEPTED,),
        )
        paths = {row[0] for row in rows}
        sets = db.execute(  # a change set's files are its members'
            "SELECT parts FROM proposals WHERE status = ? AND kind = 'change_set'",
            (ProposalStatus.ACCEPTED,),
        )
        for (parts,) in sets:
            try:
                members = json.loads(parts or "{}").get("members") or []
            except (ValueError, AttributeError):
                continue
            paths |= {m["path"] for m in members if isinstance(m, dict) and "path" in m}
        return sorted(paths)

    return await database.read(work, "reading accepted proposals") or []


async def trailers(
    root: Path,
    database: Database | None,
    read_text: Callable[[str], bytes | None],
) -> list[str]:
    """``Remora-Agent: rm_… (pr_…)`` for accepted proposals whose lines the
    working text holds and ``HEAD`` does not (not yet committed).
    """
    paths = await attributed_paths(database)
    heads = await asyncio.to_thread(head_texts, root, paths)
    found: dict[str, str] = {}
    for path in paths:
        current = read_text(path)
        if current is None:
            continue
        text = current.decode("utf-8", errors="replace")
        head = heads.get(path, "")
        if text == head:
            continue  # everything in it is committed
        working, committed = await owners_in(database, path, [text, head])
        done = {proposal.proposal_id for proposal in committed.values()}
        for proposal in working.values():
            if proposal.proposal_id not in done:
                found[proposal.proposal_id] = proposal.agent_id
    return [f"Remora-Agent: {agent} ({pid})" for pid, agent in sorted(found.items())]
