"""Grammars that keep the code: guarded turns on the embedded model.

A request for a docstring or for type hints guards the code (``guards.py``).
The embedded 0.5B model often gets the asked part right and "improves" the
rest — a check for empty input added to ``average``, a multi-line string
re-indented — and at temperature 0 it sends the same reply again when told
why it was refused. So on the embedded model (llama.cpp, which takes a GBNF
grammar with the request) such a turn's reply is written under a grammar
built from the node's source: the source at column 0, literally, with slots
where the guard lets the model write —

- ``docstring``: a docstring right after the header (in place of the old
  one, if any), which the model must write;
- ``type_hints``: after each parameter an optional annotation (``x: int``,
  ``x: int = 1`` where it has a default; an existing one the model may
  rewrite) and an optional return annotation after the parameter list.

The model cannot change the code, so the guard never has to refuse it; what
it writes in the slots is its own, and the guard still checks the result
like any other reply. Renames change code text and get no grammar, nor does
a definition whose body shares its header's line.

:func:`keep_code_grammar` returns the grammar; :func:`keep_code_pieces` the
pieces it is made of (text and slots), which tests fill in by hand.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from remora_core.review.definition_text import (
    Definition,
    DefinitionText,
    arguments_of,
    docstring_of,
    parameters_end,
)
from remora_core.review.guards import Guard

_GUIDED = frozenset({"docstring", "type_hints"})

SLOT_RULES = r"""doc ::= dchar+
dchar ::= [^"\\] | "\"" [^"\\] | "\"\"" [^"\\]
type ::= atom (" | " atom)*
atom ::= name ("[" types "]")? | "[" types? "]" | "..." | "None"
types ::= type ("," " "? type)*
name ::= [A-Za-z_] [A-Za-z0-9_.]*
"""
"""A docstring's text (no backslashes, no run of three quotes) and the type
expressions an annotation may be: names, subscripts, unions, ``None``."""


@dataclass(frozen=True)
class Slot:
    """Where the model may write: a GBNF expression, and the text it stands
    for when the model writes nothing there (the original).
    """

    gbnf: str
    original: str
    kind: str
    """``docstring``, ``hint`` (a parameter's or the return's) or ``default``
    (between a parameter and its default: ``=`` or ``: T = ``)."""


Piece = str | Slot


def keep_code_pieces(guard: Guard, source: str) -> list[Piece] | None:
    """The definition ``source`` (at column 0) as text and slots, or None when
    the guard allows more than docstrings and hints or no slot fits.
    """
    if not guard.kinds <= _GUIDED:
        return None
    try:
        text = DefinitionText(source, "")
    except (SyntaxError, ValueError, RecursionError):
        return None
    definition = text.definition()
    if definition is None:
        return None
    cuts: list[tuple[int, int, Slot]] = []
    """(start, end, slot): the slot takes the place of source[start:end]."""
    if "docstring" in guard.kinds:
        cut = _docstring_cut(text, definition)
        if cut is None:
            return None
        cuts.append(cut)
    if "type_hints" in guard.kinds and isinstance(
        definition, ast.FunctionDef | ast.AsyncFunctionDef
    ):
        cuts.extend(_hint_cuts(text, definition))
    if not cuts:
        return None
    pieces: list[Piece] = []
    at = 0
    for start, end, slot in sorted(cuts, key=lambda c: c[0]):
        pieces.extend([source[at:start], slot])
        at = end
    pieces.append(source[at:])
    return [p for p in pieces if p != ""]


def _docstring_cut(
    text: DefinitionText, definition: Definition
) -> tuple[int, int, Slot] | None:
    old = docstring_of(definition)
    if old is not None:
        start, end = text.span(old)
        slot = Slot('"\\"\\"\\"" doc "\\"\\"\\""', text.segment(old), "docstring")
        return text.offset(start), text.offset(end), slot
    first = definition.body[0]
    line, column = text.char(first.lineno, first.col_offset)
    if text.lines[line][:column].strip():
        return None  # the body shares the header's line
    indent = text.indentation(first.lineno)
    here = text.offset((line, 0))
    gbnf = f'{_literal(indent)} "\\"\\"\\"" doc "\\"\\"\\"\\n"'
    return here, here, Slot(gbnf, "", "docstring")


def _hint_cuts(
    text: DefinitionText, definition: ast.FunctionDef | ast.AsyncFunctionDef
) -> list[tuple[int, int, Slot]]:
    source = text.text
    cuts: list[tuple[int, int, Slot]] = []
    defaults = _defaults(definition)

    def replaced(node: ast.expr) -> tuple[int, int, Slot]:
        start, end = (text.offset(p) for p in text.span(node))
        return start, end, Slot("type", source[start:end], "hint")

    for argument in arguments_of(definition):
        if argument.annotation is not None:
            cuts.append(replaced(argument.annotation))
            continue
        after = text.offset(text.span(argument)[1])
        default = defaults.get(argument.arg)
        if default is None:
            cuts.append((after, after, Slot('(": " type)?', "", "hint")))
            continue
        begin = text.offset(text.span(default)[0])
        between = source[after:begin]
        if between.strip() != "=":
            continue  # a comment between the name and its default: leave it
        gbnf = f'(": " type " = " | {_literal(between)})'
        cuts.append((after, begin, Slot(gbnf, between, "default")))
    if definition.returns is not None:
        cuts.append(replaced(definition.returns))
    elif (where := parameters_end(text, definition)) is not None:
        here = text.offset(where)
        cuts.append((here, here, Slot('(" -> " type)?', "", "hint")))
    return cuts


def _defaults(
    definition: ast.FunctionDef | ast.AsyncFunctionDef,
) -> dict[str, ast.expr]:
    """Each parameter's default, by name."""
    args = definition.args
    positional = [*args.posonlyargs, *args.args]
    found = {
        a.arg: d
        for a, d in zip(
            positional[len(positional) - len(args.defaults) :],
            args.defaults,
            strict=True,
        )
    }
    for argument, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if default is not None:
            found[argument.arg] = default
    return found


def _literal(text: str) -> str:
    """A GBNF string literal (UTF-8 as it is; quotes, backslashes and control
    characters escaped).
    """
    escaped = []
    for char in text:
        if char in '"\\':
            escaped.append("\\" + char)
        elif char == "\n":
            escaped.append("\\n")
        elif char == "\t":
            escaped.append("\\t")
        elif char == "\r":
            escaped.append("\\r")
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            escaped.append(f"\\x{ord(char):02X}")
        else:
            escaped.append(char)
    return '"' + "".join(escaped) + '"'


def keep_code_grammar(guard: Guard, source: str) -> str | None:
    """A GBNF grammar whose only replies are ``source`` in one fenced python
    block with the guard's slots filled; None when there is none to build.
    """
    pieces = keep_code_pieces(guard, source)
    if pieces is None:
        return None
    body = " ".join(p.gbnf if isinstance(p, Slot) else _literal(p) for p in pieces)
    return f'root ::= "```python\\n" {body} "\\n```"\n{SLOT_RULES}'
