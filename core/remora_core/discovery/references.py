"""Raw references of a parsed file: call sites and import statements.

These are names, not yet nodes: ``resolve.py`` turns them into ``calls`` and
``imports`` edges once every file of the project is known. Each call site is
attributed to the innermost definition that contains it (or to the file for
module-level code).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from sys import intern
from typing import TYPE_CHECKING, NamedTuple

import tree_sitter

from remora_core.discovery.parser import python_language, query

if TYPE_CHECKING:
    from collections.abc import Iterable

    from remora_core.model import Definition


CallSite = tuple[int, tuple[str, ...]]
"""``(owner, parts)``: ``owner`` indexes the enclosing definition (-1: the
file); ``parts`` is the dotted callee, e.g. ``("self", "save")`` or
``("json", "dumps")``.

A plain tuple: workers send hundreds of thousands of them back to the server,
and a plain tuple pickles in half the time of a named one (no class to call
per site on either side) and a third of a slotted dataclass.
"""


class ImportRef(NamedTuple):
    """One imported module or name.

    ``import a.b as c`` → module ``a.b``, binding ``c``; ``import a.b`` → module
    ``a.b``, binding ``a``; ``from ..m import f as g`` → module ``m``, level 2,
    name ``f``, binding ``g``.
    """

    module: str
    level: int
    name: str | None
    binding: str


_IDENTIFIER_IDS = frozenset(
    kind
    for kind in range(python_language().node_kind_count)
    if python_language().node_kind_for_id(kind) == "identifier"
)
"""Kind ids of ``identifier`` nodes (aliases give a type several)."""

_PLAIN = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
"""ASCII identifiers joined by dots and nothing else (no space, no comment)."""


def _chain(
    node: tree_sitter.Node, read: dict[bytes, tuple[str, ...]]
) -> tuple[str, ...] | None:
    """``a.b.c`` of an attribute chain made of identifiers only, else None;
    ``read`` keeps the parts of the chain texts already split in this file.
    """
    text = node.text
    if text is not None:
        parts = read.get(text)
        if parts is None and _PLAIN.fullmatch(text):
            parts = read[text] = tuple(map(intern, text.decode("ascii").split(".")))
        if parts is not None:
            # Such a text can only be a chain of attributes: read it at once
            # rather than node by node (a third of extracting calls), once its
            # head is an identifier (``True.x`` is not a name).
            start = node.start_byte
            end = start + len(parts[0])
            head = node.descendant_for_byte_range(start, end)
            if (
                head is not None
                and head.kind_id in _IDENTIFIER_IDS  # an id: no type string built
                and head.end_byte == end
            ):
                return parts
    return _dotted_by_node(node)


def _dotted_by_node(node: tree_sitter.Node) -> tuple[str, ...] | None:
    """:func:`_dotted` walking the chain (any spelling: spaces, non-ASCII)."""
    parts: list[str] = []
    current = node
    while current.type == "attribute":
        attribute = current.child_by_field_name("attribute")
        obj = current.child_by_field_name("object")
        if attribute is None or obj is None or not attribute.text:
            return None
        parts.append(intern(attribute.text.decode("utf-8", errors="replace")))
        current = obj
    if current.type != "identifier" or not current.text:
        return None
    # Interned: the same few names recur thousands of times, and the pickle that
    # carries them back from a worker then holds each one once.
    parts.append(intern(current.text.decode("utf-8", errors="replace")))
    parts.reverse()
    return tuple(parts)


SPLIT_KEPT = 50_000
"""Chain texts :data:`_split` keeps before it starts again (~8 MB)."""
_split: dict[bytes, tuple[str, ...]] = {}
"""Parts of the plain chain texts met so far, in any file this process read
(``self.assertEqual``, ``os.path.join`` recur across a project): split once.
Whether such a text is a chain is still checked in each file's tree."""


_UNREAD: tuple[str, ...] | None = ("not", "read")
"""A name not decoded yet (compared by identity)."""


class _Owners:
    """Finds the innermost definition containing a byte offset."""

    def __init__(self, definitions: list[Definition]) -> None:
        # Definitions are in document order, parents before children, so the
        # innermost container is the last one that starts before the offset and
        # still contains it; walking up ``parent`` links finds it quickly.
        # Plain lists: one lookup per step instead of two attribute reads.
        self.starts = [d.span.start_byte for d in definitions]
        self.ends = [d.span.end_byte for d in definitions]
        self.parents = [d.parent for d in definitions]

    def owner(self, offset: int) -> int:
        starts, ends, parents = self.starts, self.ends, self.parents
        index = bisect_right(starts, offset) - 1
        while index >= 0:
            if starts[index] <= offset < ends[index]:
                return index
            index = parents[index]
        return -1


