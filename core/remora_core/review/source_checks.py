"""Checking the Python source an agent proposes, with errors it can act on.

An agent's source goes through :func:`read_source` (a string, not empty, not
huge, newlines normalised, blank lines around it trimmed), :func:`canonicalise`
(moved to column 0), :func:`check_syntax` and :func:`single_definition`. Every
failure is a :class:`ProposalError` whose message tells the model what to fix,
with line numbers counted in the text it sent.

Syntax is checked twice: tree-sitter finds error nodes whatever the Python
version, and Python's own parser catches what tree-sitter tolerates (an empty
body, bad indentation, ``print "x"``). The second check applies only when the
running Python understands the code being replaced, so code written for a newer
Python than the server's is judged by tree-sitter alone.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING

from remora_core.discovery.parser import parse
from remora_core.review.indentation import (
    StringLines,
    convert_unit,
    is_blank,
    leading,
    shift,
    source_unit,
    statement_rows,
    string_lines,
)

if TYPE_CHECKING:
    import tree_sitter

MAX_SOURCE_BYTES = 200 * 1024
"""The largest source a proposal may carry."""

_DEFINITIONS = {"function_definition": "def", "class_definition": "class"}


class ProposalError(ValueError):
    """A proposal that cannot be made or decided; the message is for the model."""


@dataclass(slots=True)
class Source:
    """An agent's source at column 0, line by line (without line endings)."""

    lines: list[str]
    strings: StringLines
    skipped: int
    """Blank lines trimmed from the top: added to line numbers in messages."""

    @property
    def text(self) -> str:
        """The source with ``\\n`` line endings."""
        return "\n".join(self.lines)


def read_source(source: object, subject: str) -> tuple[list[str], int]:
    """The lines of ``source`` between its first and last non-blank line.

    Also returns how many blank lines were trimmed from the top.
    """
    if not isinstance(source, str):
        raise ProposalError(f"{subject} must be a string of Python source")
    try:
        size = len(source.encode("utf-8"))
    except UnicodeEncodeError:
        raise ProposalError(
            f"{subject} contains characters that are not valid "
            "Unicode (lone surrogates); send plain text"
        ) from None
    if size > MAX_SOURCE_BYTES:
        raise ProposalError(
            f"{subject} is {size:,} bytes; the limit is {MAX_SOURCE_BYTES // 1024} KB"
            " — send only the one definition"
        )
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    first = next((i for i, line in enumerate(lines) if not is_blank(line)), None)
    if first is None:
        raise ProposalError(f"{subject} is empty; send the complete definition")
    last = max(i for i, line in enumerate(lines) if not is_blank(line))
    kept = lines[first : last + 1]
    kept[-1] = kept[-1].rstrip()
    return kept, first


def canonicalise(lines: list[str], skipped: int, node_prefix: str = "") -> Source:
    """The source moved to column 0.

    Lines are dedented by the first line's indentation when every code line
    shares it. A source whose first line is at column 0 may also be the node's
    text as the file has it, its other lines carrying the node's indentation
    (``node_prefix``); that reading is taken when it is valid, indents by even
    steps, and reading the source as already at column 0 is not (both readings
    give the same text once :func:`restyle` has evened the steps out).
    """
    strings = string_lines(parse("\n".join(lines).encode("utf-8")))
    first = leading(lines[0])
    if first:
        shifted = shift(lines, strings, remove=first, start=1) or lines
        return Source([lines[0][len(first) :], *shifted[1:]], strings, skipped)
    plain = shift(lines, strings) or lines
    if node_prefix and len(lines) > 1 and not _well_formed(plain):
        copied = shift(lines, strings, remove=node_prefix, start=1)
        if copied is not None and _well_formed(copied):
            return Source(copied, strings, skipped)
    return Source(plain, strings, skipped)


def _well_formed(lines: list[str]) -> bool:
    """One valid statement whose blocks are indented by one even step."""
    text = "\n".join(lines)
    tree = parse(text.encode("utf-8"))
    if tree.root_node.has_error or len(top_level(tree)) != 1:
        return False
    if python_error(text) is not None:
        return False
    widths = [len(leading(lines[row])) for row in sorted(statement_rows(tree))]
    steps = {b - a for a, b in pairwise(widths) if b > a}
    return len(steps) <= 1


