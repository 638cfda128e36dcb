"""Re-parsing only the top-level statements an edit touched.

Tree-sitter's incremental parse is fast for most edits, but not everywhere: a
trailing comment added at the end of a class near the top of ``_pydecimal.py``
costs ~28 ms, because the Python grammar's indentation scanner cannot reuse the
subtrees after it, while the same edit in the middle of the file costs ~1 ms.
The cost should not depend on where the person types, so while typing (no
references wanted) an open document re-parses only a *chunk*: the top-level
statements overlapping the edit, one more on each side, parsed alone with
tree-sitter's ``included_ranges`` (so every position stays absolute).

The chunk's definitions are spliced between the previous definitions before it
(unchanged) and after it (shifted by the edit's byte and line deltas). This is
exact when:

- the previous text parsed without any error, and the chunk parses without any
  error (error recovery looks beyond statement boundaries, so any error falls
  back to a whole-file parse);
- the chunk begins and ends where top-level statements other than comments
  begin at column 0 (the one after it unchanged), so nothing after it can belong
  to a statement of the chunk — tree-sitter also accepts *indented* top-level
  statements without an error (what a stray dedent in a class body leaves), and
  an indented line after a comment at column 0 continues the block before the
  comment; both widen the chunk.

Anything else — no previous state, an error, a chunk larger than
``1 / CHUNK_SHARE`` of the file (a class of half the file is parsed faster
incrementally) — returns None and the caller parses the whole file.
``tests/core/test_incremental.py`` compares the result with a whole-file parse
over thousands of random edit sequences, top and bottom of the file included.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import TYPE_CHECKING

import tree_sitter

from remora_core.discovery.definitions import _Extractor
from remora_core.discovery.incremental import DirtyRange, Previous, moved
from remora_core.discovery.parser import parse_range

if TYPE_CHECKING:
    from remora_core.text import LineIndex

CHUNK_SHARE = 4
"""A chunk is parsed alone only when it is at most this fraction of the file."""


@dataclass(slots=True)
class Statements:
    """Byte ranges of the top-level statements (comments included) of one text,
    and whether that text parsed without any syntax error.
    """

    starts: list[int]
    ends: list[int]
    error_free: bool

    @classmethod
    def of(cls, root: tree_sitter.Node) -> Statements:
        """The statements of a whole-file parse."""
        children = root.children
        return cls(
            [child.start_byte for child in children],
            [child.end_byte for child in children],
            not root.has_error,
        )

    def replaced(
        self, low: int, high: int, children: list[tree_sitter.Node], delta: int
    ) -> Statements:
        """These statements with ``low..high`` replaced by a chunk's ``children``
        and the ones after moved by ``delta`` bytes.
        """
        return Statements(
            [
                *self.starts[:low],
                *(child.start_byte for child in children),
                *(start + delta for start in self.starts[high + 1 :]),
            ],
            [
                *self.ends[:low],
                *(child.end_byte for child in children),
                *(end + delta for end in self.ends[high + 1 :]),
            ],
            True,
        )


@dataclass(slots=True)
class Reparsed:
    """What a chunk re-parse gives: the definitions of the whole new text and
    its top-level statements.
    """

    previous: Previous
    statements: Statements


def reparse_chunk(
    text: bytes,
    lines: LineIndex,
    statements: Statements,
    previous: Previous,
    dirty: DirtyRange,
    *,
    read_inline_ids: bool,
) -> Reparsed | None:
    """Definitions of ``text`` after the ``dirty`` edit, from a chunk parse; None
    when that would not be exact or not worth it (see the module docstring).
    """
    starts, ends = statements.starts, statements.ends
    count = len(starts)
    if not statements.error_free or not count:
        return None
    old_dirty_end = dirty.end - dirty.delta
    # Statements touching the edit (old coordinates), widened by one each side.
    first = bisect_left(ends, dirty.start)
    last = bisect_right(starts, old_dirty_end) - 1
    low = max(min(first, last) - 1, 0)
    high = min(max(first, last) + 1, count - 1)
    # Tree-sitter tolerates indented top-level statements (a stray dedent in a
    # class body leaves its methods at the top level, without an error): a
    # chunk must begin and end at statements that start a line.
    while low > 0 and not _boundary(text, starts[low]):
        low -= 1
    while high + 1 < count and not _boundary(text, starts[high + 1] + dirty.delta):
        high += 1
    chunk_start = 0 if low == 0 else starts[low]
    old_chunk_end = starts[high + 1] if high + 1 < count else len(text) - dirty.delta
    chunk_end = old_chunk_end + dirty.delta
    if chunk_end < chunk_start or (chunk_end - chunk_start) * CHUNK_SHARE > len(text):
        return None
    root = parse_range(text, chunk_start, chunk_end, lines).root_node
    if root.has_error:
        return None
    children = root.children
    if children and (
        children[0].start_byte < chunk_start or children[-1].end_byte > chunk_end
    ):
        return None

    extractor = _Extractor(text, lines, read_inline_ids)
    old = previous.definitions
    old_starts = [definition.span.start_byte for definition in old]
    before = bisect_left(old_starts, chunk_start)
    after = bisect_left(old_starts, old_chunk_end)
    extractor.found.extend(old[:before])
    extractor.node_ends.extend(previous.node_ends[:before])
    extractor.walk(root, -1, "")
    _append_shifted(extractor, previous, after, dirty.delta, lines)
    return Reparsed(
        Previous(extractor.found, extractor.node_ends, lines.line_count),
        statements.replaced(low, high, children, dirty.delta),
    )


def _boundary(text: bytes, offset: int) -> bool:
    """Whether a top-level statement starting at ``offset`` closes every block
    before it: it starts a line, and it is not a comment (an indented line
    after a comment at column 0 still belongs to the block before it).
    """
    return (offset == 0 or text[offset - 1 : offset] in (b"\n", b"\r")) and text[
        offset : offset + 1
    ] != b"#"


def _append_shifted(
    extractor: _Extractor, previous: Previous, after: int, delta: int, lines: LineIndex
) -> None:
    """Copy the old definitions from index ``after`` on, moved by the edit."""
    old = previous.definitions
    line_shift = lines.line_count - previous.line_count
    offset = len(extractor.found) - after
    found = extractor.found
    if not delta and not line_shift and not offset:
        found.extend(old[after:])
        extractor.node_ends.extend(previous.node_ends[after:])
        return
    found.extend(
        moved(d, delta, line_shift, d.parent + offset if d.parent >= 0 else -1)
        for d in old[after:]
    )
    extractor.node_ends.extend(end + delta for end in previous.node_ends[after:])
