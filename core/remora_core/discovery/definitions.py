"""Find the classes and functions of a parsed Python file.

The walk visits statements only: definitions, and the compound statements and
blocks that can hold them (``if``, ``try``, ``with``, ``match``, loops, and the
``ERROR`` nodes tree-sitter leaves where it recovered from a syntax error).
Expressions are never entered, which keeps a 6k-line file to a couple of
milliseconds; lambdas are not nodes.

Conventions, matching Python's ``ast`` so the two can be compared by tests:

- a decorated definition is one node whose span starts at its first decorator;
- a span ends at the last statement of the body: trailing comments that
  tree-sitter keeps inside the block are not part of the node;
- ``async def`` is a function; a function whose nearest enclosing definition is a
  class is a method (also under an ``if`` in the class body);
- qualified names are dotted from the outermost definition (``Outer.Inner.m``,
  ``outer.inner`` for a nested function).
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from remora_core.discovery.parser import python_language
from remora_core.model import Definition, NodeKind, Span

if TYPE_CHECKING:
    import tree_sitter

    from remora_core.text import LineIndex

# Statement nodes that can contain definitions somewhere below them.
_CONTAINERS = frozenset(
    {
        "module",
        "block",
        "if_statement",
        "elif_clause",
        "else_clause",
        "for_statement",
        "while_statement",
        "try_statement",
        "except_clause",
        "except_group_clause",
        "finally_clause",
        "with_statement",
        "match_statement",
        "case_clause",
        "ERROR",
    }
)
_DEFINITIONS = frozenset({"function_definition", "class_definition"})
_IMPORTS = frozenset({"import_statement", "import_from_statement"})
_DEFINITION_WORDS = (b"def", b"class")
"""What the text of a definition always holds (``async def`` too)."""
_IMPORT_WORDS = (b"import",)
"""What the text of an import statement always holds."""


def _field_id(name: str) -> int:
    """A field's id: a lookup by id skips matching the field's name each time."""
    field = python_language().field_id_for_name(name)
    assert field is not None, f"the grammar has no field {name!r}"
    return field


_NAME = _field_id("name")
_BODY = _field_id("body")
_DEFINITION = _field_id("definition")
_new = tuple.__new__
"""Builds a named tuple from its fields in order: its own ``__new__`` is Python."""


def _kind_ids(names: frozenset[str]) -> frozenset[int]:
    """Every kind id whose type is one of ``names`` (a type may have several
    ids: aliases); ``ERROR`` nodes have an id of their own, outside the
    grammar's table.
    """
    language = python_language()
    ids = {
        kind
        for kind in range(language.node_kind_count)
        if language.node_kind_for_id(kind) in names
    }
    if "ERROR" in names:
        ids.add(_ERROR_ID)
    return frozenset(ids)


_ERROR_ID = 0xFFFF
"""Tree-sitter's kind id of ``ERROR`` nodes (its error symbol, -1 as 16 bits)."""
_DEFINITION_IDS = _kind_ids(_DEFINITIONS)
_DECORATED_IDS = _kind_ids(frozenset({"decorated_definition"}))
_CONTAINER_IDS = _kind_ids(_CONTAINERS)
_IMPORT_IDS = _kind_ids(_IMPORTS)
_CLASS_IDS = _kind_ids(frozenset({"class_definition"}))
_COMMENT_IDS = _kind_ids(frozenset({"comment"}))
assert Definition._fields == (
    "kind",
    "name",
    "qualified_name",
    "span",
    "name_span",
    "parent",
    "source_hash",
    "inline_id",
    "has_error",
), "definitions are built positionally"

INLINE_ID = re.compile(rb"#\s*(rm_[a-z0-9]{8})\s*$")
FILE_INLINE_ID = re.compile(rb"\A#\s*remora-file:\s*(rm_[a-z0-9]{8})\s*(?:\r?\n|\r|\Z)")


def source_hash(source: bytes | memoryview) -> str:
    """Short content hash used to tell whether a node's text changed."""
    return hashlib.blake2b(source, digest_size=8).hexdigest()


def content_end(node: tree_sitter.Node) -> tree_sitter.Node:
    """The last descendant of ``node`` that is not a comment (or ``node`` itself).

    Walks from the last child backwards with ``child(i)``/``prev_sibling``:
    building ``children`` lists for long blocks would dominate the cost.
    """
    current = node
    while count := current.child_count:
        child = current.child(count - 1)
        while child is not None and child.kind_id in _COMMENT_IDS:
            child = child.prev_sibling
        if child is None:
            break
        current = child
    return current