def extract_calls(
    tree: tree_sitter.Tree, definitions: list[Definition]
) -> list[CallSite]:
    """Every resolvable call site of the tree, with its owner; a callee called
    several times by one definition is listed once (the first time).
    """
    owner = _Owners(definitions).owner
    first: dict[CallSite, int] = {}
    get = first.get
    captures = _cursor("calls").captures(tree.root_node)
    # A name's parts depend on its text alone: decoded once per file.
    names: dict[bytes | None, tuple[str, ...] | None] = {}
    for node in captures.get("name", ()):
        text = node.text
        parts = names.get(text, _UNREAD)
        if parts is _UNREAD:
            # Interned: the same few names recur thousands of times, and the
            # pickle that carries them back from a worker holds each one once.
            parts = names[text] = (
                (intern(text.decode("utf-8", errors="replace")),) if text else None
            )
        if parts:
            start = node.start_byte
            site = (owner(start), parts)
            if get(site, start) >= start:
                first[site] = start
    if len(_split) > SPLIT_KEPT:
        _split.clear()
    chains = _split
    # A chain's text read as a chain once is read so again: its head token is
    # the same (an identifier) wherever the same text is called in the file,
    # and a file calls the same few chains over and over (``self.assertEqual``:
    # three in four chain calls repeat one of the file's).
    read: dict[bytes | None, tuple[str, ...]] = {}
    for node in captures.get("chain", ()):
        text = node.text
        parts = read.get(text)
        if parts is None:
            parts = _chain(node, chains)
            if parts and text in chains:
                read[text] = parts
        if parts:
            start = node.start_byte
            site = (owner(start), parts)
            if get(site, start) >= start:
                first[site] = start
    # Document order of each site's first call (captures come in no set order).
    return sorted(first, key=first.__getitem__)


def extract_imports(statements: Iterable[tree_sitter.Node]) -> list[ImportRef]:
    """Every module and name the import ``statements`` of a file import (see
    ``definitions.import_statements``).
    """
    refs: list[ImportRef] = []
    # Document order matters: a later import of the same name rebinds it.
    for node in _in_order(statements):
        if node.type == "import_statement":
            refs.extend(_plain_import(node))
        else:
            refs.extend(_from_import(node))
    return refs


def _plain_import(node: tree_sitter.Node) -> list[ImportRef]:
    refs = []
    for child in node.children_by_field_name("name"):
        if child.type == "aliased_import":
            module = child.child_by_field_name("name")
            alias = child.child_by_field_name("alias")
            if module is not None and alias is not None:
                refs.append(ImportRef(_text(module), 0, None, _text(alias)))
        elif child.type == "dotted_name":
            dotted = _text(child)
            refs.append(ImportRef(dotted, 0, None, dotted.split(".")[0]))
    return refs


def _from_import(node: tree_sitter.Node) -> list[ImportRef]:
    source = node.child_by_field_name("module_name")
    if source is None:
        return []
    level = 0
    module = ""
    if source.type == "relative_import":
        for part in source.children:
            if part.type == "import_prefix":
                level = len(_text(part).strip())
            elif part.type == "dotted_name":
                module = _text(part)
    else:
        module = _text(source)
    refs = []
    for child in node.children_by_field_name("name"):
        if child.type == "aliased_import":
            name = child.child_by_field_name("name")
            alias = child.child_by_field_name("alias")
            if name is not None and alias is not None:
                refs.append(ImportRef(module, level, _text(name), _text(alias)))
        elif child.type == "dotted_name":
            name_text = _text(child)
            refs.append(ImportRef(module, level, name_text, name_text))
    if any(child.type == "wildcard_import" for child in node.children):
        refs.append(ImportRef(module, level, "*", "*"))
    return refs


def _text(node: tree_sitter.Node) -> str:
    return node.text.decode("utf-8", errors="replace") if node.text else ""


def _in_order(nodes: Iterable[tree_sitter.Node]) -> list[tree_sitter.Node]:
    """Sort nodes into document order (a walk finds them in it; this keeps
    the rebinding order of imports true whoever found them).
    """
    return sorted(nodes, key=lambda node: node.start_byte)


def _cursor(name: str) -> tree_sitter.QueryCursor:
    return tree_sitter.QueryCursor(query(name))
