"""Moving Python source between indentation levels without changing its meaning.

A definition an agent writes arrives at column 0 (or indented as it copied it)
and must land at its node's column in the file, in the file's indentation style.
Two things make this more than ``textwrap``:

- lines that begin *inside* a multi-line string literal belong to the string:
  re-indenting them would change its value, so they are left exactly as they
  are (:func:`string_lines` finds them). Bare string statements — docstrings —
  are the exception: their indentation is cosmetic (``inspect.cleandoc``), so
  they move with the code, or the docstring would end up outside the body's
  column;
- a file indented with tabs (or two spaces) gets a definition written with four
  spaces converted to its unit, so the file does not end up mixing styles.

Everything here is pure: string work on lines without their endings, and a few
helpers that find lines and their indentation in a file's bytes (``\n``,
``\r\n`` or ``\r`` endings).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tree_sitter

_BLOCK_BODY = re.compile(
    r"^([ \t]*)(?:async[ \t]+)?(?:def|class|if|elif|else|for|while|with|try|except"
    r"|finally)\b[^\n]*:[ \t]*(?:#[^\n]*)?\r?\n(?:[ \t]*\r?\n)*([ \t]*)\S",
    re.M,
)
"""A compound statement's header line, then the first line of its block."""

_NEWLINE = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class StringLines:
    """Which lines of a source begin inside a multi-line string (0-based)."""

    literal: frozenset[int]
    """Inside a string whose value matters: never touched."""
    soft: frozenset[int]
    """Inside a bare string statement (a docstring): moved with the code."""


def newline_of(text: bytes) -> str:
    """The newline a file uses (its first one; ``\\n`` if it has none)."""
    match = _NEWLINE.search(text)
    return match.group().decode("ascii") if match else "\n"


def leading(line: str) -> str:
    """The spaces and tabs a line starts with."""
    return line[: len(line) - len(line.lstrip(" \t"))]


def is_blank(line: str) -> bool:
    """Whether a line holds nothing but whitespace."""
    return not line.strip(" \t\f\v")


def file_unit(text: str) -> str | None:
    """One level of indentation in a file (``"\\t"``, ``"    "``…), None if unknown.

    Read from the first block in ``text``: the first line after a compound
    statement's header (``def``, ``class``, ``if``…), relative to that header.
    """
    for match in _BLOCK_BODY.finditer(text):
        opener, body = match.group(1), match.group(2)
        if body.startswith(opener) and len(body) > len(opener):
            unit = body[len(opener) :]
            if unit == "\t" or set(unit) == {" "}:
                return unit
            return None
    return None


def end_with_comments(file_text: bytes, end: int, indent: int) -> int:
    """End of the line holding ``end``, then of comment lines indented deeper."""
    result = position = line_end(file_text, end)
    while position < len(file_text):
        crlf = file_text[position : position + 2] == b"\r\n"
        line_start = position + (2 if crlf else 1)
        position = line_end(file_text, line_start)
        line = file_text[line_start:position]
        stripped = line.lstrip(b" \t")
        if stripped.startswith(b"#") and len(line) - len(stripped) > indent:
            result = position
        elif stripped.strip():
            break
    return result


def comments_above(file_text: bytes, start: int) -> int:
    """Start of the comment lines right above the line starting at ``start``."""
    while start > 0:
        end = start - 1
        if end > 0 and file_text[end - 1 : end + 1] == b"\r\n":
            end -= 1
        newline = file_text.rfind(b"\n", 0, end)
        previous = max(newline, file_text.rfind(b"\r", newline + 1, end))
        if not file_text[previous + 1 : start].strip().startswith(b"#"):
            break
        start = previous + 1
    return start


def line_end(text: bytes, offset: int) -> int:
    """Offset of the end of the line holding ``offset`` (before its newline)."""
    newline = text.find(b"\n", offset)
    end = len(text) if newline < 0 else newline
    carriage = text.find(b"\r", offset, end)  # only looks as far as the \n
    return end if carriage < 0 else carriage


def indent_at(file_text: bytes, start: int) -> str:
    """The indentation of the line on which ``start`` lies (up to ``start``)."""
    newline = file_text.rfind(b"\n", 0, start)
    line_start = max(newline, file_text.rfind(b"\r", newline + 1, start)) + 1
    prefix = file_text[line_start:start].decode("utf-8", "replace")
    return prefix if not prefix.strip(" \t") else leading(prefix)


def string_lines(tree: tree_sitter.Tree) -> StringLines:
    """The lines of a parsed source that begin inside a string literal."""
    literal: set[int] = set()
    soft: set[int] = set()
    pending = [tree.root_node]
    while pending:
        node = pending.pop()
        if node.type in ("string", "concatenated_string"):
            first, last = node.start_point.row, node.end_point.row
            if last > first:
                bare = node.parent is not None and (
                    node.parent.type == "expression_statement"
                    and node.parent.named_child_count == 1
                )
                (soft if bare else literal).update(range(first + 1, last + 1))
            continue
        if node.start_point.row != node.end_point.row:
            pending.extend(node.children)
    return StringLines(frozenset(literal), frozenset(soft - literal))


def shift(
    lines: list[str],
    strings: StringLines,
    *,
    remove: str = "",
    add: str = "",
    start: int = 0,
) -> list[str] | None:
    """Lines from ``start`` on with the prefix ``remove`` replaced by ``add``.

    Blank lines become empty; string lines are kept (docstring lines that lack
    ``remove`` lose their indentation). None if a code line lacks ``remove``:
    the lines do not share that indentation.
    """
    shifted = lines[:start]
    for index in range(start, len(lines)):
        line = lines[index]
        if index in strings.literal:
            shifted.append(line)
        elif is_blank(line):
            shifted.append("")
        elif line.startswith(remove):
            shifted.append(add + line[len(remove) :])
        elif index in strings.soft:
            shifted.append(add + line.lstrip(" \t"))
        else:
            return None
    return shifted


def statement_rows(tree: tree_sitter.Tree) -> set[int]:
    """The lines on which a statement starts (not continuation lines)."""
    rows: set[int] = set()
    pending = [tree.root_node]
    while pending:
        node = pending.pop()
        parent = node.parent
        if (
            parent is not None
            and parent.type in ("module", "block")
            and node.type != "comment"
        ):
            rows.add(node.start_point.row)
        if node.type == "block" or node.start_point.row != node.end_point.row:
            pending.extend(node.named_children)
    return rows


def source_unit(lines: list[str], rows: set[int]) -> str | None:
    """One level of indentation: the least indented statement's indentation.

    None when no statement is indented, or statements mix tabs and spaces.
    """
    indents = {leading(lines[row]) for row in rows if row < len(lines)} - {""}
    if not indents or len({indent[0] for indent in indents}) != 1:
        return None
    unit = min(indents, key=len)
    return unit if set(unit) == {unit[0]} else None


def convert_unit(
    lines: list[str], strings: StringLines, own: str, unit: str
) -> list[str]:
    """The lines re-indented with ``unit`` for every ``own`` they start with.

    What is left over (alignment of a continuation line) is kept as it was.
    """
    converted: list[str] = []
    for index, line in enumerate(lines):
        if index in strings.literal or is_blank(line):
            converted.append(line)
            continue
        indent = leading(line)
        run = len(indent) - len(indent.lstrip(own[0]))
        levels, extra = divmod(run, len(own))
        converted.append(unit * levels + indent[run - extra :] + line[len(indent) :])
    return converted
