r"""Discovery agrees with Python's own parser on generated programs.

Hypothesis writes valid Python: nested ``class`` / ``def`` / ``async def`` with
decorators, bodies of simple statements, compound statements (``if``, ``for``,
``while``, ``with``, ``try``, ``match``) holding more definitions, comments at
any indentation, blank lines, multi-line statements, non-ASCII names and
strings, with ``\n`` or ``\r\n`` line endings. Every definition ``ast`` sees
must be found by ``extract_source`` in the same order, with the same qualified
name, kind and range (``ast`` lines are 1-based, ours 0-based; both count
columns in UTF-8 bytes).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st
from remora_core.discovery import extract_source

# ---- a tiny Python AST to generate from ----------------------------------------------


@dataclass(frozen=True)
class Simple:
    """A statement; continuation lines are indented one level deeper."""

    lines: tuple[str, ...]


@dataclass(frozen=True)
class Comment:
    text: str
    indent: int  # absolute column: comments may sit at any indentation


@dataclass(frozen=True)
class Blank:
    whitespace: str


@dataclass(frozen=True)
class Def:
    decorators: tuple[tuple[str, ...], ...]
    is_async: bool
    name: str
    body: tuple
    compact: bool  # ``def f(): pass`` when the body is one one-line statement


@dataclass(frozen=True)
class Class:
    decorators: tuple[tuple[str, ...], ...]
    name: str
    bases: str
    body: tuple


@dataclass(frozen=True)
class Compound:
    """Clauses of one compound statement: ``(header, body)`` pairs."""

    clauses: tuple[tuple[str, tuple], ...]


SIMPLE = [
    ("pass",),
    ("return",),
    ("return 1",),
    ("return 'ñ😀'",),
    ("x = 1  # trailing",),
    ("...",),
    ("value = compute(1, 2)",),
    ("items = [", "1,", "2,", "]"),
    ("call(", "'中文',", ")"),
    ('"""A docstring', 'over two lines."""'),
    (
        "total = 1 + \\",
        "2",
    ),
]
NAMES = ["f", "load", "Item", "_private", "café", "naïve", "名前", "x1", "Ünïcode"]
DECORATORS = [
    ("@dec",),
    ("@pkg.dec",),
    ("@dec(1)",),
    ("@register(", "'name',", ")"),
    ("@property",),
]

simple = st.sampled_from(SIMPLE).map(Simple)
comment = st.builds(
    Comment,
    st.sampled_from(["# note", "# ñ 😀", "#", "# def fake():"]),
    st.integers(0, 12),
)
blank = st.builds(Blank, st.sampled_from(["", "  ", "\t"]))
leaf = st.one_of(simple, simple, comment, blank)
decorators = st.lists(st.sampled_from(DECORATORS), max_size=2).map(tuple)


def real(statement) -> bool:
    return not isinstance(statement, Comment | Blank)


def as_body(items: list) -> tuple:
    """Make a body: it needs a statement besides comments and blank lines."""
    if not any(real(item) for item in items):
        items = [*items, Simple(("pass",))]
    return tuple(items)


def extend(inner: st.SearchStrategy) -> st.SearchStrategy:
    body = st.lists(inner, min_size=1, max_size=4).map(as_body)
    names = st.sampled_from(NAMES)
    conditional = st.one_of(
        st.tuples(
            st.just("if x:"),
            body,
            st.lists(st.tuples(st.just("elif y:"), body), max_size=1),
            st.lists(st.tuples(st.just("else:"), body), max_size=1),
        ).map(lambda t: Compound(((t[0], t[1]), *t[2], *t[3]))),
        st.tuples(st.sampled_from(["for i in x:", "while x:"]), body).map(
            lambda t: Compound((t,))
        ),
        st.tuples(st.sampled_from(["with x as y:", "async with x:"]), body).map(
            lambda t: Compound((t,))
        ),
        st.tuples(body, body, st.lists(body, max_size=1)).map(
            lambda t: Compound(
                (
                    ("try:", t[0]),
                    ("except E:", t[1]),
                    *(("finally:", b) for b in t[2]),
                )
            )
        ),
        st.tuples(body, body).map(
            lambda t: Compound(
                (
                    (
                        "match x:",
                        (Compound((("case [a, b]:", t[0]), ("case _:", t[1]))),),
                    ),
                )
            )
        ),
    )
    return st.one_of(
        st.builds(Def, decorators, st.booleans(), names, body, st.booleans()),
        st.builds(
            Class, decorators, names, st.sampled_from(["", "(Base)", "(A, B)"]), body
        ),
        conditional,
    )


statements = st.recursive(leaf, extend, max_leaves=30)
# Top-level items lean towards definitions so most examples nest something.
modules = st.lists(st.one_of(extend(statements), statements), min_size=1, max_size=5)


# ---- rendering -----------------------------------------------------------------------


def render(items, depth: int, unit: str) -> list[str]:
    out: list[str] = []
    pad = unit * depth
    for item in items:
        if isinstance(item, Simple):
            out.append(pad + item.lines[0])
            out.extend(pad + unit + line for line in item.lines[1:])
        elif isinstance(item, Comment):
            out.append(" " * item.indent + item.text)
        elif isinstance(item, Blank):
            out.append(item.whitespace)
        elif isinstance(item, Def | Class):
            for decorator in item.decorators:
                out.append(pad + decorator[0])
                out.extend(pad + unit + line for line in decorator[1:])
            if isinstance(item, Def):
                header = f"{'async ' if item.is_async else ''}def {item.name}():"
                only = item.body[0] if len(item.body) == 1 else None
                if item.compact and isinstance(only, Simple) and len(only.lines) == 1:
                    out.append(f"{pad}{header} {only.lines[0]}")
                    continue
            else:
                header = f"class {item.name}{item.bases}:"
            out.append(pad + header)
            out.extend(render(item.body, depth + 1, unit))
        elif isinstance(item, Compound):
            for header, body in item.clauses:
                out.append(pad + header)
                out.extend(render(body, depth + 1, unit))
    return out


# ---- what ast says -------------------------------------------------------------------


def ast_definitions(source: str) -> list[tuple]:
    found: list[tuple] = []

    def visit(node: ast.AST, scope: str, in_class: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                qualified = f"{scope}.{child.name}" if scope else child.name
                if isinstance(child, ast.ClassDef):
                    kind = "class"
                else:
                    kind = "method" if in_class else "function"
                first = min([d.lineno for d in child.decorator_list] + [child.lineno])
                found.append(
                    (
                        kind,
                        qualified,
                        first - 1,  # span start line
                        child.col_offset,  # span start column (decorators align)
                        child.lineno - 1,  # the name's line
                        child.end_lineno - 1,
                        child.end_col_offset,
                    )
                )
                visit(child, qualified, isinstance(child, ast.ClassDef))
            elif isinstance(child, ast.stmt | ast.match_case | ast.excepthandler):
                visit(child, scope, in_class)

    visit(ast.parse(source), "", False)
    return found


def remora_definitions(source: str) -> list[tuple]:
    extraction = extract_source("gen.py", source.encode(), read_inline_ids=False)
    assert not extraction.has_errors, source
    return [
        (
            d.kind.value,
            d.qualified_name,
            d.span.start_line,
            d.span.start_col,
            d.name_span.start_line,
            d.span.end_line,
            d.span.end_col,
        )
        for d in extraction.definitions
    ]


@settings(max_examples=200, deadline=None)
@given(
    module=modules,
    unit=st.sampled_from(["    ", "  ", "\t"]),
    newline=st.sampled_from(["\n", "\r\n"]),
    final_newline=st.booleans(),
)
def test_definitions_match_python_ast(module, unit, newline, final_newline):
    source = newline.join(render(module, 0, unit)) + (newline if final_newline else "")
    expected = ast_definitions(source)  # also proves the generated text is valid
    assert remora_definitions(source) == expected, source


def test_the_generator_produces_nested_definitions():
    """Guard against a generator that silently stopped nesting."""
    source = "\n".join(
        render(
            [
                Class(
                    (("@dec",),),
                    "A",
                    "",
                    (
                        Compound(
                            (
                                (
                                    "if x:",
                                    (Def((), True, "m", (Simple(("pass",)),), False),),
                                ),
                            )
                        ),
                        Comment("# end", 0),
                    ),
                )
            ],
            0,
            "    ",
        )
    )
    assert (
        source
        == "@dec\nclass A:\n    if x:\n        async def m():\n            pass\n# end"
    )
    assert ast_definitions(source) == [
        ("class", "A", 0, 0, 1, 4, 16),
        ("method", "A.m", 3, 8, 3, 4, 16),
    ]
    assert remora_definitions(source) == ast_definitions(source)
