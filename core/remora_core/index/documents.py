"""Open documents: the editor's text, its version and one incremental syntax tree.

Each change from the editor is applied to the UTF-8 bytes and to the tree-sitter
tree (``Tree.edit``), and the next parse reuses the old tree, so typing in a
6k-line file re-parses in a millisecond or two instead of tens.

While typing (definitions only, no references) an edit re-parses just the
top-level statements it touched when that is exact (``discovery/statements.py``);
the whole tree is then brought up to date only when something needs it (the
references after the debounce, a save), so where the person types does not
change what a keystroke costs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from remora_core.discovery import FileExtraction, SourceSkipped, extract_tree
from remora_core.discovery.files import check_source
from remora_core.discovery.incremental import DirtyRange, Previous, walk_definitions
from remora_core.discovery.parser import parse
from remora_core.discovery.statements import Statements, reparse_chunk
from remora_core.text import LineIndex, PositionEncoding, encode_text, splice

if TYPE_CHECKING:
    import tree_sitter

    from remora_core.discovery.statements import Reparsed

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TextChange:
    """One content change; ``start``/``end`` are ``(line, character)`` or None for
    a whole-document replacement.
    """

    text: str
    start: tuple[int, int] | None = None
    end: tuple[int, int] | None = None


class OpenDocument:
    """One document the editor has open."""

    def __init__(self, path: str, version: int, text: str, max_bytes: int) -> None:
        self.path = path
        self.version = version
        self.max_bytes = max_bytes
        self.text = encode_text(text)
        self.lines = LineIndex(self.text)
        self._tree: tree_sitter.Tree | None = None
        self._tree_current = False
        """Whether ``_tree`` was parsed from the current text (else only edited)."""
        self.skip_reason: str | None = None
        self._previous: Previous | None = None
        """Definitions of the last extraction, reused for the next one."""
        self._statements: Statements | None = None
        """Top-level statements of the text of the last extraction."""
        self._dirty: DirtyRange | None = None
        """Bytes edited since the last extraction (None: nothing to reuse)."""
        self.last_parse = ""
        """How the last extraction parsed: ``"chunk"`` or ``"whole"`` (tests)."""
        self._reparse(fresh=True)

    @property
    def tree(self) -> tree_sitter.Tree | None:
        """The syntax tree of the current text (None: the file is not indexed)."""
        if self.skip_reason is not None:
            return None
        if not self._tree_current:
            self._tree = parse(self.text, self._tree)
            self._tree_current = True
        return self._tree

    def apply(
        self, version: int, changes: list[TextChange], encoding: PositionEncoding
    ) -> None:
        """Apply the changes of one ``didChange`` in order, then re-parse."""
        fresh = False
        for change in changes:
            replacement = encode_text(change.text)
            if change.start is None or change.end is None:
                self.text = replacement
                self.lines = LineIndex(self.text)
                fresh = True
                continue
            start = self.lines.offset(*change.start, encoding)
            end = self.lines.offset(*change.end, encoding)
            start, end = min(start, end), max(start, end)
            self.text, edit = splice(self.text, start, end, replacement)
            self.lines = self.lines.after_edit(self.text, start, end, edit.new_end_byte)
            self._note_dirty(start, end, edit.new_end_byte)
            if self._tree is not None and not fresh:
                self._tree.edit(
                    start_byte=edit.start_byte,
                    old_end_byte=edit.old_end_byte,
                    new_end_byte=edit.new_end_byte,
                    start_point=edit.start_point,
                    old_end_point=edit.old_end_point,
                    new_end_point=edit.new_end_point,
                )
        if fresh:
            self._previous = self._statements = None
        self.version = version
        self._reparse(fresh=fresh)

    def _note_dirty(self, start: int, old_end: int, new_end: int) -> None:
        if self._dirty is None:
            self._dirty = DirtyRange(start, new_end, new_end - old_end)
        else:
            self._dirty = self._dirty.then(start, old_end, new_end)

    def _reparse(self, *, fresh: bool) -> None:
        try:
            check_source(self.text, self.max_bytes)
        except SourceSkipped as skipped:
            if self.skip_reason != str(skipped):
                log.warning("not indexing %s: %s", self.path, skipped)
            self.skip_reason = str(skipped)
            self._tree = None
            self._tree_current = False
            return
        self.skip_reason = None
        if fresh or self._tree is None:
            self._tree = None  # a new text: nothing to reuse
        self._tree_current = False  # parsed when needed: see ``extract``

    def extract(
        self, *, read_inline_ids: bool, with_references: bool
    ) -> FileExtraction | None:
        """Definitions (and optionally references) of the current version."""
        if self.skip_reason is not None:
            self._previous = self._statements = None
            return None
        if not with_references and (chunk := self._chunk(read_inline_ids)):
            self._previous, self._statements = chunk.previous, chunk.statements
            self._dirty = None
            self.last_parse = "chunk"
            return extract_tree(
                self.path,
                self.text,
                None,
                self.lines,
                read_inline_ids=read_inline_ids,
                with_references=False,
                definitions=chunk.previous.definitions,
                has_errors=False,
            )
        tree = self.tree
        assert tree is not None
        found = walk_definitions(
            tree,
            self.text,
            self.lines,
            self._previous,
            self._dirty or DirtyRange(0, 0, 0),
            read_inline_ids=read_inline_ids,
        )
        self._previous, self._dirty = found, None
        self._statements = Statements.of(tree.root_node)
        self.last_parse = "whole"
        return extract_tree(
            self.path,
            self.text,
            tree,
            self.lines,
            read_inline_ids=read_inline_ids,
            with_references=with_references,
            definitions=found.definitions,
        )

    def _chunk(self, read_inline_ids: bool) -> Reparsed | None:
        """Re-parse only the statements the edits since the last extraction
        touched, when that is exact and the whole tree is not current anyway.
        """
        if (
            self._tree_current
            or self._previous is None
            or self._statements is None
            or self._dirty is None
        ):
            return None
        return reparse_chunk(
            self.text,
            self.lines,
            self._statements,
            self._previous,
            self._dirty,
            read_inline_ids=read_inline_ids,
        )
