"""Which lines of a file came from which agent (DESIGN §10, attribution).

Every accepted proposal is already recorded in ``proposals``: its agent (the
node that proposed it), node, file, old and new source, and when it was
accepted (``decided_at``). The lines it *wrote* are those of its new source
that its old source did not have (a line-level diff). :func:`attribute` finds
which of those lines the current text still holds — each accepted proposal's
new source is matched line by line against the text (``difflib``), so a line
edited since no longer counts, and a later proposal's lines win over an
earlier one's.

:func:`trailers` gives ``Remora-Agent: rm_… (pr_…)`` commit trailers for the
accepted proposals whose lines are in the working text but not in ``HEAD``
(not yet committed), for a person or a ``prepare-commit-msg`` hook.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path

    from remora_core.store.database import Database

log = logging.getLogger(__name__)

MAX_ACCEPTED = 500
"""Accepted proposals of one file considered (the newest)."""


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


async def accepted_in(database: Database | None, path: str | None) -> list[Accepted]:
    """Accepted proposals (of ``path``, or all), oldest first."""
    if database is None:
        return []
    where = "status = 'accepted'" + (" AND file_path = ?" if path else "")

    def work(db: sqlite3.Connection) -> list[Accepted]:
        rows = db.execute(
            "SELECT id, node_id, file_path, old_source, new_source, decided_at "
            f"FROM proposals WHERE {where} ORDER BY decided_at DESC LIMIT ?",
            (*([path] if path else []), MAX_ACCEPTED),
        ).fetchall()
        return [Accepted(*row) for row in reversed(rows)]

    found = await database.read(work, "reading accepted proposals")
    return found or []


def written(proposal: Accepted) -> list[tuple[int, str]]:
    """(index in the new source, line) of each line the proposal wrote."""
    old = proposal.old_source.splitlines()
    new = proposal.new_source.splitlines()
    kept: set[int] = set()
    for block in SequenceMatcher(None, old, new, autojunk=False).get_matching_blocks():
        kept.update(range(block.b, block.b + block.size))
    return [(i, line) for i, line in enumerate(new) if i not in kept and line.strip()]


def line_owners(text: str, accepted: list[Accepted]) -> dict[int, Accepted]:
    """Line number of ``text`` → the accepted proposal that wrote it."""
    lines = text.splitlines()
    owners: dict[int, Accepted] = {}
    for proposal in accepted:  # oldest first: later ones win
        mine = dict(written(proposal))
        if not mine:
            continue
        new = proposal.new_source.splitlines()
        matcher = SequenceMatcher(None, lines, new, autojunk=False)
        for block in matcher.get_matching_blocks():
            for offset in range(block.size):
                if block.b + offset in mine:
                    owners[block.a + offset] = proposal
    return owners


def attribute(text: str, accepted: list[Accepted]) -> list[Attributed]:
    """Ranges of ``text`` still written by accepted proposals, in text order."""
    owners = line_owners(text, accepted)
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


async def attribution_json(
    database: Database | None, path: str, text: bytes
) -> list[dict[str, Any]]:
    """``remora.attribution``'s answer for ``path`` holding ``text``: line
    ranges (end exclusive, at column 0) with the proposal that wrote them.
    """
    accepted = await accepted_in(database, path)
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
        for found in attribute(text.decode("utf-8", errors="replace"), accepted)
    ]


def _git_text(root: Path, revision: str, path: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "show", f"{revision}:{path}"],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", errors="replace")


async def trailers(root: Path, database: Database | None, read_text: Any) -> list[str]:
    """``Remora-Agent: rm_… (pr_…)`` for accepted proposals whose lines the
    working text holds and ``HEAD`` does not (not yet committed).
    """
    accepted = await accepted_in(database, None)
    by_path: dict[str, list[Accepted]] = {}
    for proposal in accepted:
        by_path.setdefault(proposal.file_path, []).append(proposal)
    found: dict[str, str] = {}
    for path, proposals in by_path.items():
        current = read_text(path)
        if current is None:
            continue
        text = current.decode("utf-8", errors="replace")
        head = await asyncio.to_thread(_git_text, root, "HEAD", path)
        committed = {p.proposal_id for p in line_owners(head or "", proposals).values()}
        for proposal in line_owners(text, proposals).values():
            if proposal.proposal_id not in committed:
                found[proposal.proposal_id] = proposal.agent_id
    return [f"Remora-Agent: {agent} ({pid})" for pid, agent in sorted(found.items())]
