"""Taking from a refused rewrite only what its guard lets change.

A request for a docstring or for type hints guards the code (``guards.py``):
a rewrite that also changes the code is refused, with the reason, and the
model gets one more attempt. A small model often gets the asked part right
and the rest wrong twice — a good docstring on a body it "improved", right
hints on a multi-line string it re-indented. :func:`graft` builds the
proposal the request asked for from such a reply: the original definition,
text for text, with only the allowed parts taken from the model's version —

- ``docstring``: the definition's own docstring (added, or put in place of
  the old one), re-indented to the body's column;
- ``type_hints``: the annotations of the parameters (matched by name) and of
  the return value.

Nothing else is taken: not the code, not nested definitions' docstrings, not
imports — a hint naming something that is neither a builtin nor read by the
original definition is left out, since the import it may need cannot be
grafted. Renames are never grafted (a rename is all code). A string the original code
already holds is not taken as a docstring: moving ``text = \"\"\"Welcome…\"\"\"``
into the docstring's place documents nothing.

The caller checks the result with the same guard (it must pass) and says on
the proposal that it was grafted and what the model's reply also changed.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import io
import tokenize
from dataclasses import dataclass

from remora_core.guards import Guard

_GRAFTABLE = frozenset({"docstring", "type_hints"})

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


@dataclass(frozen=True)
class Grafted:
    """A definition with parts of another's taken in."""

    text: str
    """The original's text (as the file holds it) with the grafted parts."""
    taken: tuple[str, ...]
    """What was taken, in words ("its docstring", "its type hints")."""


@dataclass(frozen=True)
class _Edit:
    start: tuple[int, int]
    """(0-based line, character column) in the wrapped text."""
    end: tuple[int, int]
    text: str


