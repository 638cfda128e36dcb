"""Everything the engine learns from one parse of one file.

``extract_source`` is what worker processes run on start-up (it must stay
picklable in and out: paths and bytes in, plain dataclasses out) and what the
open-document path runs after each incremental parse.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remora_core.discovery.definitions import (
    extract_definitions,
    file_inline_id,
    import_statements,
)
from remora_core.discovery.files import SourceSkipped, content_hash, read_source
from remora_core.discovery.parser import parse
from remora_core.discovery.references import (
    CallSite,
    ImportRef,
    extract_calls,
    extract_imports,
)
from remora_core.model import Definition, Span
from remora_core.text import LineIndex

if TYPE_CHECKING:
    import tree_sitter


@dataclass(slots=True)
class FileExtraction:
    """Definitions and raw references of one version of one file."""

    path: str
    content_hash: str
    line_count: int
    definitions: list[Definition]
    calls: list[CallSite] = field(default_factory=list)
    imports: list[ImportRef] = field(default_factory=list)
    file_inline_id: str | None = None
    has_errors: bool = False
    has_references: bool = True
    """False when calls and imports were not extracted (typing hot path)."""
    span: Span | None = None
    """The whole file's span."""

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # Workers send ~70k definitions of the stdlib back: as plain tuples,
        # rebuilt without calling each named tuple's Python ``__new__``, they
        # pickle in half the time. Every field goes, in declaration order.
        values = [getattr(self, name) for name in _FIELDS]
        values[_DEFINITIONS] = [
            (*d[:_SPAN], tuple(d.span), tuple(d.name_span), *d[_SPAN + 2 :])
            for d in self.definitions
        ]
        return (_unpickle_extraction, tuple(values))


_FIELDS = tuple(f.name for f in fields(FileExtraction))
_DEFINITIONS = _FIELDS.index("definitions")
_SPAN = Definition._fields.index("span")
assert Definition._fields[_SPAN + 1] == "name_span", "pickling expects them together"


def _unpickle_extraction(*values: Any) -> FileExtraction:
    """Rebuild a pickled :class:`FileExtraction` (see its ``__reduce__``)."""
    new = tuple.__new__
    flat = list(values)
    flat[_DEFINITIONS] = [
        new(
            Definition,
            (*d[:_SPAN], new(Span, d[_SPAN]), new(Span, d[_SPAN + 1]), *d[_SPAN + 2 :]),
        )
        for d in values[_DEFINITIONS]
    ]
    return FileExtraction(*flat)


@dataclass(slots=True)
class SkippedFile:
    """A file that was not indexed, and why."""

    path: str
    reason: str


def extract_tree(
    path: str,
    text: bytes,
    tree: tree_sitter.Tree | None,
    lines: LineIndex,
    *,
    read_inline_ids: bool = False,
    with_references: bool = True,
    definitions: list[Definition] | None = None,
    has_errors: bool | None = None,
) -> FileExtraction:
    """Extract from an existing parse (the open-document path).

    ``definitions``, when given, were already found (incrementally) for ``tree``;
    without a tree (a chunk re-parse) they and ``has_errors`` must be given and
    references cannot be extracted.
    """
    if tree is None:
        assert definitions is not None and has_errors is not None
        assert not with_references
    elif has_errors is None:
        has_errors = tree.root_node.has_error
    statements: list[tree_sitter.Node] | None = None
    if definitions is None:
        # One walk finds the definitions and the import statements.
        assert tree is not None  # without a tree, definitions are given (above)
        statements = [] if with_references else None
        definitions = extract_definitions(
            tree, text, lines, read_inline_ids=read_inline_ids, imports=statements
        )
    if tree is not None and with_references and statements is None:
        statements = import_statements(tree, text, lines)
    line_count = lines.line_count  # counted, not kept, when no starts are known
    end_line = line_count - 1
    last_line = text[lines.last_line_start() :]
    return FileExtraction(
        path=path,
        content_hash=content_hash(text),
        line_count=line_count,
        definitions=definitions,
        calls=extract_calls(tree, definitions) if tree and with_references else [],
        imports=extract_imports(statements) if statements is not None else [],
        file_inline_id=file_inline_id(text) if read_inline_ids else None,
        has_errors=has_errors,
        has_references=with_references,
        span=Span(0, len(text), 0, 0, end_line, len(last_line), last_line.isascii()),
    )


def extract_source(path: str, text: bytes, *, read_inline_ids: bool) -> FileExtraction:
    """Parse and extract a whole file."""
    return extract_tree(
        path, text, parse(text), LineIndex(text), read_inline_ids=read_inline_ids
    )


def extract_paths(
    root: str, paths: list[str], max_bytes: int, read_inline_ids: bool
) -> list[FileExtraction | SkippedFile]:
    """Worker-process entry point: read, check and extract a batch of files."""
    results: list[FileExtraction | SkippedFile] = []
    base = Path(root)
    for path in paths:
        try:
            text = read_source(base / path, max_bytes)
        except SourceSkipped as skipped:
            results.append(SkippedFile(path, str(skipped)))
            continue
        results.append(extract_source(path, text, read_inline_ids=read_inline_ids))
    return results
