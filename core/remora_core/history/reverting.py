"""Undoing an accepted proposal in a file's current text (DESIGN §15, revert).

An accepted proposal replaced ``old_source`` by ``new_source`` somewhere in its
file; the file may have changed since. :func:`revert_in` gives the current
text with that replacement undone, and the parts it refuses:

- When the file still holds ``new_source`` whole (nothing was edited inside
  it since), the occurrence nearest to where the proposal put it is replaced
  by ``old_source``: exactly what it replaced comes back, and every later edit
  around it stays.
- When it holds ``old_source`` instead, it is undone already: nothing to do.
- Otherwise the undo is done line by line, a three-way merge: the lines the
  proposal changed (a line diff of its new source against its old one) are
  found in the current text (a line diff of the text against the new source);
  each changed run of lines that is still there, untouched and in one piece,
  gets its old lines back; a run a later edit touched is left as it is and
  *refused*, naming its lines in the current text — never overwritten.
  Lines the proposal did not change keep whatever was done to them since.

A proposal's sources start and end mid-line (a method's first line has no
indentation, an inserted definition starts with the line break after its
anchor): the first and last lines of the new source are matched by suffix and
prefix, and the text around them is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from remora_core.review.diffs import split_lines

_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Refused:
    """Lines ``first_line``..``last_line`` (1-based, inclusive) of the current
    text that a revert leaves as they are: a later edit touched what the
    proposal wrote there.
    """

    proposal_id: str
    path: str
    first_line: int
    last_line: int
    reason: str

    def to_json(self) -> dict[str, object]:
        """The fields, for command answers."""
        return {
            "proposal_id": self.proposal_id,
            "path": self.path,
            "first_line": self.first_line,
            "last_line": self.last_line,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Undone:
    """The text with a proposal undone (as far as it could be) and what was refused."""

    text: str
    refused: list[Refused]


def revert_in(
    text: str,
    old_source: str,
    new_source: str,
    *,
    near: int,
    proposal_id: str,
    path: str,
) -> Undone:
    """``text`` with ``new_source`` put back to ``old_source`` (``near``: the
    character offset where the proposal put it, to choose between copies).
    """
    whole = _nearest(text, new_source, near)
    if whole is not None:
        return Undone(text[:whole] + old_source + text[whole + len(new_source) :], [])
    if old_source.strip() and old_source in text:
        return Undone(text, [])  # undone already (by hand, or an earlier revert)
    return _merge(text, old_source, new_source, proposal_id, path)


def _nearest(text: str, needle: str, near: int) -> int | None:
    """The offset of the copy of ``needle`` in ``text`` nearest to ``near``."""
    if not needle:
        return None
    best: int | None = None
    at = text.find(needle)
    while at >= 0:
        if best is None or abs(at - near) < abs(best - near):
            best = at
        at = text.find(needle, at + 1)
    return best


def _merge(
    text: str, old_source: str, new_source: str, proposal_id: str, path: str
) -> Undone:
    lines = split_lines(text)
    bare = [line.rstrip("\r\n") for line in lines]
    news = _BREAK.split(new_source)
    olds = _BREAK.split(old_source)
    where = _placed(bare, news)

    def refuse(i1: int, i2: int, why: str) -> Refused:
        first, last = _around(where, i1, i2, len(bare))
        return Refused(proposal_id, path, first + 1, max(first, last) + 1, why)

    if not where:
        why = f"nothing {proposal_id} wrote is left in {path}"
        return Undone(text, [Refused(proposal_id, path, 1, max(1, len(bare)), why)])
    newline = next(
        (line[len(b) :] for line, b in zip(lines, bare, strict=True) if line != b), "\n"
    )
    edits: list[tuple[int, int, list[str]]] = []
    refused: list[Refused] = []
    for i1, i2, j1, j2 in _hunks(news, olds):
        span = _span(where, i1, i2)
        replacement = (
            None if span is None else _fitted(bare, span, news, olds, i1, i2, j1, j2)
        )
        if span is None or replacement is None:
            refused.append(
                refuse(
                    i1,
                    i2,
                    f"edited after {proposal_id} was accepted; "
                    "revert these lines by hand",
                )
            )
            continue
        edits.append((span[0], span[1], replacement))
    out = list(lines)
    for start, end, replacement in sorted(edits, reverse=True):
        ending = lines[end - 1][len(bare[end - 1]) :] if end > start else newline
        written = [line + newline for line in replacement]
        if written:
            written[-1] = replacement[-1] + ending
        out[start:end] = written
    return Undone("".join(out), refused)


def _placed(bare: list[str], news: list[str]) -> dict[int, int]:
    """Line of the new source → the line of the text that still holds it."""
    where: dict[int, int] = {}
    matcher = SequenceMatcher(None, bare, news, autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            where[block.b + k] = block.a + k
    taken = set(where.values())
    last = len(news) - 1
    # The first and last lines are partial: matched by suffix and prefix.
    if 0 not in where and 1 in where:
        line = where[1] - 1
        if line >= 0 and line not in taken and bare[line].endswith(news[0]):
            where[0] = line
    if last > 0 and last not in where and last - 1 in where:
        line = where[last - 1] + 1
        if line < len(bare) and line not in taken and bare[line].startswith(news[last]):
            where[last] = line
    return where


def _hunks(news: list[str], olds: list[str]) -> list[tuple[int, int, int, int]]:
    """Runs of new lines to put back to old ones: ``(i1, i2, j1, j2)``, an
    insertion widened by the line before it (or after, at the start) so every
    run replaces at least one line the text can be checked to hold.
    """
    found = []
    matcher = SequenceMatcher(None, news, olds, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i1 == i2:  # the proposal removed lines: put them back beside one
            if i1 > 0:
                i1, j1 = i1 - 1, j1 - 1
            else:
                i2, j2 = i2 + 1, j2 + 1
        found.append((i1, i2, j1, j2))
    return found


def _span(where: dict[int, int], i1: int, i2: int) -> tuple[int, int] | None:
    """The lines of the text holding new lines ``i1``..``i2`` in one piece."""
    if i1 not in where:
        return None
    start = where[i1]
    if any(where.get(k) != start + k - i1 for k in range(i1, i2)):
        return None
    return start, start + (i2 - i1)


def _fitted(
    bare: list[str],
    span: tuple[int, int],
    news: list[str],
    olds: list[str],
    i1: int,
    i2: int,
    j1: int,
    j2: int,
) -> list[str] | None:
    """The old lines for ``span``, with the text before the first new line and
    after the last one kept (None if the text does not hold them there).
    """
    start, end = span
    replacement = olds[j1:j2]
    before = after = ""
    if i1 == 0:
        first = bare[start]
        if not first.endswith(news[0]):
            return None
        before = first[: len(first) - len(news[0])]
    if i2 == len(news):
        last = bare[end - 1]
        if end - 1 == start and i1 == 0:
            last = last[len(before) :]
        if not last.startswith(news[-1]):
            return None
        after = last[len(news[-1]) :]
    if not replacement and (before or after):
        return [before + after]
    if replacement:
        replacement = [before + replacement[0], *replacement[1:]]
        replacement[-1] += after
    return replacement


def _around(where: dict[int, int], i1: int, i2: int, count: int) -> tuple[int, int]:
    """The lines (0-based) of the text between the nearest new lines before
    ``i1`` and from ``i2`` on that it still holds: where run ``i1..i2`` was.
    """
    below = [where[k] for k in where if k < i1]
    above = [where[k] for k in where if k >= i2]
    inside = [where[k] for k in where if i1 <= k < i2]
    first = max(below) + 1 if below else (min(inside) if inside else 0)
    last = min(above) - 1 if above else (max(inside) if inside else count - 1)
    if inside:
        first, last = min(first, *inside), max(last, *inside)
    return first, last