class DefinitionText:
    """A definition's text, parsed, with its AST positions in characters
    (wrapped in a block when its later lines carry the file's indentation).
    """

    def __init__(self, text: str, indent: str) -> None:
        # As the guard parses it: as it is, else inside a block at ``indent``
        # (the file's text of a method: later lines indented, not the first).
        try:
            self.prefix, self.tree = "", ast.parse(text)
        except SyntaxError:
            if not indent:
                raise
            self.prefix = f"if 1:\n{indent}"
            self.tree = ast.parse(self.prefix + text)
        self.text = self.prefix + text
        self.lines = self.text.split("\n")

    def definition(self) -> Definition | None:
        """The one function or class the text defines, else None."""
        body = self.tree.body
        if self.prefix:
            body = body[0].body if isinstance(body[0], ast.If) else []
        if len(body) != 1 or not isinstance(body[0], Definition):
            return None
        return body[0]

    def char(self, line: int, byte_column: int) -> tuple[int, int]:
        """A position of the AST (1-based line, UTF-8 byte column) in characters."""
        text = self.lines[line - 1]
        return line - 1, len(text.encode("utf-8")[:byte_column].decode("utf-8"))

    def offset(self, position: tuple[int, int]) -> int:
        """A (0-based line, character column) as an offset in :attr:`text`."""
        line, column = position
        return sum(len(text) + 1 for text in self.lines[:line]) + column

    def span(self, node: ast.AST) -> tuple[tuple[int, int], tuple[int, int]]:
        """A node's (start, end) as (0-based line, character column)."""
        start = self.char(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.char(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return start, end

    def segment(self, node: ast.AST) -> str:
        """A node's text."""
        (line, column), (end_line, end_column) = self.span(node)
        if line == end_line:
            return self.lines[line][column:end_column]
        middle = self.lines[line + 1 : end_line]
        return "\n".join(
            [self.lines[line][column:], *middle, self.lines[end_line][:end_column]]
        )

    def indentation(self, line: int) -> str:
        """The whitespace a (1-based) line starts with."""
        text = self.lines[line - 1]
        return text[: len(text) - len(text.lstrip(" \t"))]

    def apply(self, edits: list[_Edit]) -> str:
        """The original text (unwrapped) with ``edits`` made."""
        lines = list(self.lines)
        for edit in sorted(edits, key=lambda e: e.start, reverse=True):
            (line, column), (end_line, end_column) = edit.start, edit.end
            joined = lines[line][:column] + edit.text + lines[end_line][end_column:]
            lines[line : end_line + 1] = joined.split("\n")
        return "\n".join(lines)[len(self.prefix) :]


def docstring_of(definition: Definition) -> ast.Constant | None:
    """The string of a definition's own docstring statement, if it has one."""
    body = definition.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        return body[0].value
    return None


def _strings_in_code(definition: Definition) -> set[str]:
    """The string constants of a definition, its own docstring left out."""
    own = docstring_of(definition)
    return {
        inspect.cleandoc(node.value)
        for node in ast.walk(definition)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node is not own
    }


def _docstring_edit(old: DefinitionText, new: DefinitionText) -> _Edit | None:
    old_def, new_def = old.definition(), new.definition()
    assert old_def is not None and new_def is not None
    doc = docstring_of(new_def)
    if doc is None or len(doc.value.strip()) == 0:
        return None
    before = docstring_of(old_def)
    if before is not None and before.value == doc.value:
        return None
    if inspect.cleandoc(doc.value) in _strings_in_code(old_def):
        return None  # a string of the code moved up: that documents nothing
    first = old_def.body[0]
    line_start = old.char(first.lineno, first.col_offset)
    if old.lines[line_start[0]][: line_start[1]].strip():
        return None  # the body shares the header's line: no place for a docstring
    # Docstring lines are cosmetic: move them from the reply's body column
    # to the original's.
    theirs, ours = new.indentation(doc.lineno), old.indentation(first.lineno)
    lines = new.segment(doc).split("\n")
    moved = [lines[0]] + [
        ours + line[len(theirs) :] if line.startswith(theirs) else line
        for line in lines[1:]
    ]
    text = "\n".join(moved)
    if before is not None:
        start, end = old.span(before)
        return _Edit(start, end, text)
    return _Edit((line_start[0], 0), (line_start[0], 0), f"{ours}{text}\n")


def arguments_of(definition: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    """Every parameter of a function, ``*args`` and ``**kwargs`` last."""
    args = definition.args
    found = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    found += [a for a in (args.vararg, args.kwarg) if a is not None]
    return found


def _names_known(annotation: ast.expr, old: ast.AST) -> bool:
    """Whether every name an annotation uses is a builtin or one the original
    definition already reads (a hint needing a new import is left out).
    """
    known = {n.id for n in ast.walk(old) if isinstance(n, ast.Name)}
    used = {n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)}
    return all(name in known or hasattr(builtins, name) for name in used)


def parameters_end(old: DefinitionText, definition: ast.AST) -> tuple[int, int] | None:
    """Where the parameter list's closing parenthesis ends (characters)."""
    line = definition.lineno  # type: ignore[attr-defined]
    text = "\n".join(old.lines[line - 1 :]) + "\n"
    depth = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type != tokenize.OP:
                continue
            if token.string in "([{":
                depth += 1
            elif token.string in ")]}":
                depth -= 1
                if depth == 0:
                    row, column = token.end
                    return line - 1 + row - 1, column
    except (tokenize.TokenError, SyntaxError):
        return None
    return None


def _hint_edits(old: DefinitionText, new: DefinitionText) -> list[_Edit]:
    old_def, new_def = old.definition(), new.definition()
    if not isinstance(old_def, ast.FunctionDef | ast.AsyncFunctionDef):
        return []
    if not isinstance(new_def, ast.FunctionDef | ast.AsyncFunctionDef):
        return []
    theirs = {a.arg: a.annotation for a in arguments_of(new_def) if a.annotation}
    edits: list[_Edit] = []
    for argument in arguments_of(old_def):
        hint = theirs.get(argument.arg)
        if hint is None or not _names_known(hint, old_def):
            continue
        text = new.segment(hint)
        if "\n" in text:
            continue
        if argument.annotation is not None:
            if old.segment(argument.annotation) != text:
                start, end = old.span(argument.annotation)
                edits.append(_Edit(start, end, text))
            continue
        _, end = old.span(argument)
        edits.append(_Edit(end, end, f": {text}"))
    returns = new_def.returns
    if returns is not None and _names_known(returns, old_def):
        text = new.segment(returns)
        if "\n" in text:
            return edits
        if old_def.returns is not None:
            if old.segment(old_def.returns) != text:
                start, end = old.span(old_def.returns)
                edits.append(_Edit(start, end, text))
        elif (where := parameters_end(old, old_def)) is not None:
            edits.append(_Edit(where, where, f" -> {text}"))
    return edits


def graft(guard: Guard, old: str, new: str, indent: str = "") -> Grafted | None:
    """``old`` with what ``guard`` lets change taken from ``new``, or None.

    ``old`` and ``new`` are one definition each as the file holds them (later
    lines indented by ``indent``). None when the guard allows more than
    docstrings and type hints, either side is not one definition of the same
    kind, or nothing could be taken.
    """
    if not guard.kinds <= _GRAFTABLE:
        return None
    try:
        before, after = DefinitionText(old, indent), DefinitionText(new, indent)
    except (SyntaxError, ValueError, RecursionError):
        return None
    old_def, new_def = before.definition(), after.definition()
    if old_def is None or new_def is None:
        return None
    if isinstance(old_def, ast.ClassDef) != isinstance(new_def, ast.ClassDef):
        return None
    edits: list[_Edit] = []
    taken: list[str] = []
    if "docstring" in guard.kinds and (edit := _docstring_edit(before, after)):
        edits.append(edit)
        taken.append("its docstring")
    if "type_hints" in guard.kinds and (hints := _hint_edits(before, after)):
        edits.extend(hints)
        taken.append("its type hints")
    if not edits:
        return None
    text = before.apply(edits)
    return Grafted(text, tuple(taken)) if text != old else None
