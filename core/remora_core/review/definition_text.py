"""A definition's source text read with Python's ``ast``, with positions in
characters: what the guided grammars (``agents/guided.py``) and the
unused-parameter check (``unused_parameters.py``) need to find a definition's
docstring, parameters and the end of its parameter list in the text as the
file holds it (a method's later lines carry the class's indentation).
"""

from __future__ import annotations

import ast
import io
import tokenize
from typing import Protocol

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


class Located(Protocol):
    """A node with a position in the source: a statement, an expression, a
    parameter (every one ``ast.parse`` made has its end too).
    """

    lineno: int
    col_offset: int
    end_lineno: int | None
    end_col_offset: int | None


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

    def span(self, node: Located) -> tuple[tuple[int, int], tuple[int, int]]:
        """A node's (start, end) as (0-based line, character column)."""
        assert node.end_lineno is not None and node.end_col_offset is not None
        start = self.char(node.lineno, node.col_offset)
        end = self.char(node.end_lineno, node.end_col_offset)
        return start, end

    def segment(self, node: Located) -> str:
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


def arguments_of(definition: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    """Every parameter of a function, ``*args`` and ``**kwargs`` last."""
    args = definition.args
    found = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    found += [a for a in (args.vararg, args.kwarg) if a is not None]
    return found


def parameters_end(
    old: DefinitionText, definition: Definition
) -> tuple[int, int] | None:
    """Where the parameter list's closing parenthesis ends (characters)."""
    line = definition.lineno
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