class _Extractor:
    """One walk over one tree; collects :class:`Definition` objects in order."""

    def __init__(
        self,
        text: bytes,
        lines: LineIndex,
        read_inline_ids: bool,
        imports: list[tree_sitter.Node] | None = None,
    ) -> None:
        self.text = text
        self.view = memoryview(text)
        """Hashing a definition's text through it copies nothing (a class
        holding its methods was copied once per level)."""
        self.lines = lines
        # An inline id always holds ``rm_``: most files have none, and looking
        # for one per definition was a tenth of extracting a file.
        self.read_inline_ids = read_inline_ids and b"rm_" in text
        self.imports = imports
        """Where the import statements met on the way go, if anywhere."""
        self.words = _DEFINITION_WORDS + (_IMPORT_WORDS if imports is not None else ())
        """A node whose text holds none of these holds nothing to find."""
        self.points_are_lines = b"\r" not in text
        """Tree-sitter counts rows at ``\n`` only; LSP also breaks lines at a
        lone ``\r``. Without any ``\r`` a node's points are its line and byte
        column, read from the tree instead of looked up."""
        self.all_ascii = text.isascii()
        """Every span of an ASCII text is ASCII: no line prefix to look at."""
        self.found: list[Definition] = []
        self.node_ends: list[int] = []
        """End byte of each definition's whole node (trailing comments included)."""

    def span(self, start: int, end: int) -> Span:
        lines = self.lines
        start_line = lines.line_of(start)
        end_line = lines.line_of(end)
        start_of_start = start - self._col(start_line, start)
        start_of_end = end - self._col(end_line, end)
        ascii_ = (
            self.text[start_of_start:start].isascii()
            and self.text[start_of_end:end].isascii()
        )
        return Span(
            start_byte=start,
            end_byte=end,
            start_line=start_line,
            start_col=start - start_of_start,
            end_line=end_line,
            end_col=end - start_of_end,
            ascii=ascii_,
        )

    def content_end(self, outer: tree_sitter.Node) -> tree_sitter.Node:
        """:func:`content_end` of a definition, read from the text when it
        can only be ``outer`` itself.

        A comment skipped anywhere on the way down ends where ``outer`` ends
        (every node above it on the way is its parent's last child), so
        without a ``#`` on ``outer``'s last line nothing is skipped and the
        last descendant ends with ``outer``. Two searches of one line instead
        of a node built per level: a tenth of finding the definitions.
        """
        text, end = self.text, outer.end_byte
        if text.rfind(b"#", text.rfind(b"\n", 0, end) + 1, end) < 0:
            return outer
        return content_end(outer)

    def node_span(self, first: tree_sitter.Node, last: tree_sitter.Node) -> Span:
        """The span from the start of ``first`` to the end of ``last``."""
        if not self.points_are_lines:
            return self.span(first.start_byte, last.end_byte)
        start, end = first.start_byte, last.end_byte
        start_line, start_col = first.start_point
        end_line, end_col = last.end_point
        if self.all_ascii:
            ascii_ = True
        else:
            text = self.text
            ascii_ = (
                text[start - start_col : start].isascii()
                and text[end - end_col : end].isascii()
            )
        # ``tuple.__new__``: the named tuple's own ``__new__`` is Python code.
        return _new(
            Span, (start, end, start_line, start_col, end_line, end_col, ascii_)
        )

    def name_span(self, name: tree_sitter.Node) -> Span:
        """:meth:`node_span` of a name: one line, so its end is its start
        moved by its length (one point read instead of two).
        """
        if not self.points_are_lines:
            return self.span(name.start_byte, name.end_byte)
        start, end = name.start_byte, name.end_byte
        line, column = name.start_point
        ascii_ = self.all_ascii or self.text[start - column : end].isascii()
        return _new(
            Span, (start, end, line, column, line, column + end - start, ascii_)
        )

    def _col(self, line: int, offset: int) -> int:
        return offset - self.lines.line_start(line)

    def walk(self, node: tree_sitter.Node, parent: int, scope: str) -> None:
        # Most bodies define and import nothing: a search of their text for
        # the keywords (in C) spares building a Node per statement to look at
        # (half of finding the definitions). A keyword in a comment, a string
        # or a longer name (``default``) only means the walk goes on.
        find, start, end = self.text.find, node.start_byte, node.end_byte
        for word in self.words:
            if find(word, start, end) >= 0:
                break
        else:
            return
        # Named children only: the anonymous ones (keywords, ``:``) are never
        # definitions, containers or imports, and each child read is a Node
        # object built.
        # Kinds compared as ids: reading a node's type builds a string.
        for child in node.named_children:
            kind = child.kind_id
            if kind in _DEFINITION_IDS:
                self.add(child, child, parent, scope)
            elif kind in _DECORATED_IDS:
                definition = child.child_by_field_id(_DEFINITION)
                if definition is not None and definition.kind_id in _DEFINITION_IDS:
                    self.add(child, definition, parent, scope)
                else:  # recovered garbage: look inside for anything usable
                    self.walk(child, parent, scope)
            elif kind in _CONTAINER_IDS:
                self.walk(child, parent, scope)
            elif kind in _IMPORT_IDS and self.imports is not None:
                self.imports.append(child)

    def add(
        self,
        outer: tree_sitter.Node,
        definition: tree_sitter.Node,
        parent: int,
        scope: str,
    ) -> None:
        name_node = definition.child_by_field_id(_NAME)
        body = definition.child_by_field_id(_BODY)
        if name_node is None or name_node.start_byte == name_node.end_byte:
            # Nothing to call it: keep looking inside for recoverable children.
            if body is not None:
                self.walk(body, parent, scope)
            return
        name = (
            name_node.text.decode("utf-8", errors="replace") if name_node.text else ""
        )
        qualified = f"{scope}.{name}" if scope else name
        if definition.kind_id in _CLASS_IDS:
            kind = NodeKind.CLASS
        elif parent >= 0 and self.found[parent].kind is NodeKind.CLASS:
            kind = NodeKind.METHOD
        else:
            kind = NodeKind.FUNCTION
        last = self.content_end(outer)
        start, end = outer.start_byte, last.end_byte
        index = len(self.found)
        self.node_ends.append(outer.end_byte)
        self.found.append(
            _new(  # the fields in declaration order (see ``Definition``)
                Definition,
                (
                    kind,
                    name,
                    qualified,
                    self.node_span(outer, last),
                    self.name_span(name_node),
                    parent,
                    source_hash(self.view[start:end]),
                    (
                        self.inline_id(definition, name_node)
                        if self.read_inline_ids
                        else None
                    ),
                    outer.has_error,
                ),
            )
        )
        if body is not None:
            self.walk(body, index, qualified)

    def inline_id(
        self, definition: tree_sitter.Node, name_node: tree_sitter.Node
    ) -> str | None:
        """The ``# rm_…`` comment ending the name line or the header's last line
        (asked only when :attr:`read_inline_ids`).
        """
        lines = {self.lines.line_of(name_node.start_byte)}
        for child in definition.children:
            if child.type == ":":
                lines.add(self.lines.line_of(child.start_byte))
        for line in sorted(lines):
            start = self.lines.line_start(line)
            match = INLINE_ID.search(
                self.text, start, self.lines.line_content_end(line)
            )
            if match:
                return match.group(1).decode("ascii")
        return None


