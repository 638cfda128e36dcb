"""Re-extracting definitions after an edit without walking the whole file again.

Typing in a 6k-line file must not cost a full walk of its statements. An edit
only touches a *dirty* byte range: the text before it is unchanged, and the text
after it is the old text shifted by ``delta`` bytes. So while walking the new
tree, a definition that lies wholly before the dirty range (ending on an earlier
line), or wholly after it (starting on a later line), and whose node covers
exactly the bytes of a definition of the previous extraction, is that same
definition: tree-sitter re-parsed identical bytes between identical boundaries.
Its whole subtree of definitions is copied from the previous list — shifted by
``delta`` bytes and the change in line count when it lies after the edit — and
only the definitions overlapping the edit are walked again. Qualified names and
the kind of each copied root are recomputed from their new parent, so renaming
a class re-walks only the class header and renames its copied methods.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from remora_core.discovery.definitions import _Extractor, content_end
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
    """What an incremental extraction reuses: the last definitions and the
    line count of the text they came from.
    """

    definitions: list[Definition]
    line_count: int


def _shift(span: Span, delta: int, lines: int) -> Span:
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
        start, end = outer.start_byte, content_end(outer).end_byte
        dirty = self.dirty
        if end <= dirty.start and self.lines.line_of(end) < self.first_dirty_line:
            shift, line_shift = 0, 0
        elif start >= dirty.end and self.lines.line_of(start) > self.last_dirty_line:
            shift, line_shift = dirty.delta, self.line_shift
        else:
            return None
        index = self.by_start.get(start - shift)
        if index is None:
            return None
        old = self.old[index]
        name = definition.child_by_field_name("name")
        if (
            old.span.end_byte != end - shift
            or name is None
            or old.name_span.start_byte != name.start_byte - shift
            or old.name_span.end_byte != name.end_byte - shift
        ):
            return None
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
                Definition(
                    kind,
                    old.name,
                    qualified,
                    _shift(old.span, shift, line_shift),
                    _shift(old.name_span, shift, line_shift),
                    new_parent,
                    old.source_hash,
                    old.inline_id,
                )
            )


def extract_definitions_after_edit(
    tree: tree_sitter.Tree,
    text: bytes,
    lines: LineIndex,
    previous: Previous,
    dirty: DirtyRange,
    *,
    read_inline_ids: bool = False,
) -> list[Definition]:
    """The same list a full extraction gives, reusing unchanged definitions."""
    extractor = _ReusingExtractor(text, lines, read_inline_ids, previous, dirty)
    extractor.walk(tree.root_node, -1, "")
    return extractor.found
