"""Re-extracting definitions after an edit without walking the whole file again.

Typing in a 6k-line file must not cost a full walk of its statements. An edit
only touches a *dirty* byte range: the text before it is unchanged, and the text
after it is the old text shifted by ``delta`` bytes. So while walking the new
tree, a definition that lies wholly before the dirty range (ending on an earlier
line) or wholly after it (starting on a later line), whose node covers exactly
the bytes of a definition of the previous extraction, and which holds no syntax
error (old or new: tree-sitter's error recovery looks beyond a node's end), is
that same definition — tree-sitter parsed identical bytes between identical
boundaries. Its whole subtree of definitions is copied from the previous list,
shifted by ``delta`` bytes and by the change in line count when it lies after
the edit; only the definitions overlapping the edit are walked again. Qualified
names and the kind of each copied root are recomputed from their new parent, so
renaming a class re-walks only the class header and renames its copied methods.

``tests/core/test_incremental.py`` checks, over thousands of random edit
sequences, that the result equals a full walk of the same tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from remora_core.discovery.definitions import _Extractor
from remora_core.model import Definition, NodeKind, Span

if TYPE_CHECKING:
    import tree_sitter

    from remora_core.text import LineIndex


@dataclass(frozen=True, slots=True)
class DirtyRange:
    """Bytes ``start..end`` of the new text differ from the old; ``delta`` is
    ``len(new) - len(old)``, so ``new[end:] == old[end - delta:]``.
    """

    start: int
    end: int
    delta: int

    def then(self, start: int, old_end: int, new_end: int) -> DirtyRange:
        """The dirty range after a further edit (in current coordinates)."""
        shift = new_end - old_end
        if self.end >= old_end:
            end = self.end + shift
        elif self.end > start:
            end = new_end
        else:
            end = self.end
        return DirtyRange(min(self.start, start), max(end, new_end), self.delta + shift)


@dataclass(slots=True)
class Previous:
    """What an incremental extraction reuses: the last definitions, the end of
    each one's node (trailing comments included), and the line count of the
    text they came from.
    """

    definitions: list[Definition]
    node_ends: list[int]
    line_count: int


def shift_span(span: Span, delta: int, lines: int) -> Span:
    """``span`` moved by ``delta`` bytes and ``lines`` lines (columns unchanged)."""
    if not delta and not lines:
        return span
    return Span(
        span.start_byte + delta,
        span.end_byte + delta,
        span.start_line + lines,
        span.start_col,
        span.end_line + lines,
        span.end_col,
        span.ascii,
    )


def moved(
    old: Definition,
    shift: int,
    line_shift: int,
    parent: int,
    *,
    kind: NodeKind | None = None,
    qualified: str | None = None,
) -> Definition:
    """``old`` moved by ``shift`` bytes and ``line_shift`` lines, under ``parent``
    (and renamed or re-kinded when its new parent says so).
    """
    return Definition(
        kind or old.kind,
        old.name,
        qualified or old.qualified_name,
        shift_span(old.span, shift, line_shift),
        shift_span(old.name_span, shift, line_shift),
        parent,
        old.source_hash,
        old.inline_id,
        old.has_error,
    )


class _ReusingExtractor(_Extractor):
    def __init__(
        self,
        text: bytes,
        lines: LineIndex,
        read_inline_ids: bool,
        previous: Previous,
        dirty: DirtyRange,
    ) -> None:
        super().__init__(text, lines, read_inline_ids)
        self.old = previous.definitions
        self.old_ends = previous.node_ends
        self.dirty = dirty
        self.line_shift = lines.line_count - previous.line_count
        self.first_dirty_line = lines.line_of(dirty.start)
        self.last_dirty_line = lines.line_of(dirty.end)
        self.by_start = {d.span.start_byte: i for i, d in enumerate(self.old)}
        self.subtree_end = self._subtree_ends()

    def _subtree_ends(self) -> list[int]:
        """For each old definition, the index just past its last descendant."""
        ends = list(range(1, len(self.old) + 1))
        for index in range(len(self.old) - 1, -1, -1):
            parent = self.old[index].parent
            if parent >= 0:
                ends[parent] = max(ends[parent], ends[index])
        return ends

    def add(self, outer, definition, parent, scope) -> None:
        reused = self._match(outer, definition)
        if reused is None:
            super().add(outer, definition, parent, scope)
        else:
            self._copy(*reused, parent, scope)

    def _match(
        self, outer: tree_sitter.Node, definition: tree_sitter.Node
    ) -> tuple[int, int, int] | None:
        """``(old index, byte shift, line shift)`` if ``outer`` is unchanged."""
        if outer.has_error:
            return None  # error recovery depends on what follows: walk it again
        start, end = outer.start_byte, outer.end_byte
        dirty = self.dirty
        if end <= dirty.start and self.lines.line_of(end) < self.first_dirty_line:
            shift, line_shift = 0, 0
        elif start >= dirty.end and self.lines.line_of(start) > self.last_dirty_line:
            shift, line_shift = dirty.delta, self.line_shift
        else:
            return None
        index = self.by_start.get(start - shift)
        if (
            index is None
            or self.old[index].has_error
            or self.old_ends[index] != end - shift
        ):
            return None
        # Same bytes between the same boundaries: the same definition.
        return index, shift, line_shift

    def _copy(
        self, first: int, shift: int, line_shift: int, parent: int, scope: str
    ) -> None:
        offset = len(self.found) - first
        root_kind = self.old[first].kind
        if root_kind is not NodeKind.CLASS:
            parent_kind = self.found[parent].kind if parent >= 0 else None
            root_kind = (
                NodeKind.METHOD if parent_kind is NodeKind.CLASS else NodeKind.FUNCTION
            )
        found = self.found
        self.node_ends.extend(
            end + shift for end in self.old_ends[first : self.subtree_end[first]]
        )
        for index in range(first, self.subtree_end[first]):
            old = self.old[index]
            if index == first:
                new_parent, prefix, kind = parent, scope, root_kind
            else:
                new_parent = old.parent + offset
                prefix, kind = found[new_parent].qualified_name, old.kind
            qualified = f"{prefix}.{old.name}" if prefix else old.name
            if (
                not shift
                and not line_shift
                and new_parent == old.parent
                and kind is old.kind
                and qualified == old.qualified_name
            ):
                found.append(old)  # nothing moved: the very same definition
                continue
            found.append(
                moved(
                    old, shift, line_shift, new_parent, kind=kind, qualified=qualified
                )
            )


def walk_definitions(
    tree: tree_sitter.Tree,
    text: bytes,
    lines: LineIndex,
    previous: Previous | None,
    dirty: DirtyRange | None,
    *,
    read_inline_ids: bool = False,
) -> Previous:
    """The definitions of ``tree`` (what a full walk gives), reusing those of
    ``previous`` that ``dirty`` did not touch; returned ready for the next edit.
    """
    if previous is None or dirty is None:
        extractor = _Extractor(text, lines, read_inline_ids)
    else:
        extractor = _ReusingExtractor(text, lines, read_inline_ids, previous, dirty)
    extractor.walk(tree.root_node, -1, "")
    return Previous(extractor.found, extractor.node_ends, lines.line_count)