def extract_definitions(
    tree: tree_sitter.Tree,
    text: bytes,
    lines: LineIndex,
    *,
    read_inline_ids: bool = False,
    imports: list[tree_sitter.Node] | None = None,
) -> list[Definition]:
    """Every class and function of ``tree``, parents before children; the
    import statements on the way are appended to ``imports`` when given (the
    same statements :func:`import_statements` finds, for one walk instead of
    two).
    """
    extractor = _Extractor(text, lines, read_inline_ids, imports)
    extractor.walk(tree.root_node, -1, "")
    return extractor.found


class _ImportFinder(_Extractor):
    """The definitions walk, finding import statements only."""

    def __init__(
        self, text: bytes, lines: LineIndex, imports: list[tree_sitter.Node]
    ) -> None:
        super().__init__(text, lines, False, imports)
        self.words = _IMPORT_WORDS

    def add(
        self,
        outer: tree_sitter.Node,
        definition: tree_sitter.Node,
        parent: int,
        scope: str,
    ) -> None:
        body = definition.child_by_field_name("body")
        if body is not None:
            self.walk(body, parent, scope)


def import_statements(
    tree: tree_sitter.Tree, text: bytes, lines: LineIndex
) -> list[tree_sitter.Node]:
    """Every import statement of ``tree`` where a statement may stand: in the
    module, in blocks of compound statements and definitions, in ``ERROR``
    nodes the parser recovered (the places the definitions walk visits).
    """
    found: list[tree_sitter.Node] = []
    _ImportFinder(text, lines, found).walk(tree.root_node, -1, "")
    return found


def file_inline_id(text: bytes) -> str | None:
    """The id in a ``# remora-file: rm_…`` first line, if there is one."""
    match = FILE_INLINE_ID.match(text)
    return match.group(1).decode("ascii") if match else None