def python_error(text: str) -> tuple[int, str, bool] | None:
    """Python's complaint about ``text``: (1-based line, message, is indentation)."""
    try:
        compile(text, "<proposal>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:
        indentation = isinstance(error, IndentationError)
        return (error.lineno or 1, error.msg, indentation)
    except (ValueError, RecursionError, MemoryError) as error:
        return (1, str(error) or type(error).__name__, False)
    return None


def runtime_parses(text: str) -> bool:
    """Whether the running Python can parse ``text`` (the code being replaced)."""
    return python_error(text) is None


def check_syntax(source: Source, strict: bool) -> tree_sitter.Tree:
    """The parse of ``source``; ProposalError at the first syntax error.

    ``strict`` also applies Python's parser (see the module docstring);
    indentation errors are reported either way.
    """
    tree = parse(source.text.encode("utf-8"))
    # Blank lines in front keep Python's line numbers (also those inside its
    # messages) counted in the text the model sent.
    found = python_error("\n" * source.skipped + source.text)
    if found is not None and (strict or found[2]):
        row, message = found[0] - 1 - source.skipped, found[1]
    elif tree.root_node.has_error:
        row, message = _first_error(tree.root_node)
    else:
        return tree
    row = min(max(row, 0), len(source.lines) - 1)
    shown = source.lines[row].strip()
    raise ProposalError(
        f"your code does not parse: line {row + 1 + source.skipped}: {message}"
        + (f": {shown}" if shown else "")
    )


def _first_error(node: tree_sitter.Node) -> tuple[int, str]:
    """(0-based row, message) of the first error or missing token below ``node``."""
    while True:
        for child in node.children:
            if child.is_missing:
                return child.start_point.row, f"missing {child.type!r}"
            if child.type == "ERROR":
                return child.start_point.row, "invalid syntax"
            if child.has_error:
                node = child
                break
        else:
            return node.start_point.row, "invalid syntax"


def top_level(tree: tree_sitter.Tree) -> list[tree_sitter.Node]:
    """The module's statements, comments left out."""
    return [c for c in tree.root_node.named_children if c.type != "comment"]


def definition_of(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The class or function a statement defines (through decorators), if any."""
    if node.type == "decorated_definition":
        node = node.child_by_field_name("definition") or node
    return node if node.type in _DEFINITIONS else None


def name_of(definition: tree_sitter.Node) -> str:
    """The name a class or function definition gives."""
    name = definition.child_by_field_name("name")
    return name.text.decode("utf-8", "replace") if name and name.text else ""


def describe(node: tree_sitter.Node) -> str:
    """A statement in a few words, for messages."""
    definition = definition_of(node)
    if definition is not None:
        noun = "class" if definition.type == "class_definition" else "function"
        return f"a {noun} {name_of(definition)!r}"
    if node.type in ("import_statement", "import_from_statement"):
        return f"an import on line {node.start_point.row + 1}"
    return f"a statement on line {node.start_point.row + 1}"


def single_definition(
    source: Source, tree: tree_sitter.Tree, keyword: str, wanted: str
) -> str:
    """The name of the one ``def``/``class`` the source holds; else ProposalError.

    ``wanted`` says what was expected, as in "named or renamed from 'load'".
    """
    noun = "function definition (def)" if keyword == "def" else "class definition"
    statements = top_level(tree)
    definition = definition_of(statements[0]) if len(statements) == 1 else None
    if definition is not None and _DEFINITIONS[definition.type] == keyword:
        return name_of(definition)
    if not statements:
        got = "only comments"
    else:
        described = [describe(s) for s in statements]
        got = ", ".join(described[:-1]) + (" and " if len(described) > 1 else "")
        got += described[-1]
    raise ProposalError(f"expected one {noun} {wanted}, got {got}")


def restyle(source: Source, unit: str | None) -> Source:
    """The source indented with the file's ``unit``, when that changes nothing else.

    The conversion is kept only if Python parses both versions to the same
    tree (docstrings compared as ``inspect.cleandoc`` shows them).
    """
    if unit is None:
        return source
    rows = statement_rows(parse(source.text.encode("utf-8")))
    own = source_unit(source.lines, rows)
    if own is None or own == unit:
        return source
    converted = convert_unit(source.lines, source.strings, own, unit)
    before = _shape(source.text)
    if before is None or before != _shape("\n".join(converted)):
        return source
    return Source(converted, source.strings, source.skipped)


def _shape(text: str) -> str | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            node.value.value = inspect.cleandoc(node.value.value)
    return ast.dump(tree)
