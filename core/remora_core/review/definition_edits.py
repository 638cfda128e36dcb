"""Where an agent's new source goes in its file, and the text that goes there.

:func:`prepare_rewrite` replaces a node's bytes; :func:`prepare_new_node` inserts
a definition next to a sibling or at the end of a file's or class's body. Both
validate the source (:mod:`remora_core.review.source_checks`), move it to its place's
indentation in the file's style and newlines, and return a unified diff of the
file. Both refuse to work on a node whose text no longer matches the file:
an edit computed against other bytes would land in the wrong place.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass
from typing import TYPE_CHECKING

from remora_core.discovery.definitions import source_hash
from remora_core.discovery.files import content_hash
from remora_core.discovery.parser import parse
from remora_core.model import NodeKind
from remora_core.review.diffs import region_diff
from remora_core.review.hidden_chars import added_hidden, note, reveal
from remora_core.review.indentation import (
    comments_above,
    end_with_comments,
    file_unit,
    indent_at,
    leading,
    newline_of,
    shift,
    string_lines,
)
from remora_core.review.source_checks import (
    ProposalError,
    canonicalise,
    check_syntax,
    definition_of,
    name_of,
    read_source,
    restyle,
    runtime_parses,
    single_definition,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    import tree_sitter

    from remora_core.model import CodeNode

NEW_NODE_KINDS = ("function", "class", "method")


def prepare_rewrite(
    node: CodeNode, file_text: bytes, new_source: str
) -> tuple[str, str]:
    """The text to put in place of ``node``'s bytes, and the file's diff.

    ``file_text`` is the file the node's span refers to. ProposalError (for the
    model) if the source is invalid, not one definition of the node's kind, or
    the same as now.
    """
    old = _current_text(node, file_text)
    text = file_text.decode("utf-8", "replace")
    newline = newline_of(file_text)
    lines, skipped = read_source(new_source, "new_source")
    if node.kind is NodeKind.FILE:
        source = canonicalise(lines, skipped)
        check_syntax(source, strict=runtime_parses(old))
        ending = newline if old.endswith(("\n", "\r")) else ""
        replacement = newline.join(source.lines) + ending
    else:
        prefix = indent_at(file_text, node.span.start_byte)
        source = canonicalise(lines, skipped, node_prefix=prefix)
        strict = runtime_parses(f"if 1:\n{prefix}{old}" if prefix else old)
        tree = check_syntax(source, strict)
        keyword_ = "class" if node.kind is NodeKind.CLASS else "def"
        single_definition(
            source, tree, keyword_, f"named or renamed from {node.name!r}"
        )
        source = restyle(source, file_unit(prefix + old) or file_unit(text))
        placed = (
            shift(source.lines, source.strings, add=prefix, start=1) or source.lines
        )
        replacement = newline.join(placed)
    return replacement, rewrite_diff(node, file_text, replacement)


NO_CHANGE = "no change: "
"""How the refusal of a rewrite that changes nothing begins (the fenced
kernel ends the turn on it rather than asking again: ``agents/kernel.py``)."""


def rewrite_diff(node: CodeNode, file_text: bytes, replacement: str) -> str:
    """The file's diff when ``replacement`` (placed text) takes ``node``'s bytes.

    ProposalError if it changes nothing, or adds hidden characters.
    """
    old = _current_text(node, file_text)
    if replacement == old:
        raise ProposalError(
            f"{NO_CHANGE}the new source is identical to the current one"
        )
    if _squash(replacement) == _squash(old):
        raise ProposalError(
            f"{NO_CHANGE}the new source differs from the current one only in "
            "whitespace at the ends of lines"
        )
    if (hidden := added_hidden(old, replacement)) is not None:
        raise ProposalError(hidden)
    start = _char_offset(file_text, node.span.start_byte)
    end = start + len(old)
    text = file_text.decode("utf-8", "replace")
    diff = region_diff(node.file_path, text, start, end, replacement)
    return shown_diff(diff, replacement)


def at_column_zero(source: str, prefix: str) -> str:
    """A node's text as its file holds it — first line at its place, later
    lines indented by ``prefix`` (the node's line's indentation) — moved to
    column 0: how an agent is shown its source and writes it back.

    Lines inside multi-line string literals keep their indentation (it is
    their value); the text is returned as it is when a code line lacks
    ``prefix``.
    """
    if not prefix:
        return source
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    strings = string_lines(parse("\n".join(lines).encode("utf-8")))
    shifted = shift(lines, strings, remove=prefix, start=1)
    return source if shifted is None else "\n".join(shifted)


def prepare_new_node(
    file_text: bytes,
    path: str,
    anchor: CodeNode,
    kind: str,
    name: str,
    source: str,
    insert_after: CodeNode | None,
) -> tuple[int, str, str]:
    """Where to insert a new definition, the text to insert, and the file's diff.

    It goes after ``insert_after`` (a definition directly in ``anchor``) or at the
    end of ``anchor``'s body (the end of a file — before an ``if __name__ ==
    "__main__":`` block —, class or function), with PEP 8 blank lines around it.
    """
    if kind not in NEW_NODE_KINDS:
        raise ProposalError("kind must be 'function', 'class' or 'method'")
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise ProposalError(f"{name!r} is not a valid Python name")
    if anchor.kind is not NodeKind.FILE:  # a file anchor's span is not used
        _current_text(anchor, file_text)
    if insert_after is not None:
        _current_text(insert_after, file_text)
        if anchor.kind is not NodeKind.FILE and not (
            anchor.span.start_byte < insert_after.span.start_byte
            and insert_after.span.end_byte <= anchor.span.end_byte
        ):
            raise ProposalError(f"{insert_after.name!r} is not inside {anchor.name!r}")
    text = file_text.decode("utf-8", "replace")
    tree = parse(file_text)
    place = _placement(tree, file_text, anchor, insert_after)
    lines, skipped = read_source(source, "source")
    checked = canonicalise(lines, skipped)
    parsed = check_syntax(checked, strict=runtime_parses(text))
    keyword_ = "class" if kind == "class" else "def"
    found = single_definition(checked, parsed, keyword_, f"named {name!r}")
    if found != name:
        raise ProposalError(
            f"you asked for a {kind} named {name!r} but the source defines {found!r}; "
            "make them the same"
        )
    where = "at the top level of " + path if not place.indent else f"in {anchor.name!r}"
    if name in _names_in(place.level):
        raise ProposalError(
            f"{name!r} is already defined {where}; choose another name, or ask "
            "that node to change itself"
        )
    checked = restyle(checked, file_unit(text))
    placed = shift(checked.lines, checked.strings, add=place.indent) or checked.lines
    inserted = _with_blank_lines(file_text, place, newline_of(file_text).join(placed))
    if (hidden := added_hidden("", inserted)) is not None:
        raise ProposalError(hidden)
    result = (
        file_text[: place.offset] + inserted.encode("utf-8") + file_text[place.offset :]
    )
    if parse(result).root_node.has_error and not tree.root_node.has_error:
        raise ProposalError(f"a definition cannot be inserted there {where}")
    offset = _char_offset(file_text, place.offset)
    return place.offset, inserted, region_diff(path, text, offset, offset, inserted)


def shown_diff(diff: str, new_text: str) -> str:
    """The diff a person reviews: hidden characters the new text keeps (the
    person's own: new ones are refused) shown as markers, under a first line
    saying so (a unified diff ignores text before its ``---`` header).
    """
    said = note(new_text)
    return diff if said is None else f"# Remora: this change {said}\n{reveal(diff)}"


@dataclass(frozen=True, slots=True)
class _Place:
    offset: int
    """Byte offset: the end of a line's content, or a line start if ``before``."""
    indent: str
    level: tree_sitter.Node
    """The block (or module) the new definition joins."""
    before: bool = False
    """Inserted before the line at ``offset`` rather than after it."""

    @property
    def blank_lines(self) -> int:
        """PEP 8: two blank lines around top-level definitions, one elsewhere."""
        return 1 if self.indent else 2


def _placement(
    tree: tree_sitter.Tree,
    file_text: bytes,
    anchor: CodeNode,
    after: CodeNode | None,
) -> _Place:
    if after is not None:
        outer = _definition_at(tree, after.span.start_byte, after.name)
        indent = indent_at(file_text, after.span.start_byte)
        end = end_with_comments(file_text, after.span.end_byte, len(indent))
        return _Place(end, indent, outer.parent or tree.root_node)
    if anchor.kind is NodeKind.FILE:
        root = tree.root_node
        guard = _main_guard(root)
        if guard is not None:
            return _Place(comments_above(file_text, guard.start_byte), "", root, True)
        return _Place(len(file_text.rstrip()), "", root)
    outer = _definition_at(tree, anchor.span.start_byte, anchor.name)
    definition = definition_of(outer) or outer
    body = definition.child_by_field_name("body")
    statements = [c for c in body.named_children if c.type != "comment"] if body else []
    if body is None or not statements:
        raise ProposalError(f"cannot find the body of {anchor.name!r}")
    if statements[0].start_point.row == definition.start_point.row:
        raise ProposalError(
            f"{anchor.name!r} has its body on the line of its header; rewrite it "
            "instead"
        )
    indent = indent_at(file_text, statements[0].start_byte)
    anchor_indent = indent_at(file_text, anchor.span.start_byte)
    end = end_with_comments(file_text, anchor.span.end_byte, len(anchor_indent))
    return _Place(end, indent, body)


def _definition_at(tree: tree_sitter.Tree, start: int, name: str) -> tree_sitter.Node:
    """The (decorated) definition starting at byte ``start``."""
    node: tree_sitter.Node | None = tree.root_node.descendant_for_byte_range(
        start, start
    )
    while node is not None:
        if node.start_byte == start and definition_of(node) is not None:
            if node.parent is not None and node.parent.type == "decorated_definition":
                node = node.parent
            return node
        node = node.parent
    raise ProposalError(f"cannot find the definition of {name!r} in its file")


def _main_guard(root: tree_sitter.Node) -> tree_sitter.Node | None:
    statements = [c for c in root.named_children if c.type != "comment"]
    last = statements[-1] if statements else None
    if last is None or last.type != "if_statement":
        return None
    condition = last.child_by_field_name("condition")
    words = (condition.text or b"").decode("utf-8", "replace") if condition else ""
    compact = "".join(words.split()).replace("'", '"')
    return last if compact in ('__name__=="__main__"', '"__main__"==__name__') else None


def _names_in(level: tree_sitter.Node) -> set[str]:
    """Names defined directly in a block: classes, functions, plain assignments."""
    names: set[str] = set()
    for statement in level.named_children:
        definition = definition_of(statement)
        if definition is not None:
            names.add(name_of(definition))
        elif statement.type == "expression_statement":
            for part in statement.named_children:
                target = part.child_by_field_name("left")
                if part.type == "assignment" and target and target.type == "identifier":
                    names.add((target.text or b"").decode("utf-8", "replace"))
    return names


def _with_blank_lines(file_text: bytes, place: _Place, body: str) -> str:
    """``body`` with the blank lines PEP 8 wants between it and its neighbours."""
    newline = newline_of(file_text)
    wanted = place.blank_lines
    if place.before:
        above = _lines(file_text[: place.offset])[:-1]
        blank = _count_blank(reversed(above))
        missing = wanted - blank if blank < len(above) else 0
        return newline * max(missing, 0) + body + newline * (wanted + 1)
    if not file_text.strip():
        return body + newline
    below = _lines(file_text[place.offset :])[1:]
    blank = _count_blank(below)
    inserted = newline * (wanted + 1) + body
    following = below[blank] if blank < len(below) else None
    if following is not None and leading(following) == place.indent:
        inserted += newline * max(wanted - blank, 0)  # a sibling follows
    return inserted


def _lines(text: bytes) -> list[str]:
    decoded = text.decode("utf-8", "replace")
    return decoded.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _count_blank(lines: Iterable[str]) -> int:
    count = 0
    for line in lines:
        if line.strip():
            break
        count += 1
    return count


def _current_text(node: CodeNode, file_text: bytes) -> str:
    """The node's text in ``file_text``; ProposalError if it is not what was read."""
    start, end = node.span.start_byte, node.span.end_byte
    if node.kind is NodeKind.FILE:
        same = content_hash(file_text) == node.source_hash
    else:
        chunk = file_text[start:end]
        same = end <= len(file_text) and source_hash(chunk) == node.source_hash
    if not same:
        raise ProposalError(
            f"the text of {node.qualified_name!r} changed since it was read (its "
            "file was edited); look at its current source and try again"
        )
    return file_text[start:end].decode("utf-8", "replace")


def _char_offset(file_text: bytes, offset: int) -> int:
    return len(file_text[:offset].decode("utf-8", "replace"))


def _squash(text: str) -> list[str]:
    return [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
