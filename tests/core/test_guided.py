"""Grammars that keep the code: the pieces a guarded reply is written in.

The grammar is the definition's text with slots. Filled with nothing, the
pieces give back the original; filled as a model would, they give a
definition that passes the same guard. Whether llama.cpp takes the grammar
is tested on the embedded model (``test_real_model.py``).
"""

from __future__ import annotations

from remora_core.agents.guided import (
    Slot,
    keep_code_grammar,
    keep_code_pieces,
)
from remora_core.review.guards import Guard, check_guard

DOCSTRING = Guard(frozenset({"docstring"}))
HINTS = Guard(frozenset({"type_hints"}))
BOTH = Guard(frozenset({"docstring", "type_hints"}))


def fill(pieces, *written: str) -> str:
    """The text of the pieces with the slots, in order, holding ``written``
    (``None`` or missing: the original there).
    """
    values = iter(written)
    out = []
    for piece in pieces:
        if isinstance(piece, Slot):
            value = next(values, None)
            out.append(piece.original if value is None else value)
        else:
            out.append(piece)
    return "".join(out)


BANNER = '''@cache
def banner(name):
    text = """Welcome,
{name}!
  Enjoy your stay.
"""
    return text.format(name=name)'''


def test_a_docstring_slot_after_the_header_and_the_code_as_it_is():
    pieces = keep_code_pieces(DOCSTRING, BANNER)
    assert [p.kind for p in pieces if isinstance(p, Slot)] == ["docstring"]
    assert fill(pieces) == BANNER
    written = fill(pieces, '    """Greet name."""\n')
    assert written.startswith('@cache\ndef banner(name):\n    """Greet name."""\n')
    assert written.endswith(BANNER.split("\n", 2)[2])
    assert check_guard(DOCSTRING, BANNER, written).ok is True


def test_an_existing_docstring_is_the_slot():
    source = (
        'class Point:\n    """A point."""\n\n    def move(self):\n        """Go."""'
    )
    pieces = keep_code_pieces(DOCSTRING, source)
    assert fill(pieces) == source
    written = fill(pieces, '"""A point in the plane."""')
    assert written == source.replace("A point.", "A point in the plane.")


def test_hint_slots_after_each_parameter_and_the_parameter_list():
    source = (
        "def scale(\n    x,  # the value\n    *args,\n    factor=2,\n"
        "    flag: bool = False,\n    **options,\n):\n    return x * factor"
    )
    pieces = keep_code_pieces(HINTS, source)
    kinds = [p.kind for p in pieces if isinstance(p, Slot)]
    assert kinds == ["hint", "hint", "default", "hint", "hint", "hint"]
    assert fill(pieces) == source
    written = fill(pieces, ": float", ": int", ": int = ", None, ": str", " -> float")
    assert written == (
        "def scale(\n    x: float,  # the value\n    *args: int,\n"
        "    factor: int = 2,\n    flag: bool = False,\n    **options: str,\n"
        ") -> float:\n    return x * factor"
    )
    assert check_guard(HINTS, source, written).ok is True


def test_both_and_a_method_at_column_zero():
    source = "async def total(self, prices):\n    return sum(prices)"
    pieces = keep_code_pieces(BOTH, source)
    written = fill(pieces, None, ": list[float]", " -> float", '    """Sum."""\n')
    assert written == (
        'async def total(self, prices: list[float]) -> float:\n    """Sum."""\n'
        "    return sum(prices)"
    )
    assert check_guard(BOTH, source, written).ok is True


def test_the_grammar_holds_the_text_escaped_and_the_slot_rules():
    grammar = keep_code_grammar(DOCSTRING, 'def f(s="é\\t\\""):\n    return s')
    assert grammar is not None
    root = grammar.splitlines()[0]
    assert root.startswith('root ::= "```python\\n" "def f(s=\\"é\\\\t\\\\\\"\\"):\\n"')
    assert root.endswith('"\\n```"')
    assert "doc ::= " in grammar and "type ::= " in grammar


def test_no_grammar_for_renames_one_liners_or_what_is_not_one_definition():
    assert (
        keep_code_pieces(Guard(frozenset({"rename"})), "def f(a):\n    return a")
        is None
    )
    assert keep_code_pieces(DOCSTRING, "def f(a): return a") is None
    assert keep_code_pieces(DOCSTRING, "x = 1") is None
    assert keep_code_pieces(DOCSTRING, "def f(:") is None
    assert keep_code_pieces(HINTS, "class C:\n    x = 1") is None
