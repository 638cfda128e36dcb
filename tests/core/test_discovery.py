"""What discovery finds in tricky Python.

The nodes of the outline, their ranges, inline ids, call sites and imports.
Lines and columns are zero-based, as the editor receives them.
"""

from __future__ import annotations

import textwrap

import pytest
from remora_core.discovery import extract_source
from remora_core.discovery.references import ImportRef
from remora_core.model import NodeKind


def extract(source: str, *, inline: bool = False, path: str = "pkg/mod.py"):
    return extract_source(
        path, textwrap.dedent(source).encode(), read_inline_ids=inline
    )


def outline(source: str, **kwargs) -> list[tuple[str, NodeKind]]:
    return [(d.qualified_name, d.kind) for d in extract(source, **kwargs).definitions]


def by_name(extraction):
    return {d.qualified_name: d for d in extraction.definitions}


# ---- nodes and ranges ----------------------------------------------------------------


def test_a_decorated_definition_spans_its_decorators_and_is_selected_by_name():
    found = by_name(
        extract(
            """\
            import functools


            @functools.cache
            @register(
                "x",
            )
            def cached(n):
                return n
            """
        )
    )
    cached = found["cached"]
    assert cached.kind is NodeKind.FUNCTION
    assert (cached.span.start_line, cached.span.start_col) == (3, 0)
    assert (cached.name_span.start_line, cached.name_span.start_col) == (7, 4)
    assert (cached.name_span.end_line, cached.name_span.end_col) == (7, 10)
    assert (cached.span.end_line, cached.span.end_col) == (8, 12)


def test_nested_classes_and_functions_have_dotted_qualified_names():
    assert outline(
        """\
        class Outer:
            class Inner:
                def method(self):
                    def helper():
                        pass

        def outer():
            def inner():
                class Local:
                    def m(self):
                        pass
        """
    ) == [
        ("Outer", NodeKind.CLASS),
        ("Outer.Inner", NodeKind.CLASS),
        ("Outer.Inner.method", NodeKind.METHOD),
        ("Outer.Inner.method.helper", NodeKind.FUNCTION),
        ("outer", NodeKind.FUNCTION),
        ("outer.inner", NodeKind.FUNCTION),
        ("outer.inner.Local", NodeKind.CLASS),
        ("outer.inner.Local.m", NodeKind.METHOD),
    ]


def test_parents_index_the_enclosing_definition():
    extraction = extract(
        """\
        class A:
            def m(self):
                def f():
                    pass
        def top():
            pass
        """
    )
    names = [d.qualified_name for d in extraction.definitions]
    parents = [
        names[d.parent] if d.parent >= 0 else None for d in extraction.definitions
    ]
    assert parents == [None, "A", "A.m", None]


def test_async_def_is_a_function_or_a_method():
    assert outline(
        """\
        async def fetch():
            pass

        class Client:
            async def get(self):
                pass
        """
    ) == [
        ("fetch", NodeKind.FUNCTION),
        ("Client", NodeKind.CLASS),
        ("Client.get", NodeKind.METHOD),
    ]


def test_definitions_under_compound_statements_are_found():
    assert outline(
        """\
        class C:
            if TYPE_CHECKING:
                def typed(self): ...
            else:
                def untyped(self): ...
            try:
                def in_try(self): ...
            except ImportError:
                def in_except(self): ...
            finally:
                def in_finally(self): ...

        def f(x):
            with open(x) as fh:
                def in_with(): ...
            for item in x:
                def in_for(): ...
            else:
                def in_for_else(): ...
            while x:
                def in_while(): ...
            match x:
                case [a, b]:
                    def in_case(): ...
                case _:
                    class InCase: ...
        """
    ) == [
        ("C", NodeKind.CLASS),
        ("C.typed", NodeKind.METHOD),
        ("C.untyped", NodeKind.METHOD),
        ("C.in_try", NodeKind.METHOD),
        ("C.in_except", NodeKind.METHOD),
        ("C.in_finally", NodeKind.METHOD),
        ("f", NodeKind.FUNCTION),
        ("f.in_with", NodeKind.FUNCTION),
        ("f.in_for", NodeKind.FUNCTION),
        ("f.in_for_else", NodeKind.FUNCTION),
        ("f.in_while", NodeKind.FUNCTION),
        ("f.in_case", NodeKind.FUNCTION),
        ("f.InCase", NodeKind.CLASS),
    ]


def test_lambdas_and_expressions_are_not_nodes():
    assert outline("handler = lambda x: x\nvalue = [y for y in range(3)]\n") == []


def test_trailing_comments_are_not_part_of_a_span():
    found = by_name(
        extract(
            """\
            class A:
                def m(self):
                    return 1  # same line
                    # trailing, indented like the body

                # trailing, indented like the class body
            # trailing at column 0
            """
        )
    )
    for name in ("A", "A.m"):
        span = found[name].span
        assert (span.end_line, span.end_col) == (2, 16), name


def test_a_hash_that_is_no_comment_ends_nothing_early():
    """A ``#`` on a definition's last line sends the span's end to the tree
    (the fast path reads the text only when no comment can end the node).
    """
    source = 'def f():\n    return "#x"\n\n\ndef g():\n    pass  # done\n'
    found = by_name(extract(source))
    assert (found["f"].span.end_line, found["f"].span.end_col) == (1, 15)
    assert (found["g"].span.end_line, found["g"].span.end_col) == (5, 8)


def test_the_name_span_of_a_non_ascii_name_is_in_bytes_and_flagged():
    found = by_name(extract("def café(x):\n    return 'ñ'\n"))
    name = found["café"].name_span
    assert (name.start_col, name.end_col) == (4, 9)  # "café" is 5 UTF-8 bytes
    assert name.ascii is False  # the converter must use the line text
    assert found["café"].span.ascii is False  # the end line holds 'ñ'


@pytest.mark.parametrize(
    "broken",
    [
        "def broken(x):\n    return x +\n",
        "def broken(x):\n    if x\n        return 3\n",
        "def (x):\n    pass\n",
        "class Broken(:\n    pass\n",
    ],
)
def test_good_definitions_around_a_syntax_error_are_still_found(broken):
    source = f"def first():\n    return 1\n\n{broken}\ndef last():\n    return 2\n"
    extraction = extract_source("m.py", source.encode(), read_inline_ids=False)
    assert extraction.has_errors
    names = [d.qualified_name for d in extraction.definitions]
    assert names[0] == "first"
    assert names[-1] == "last"
    last = extraction.definitions[-1]
    assert last.span.start_line == source.splitlines().index("def last():")


def test_a_method_after_a_broken_one_keeps_its_class():
    source = (
        "class A:\n"
        "    def first(self):\n"
        "        return 1\n"
        "    def broken(self):\n"
        "        return )\n"
        "    def last(self):\n"
        "        return 2\n"
    )
    extraction = extract_source("m.py", source.encode(), read_inline_ids=False)
    assert extraction.has_errors
    first = extraction.definitions[0]
    assert (first.qualified_name, first.kind) == ("A", NodeKind.CLASS)
    assert ("A.last", NodeKind.METHOD) in [
        (d.qualified_name, d.kind) for d in extraction.definitions
    ]


def test_the_file_span_covers_the_whole_text():
    source = "x = 1\r\ny = 'é'"
    extraction = extract_source("m.py", source.encode(), read_inline_ids=False)
    span = extraction.span
    assert span is not None
    assert (span.start_byte, span.end_byte) == (0, len(source.encode()))
    assert (span.end_line, span.end_col) == (1, len("y = 'é'".encode()))
    assert extraction.line_count == 2


# ---- inline ids ----------------------------------------------------------------------

INLINE = """\
# remora-file: rm_file0001
def load():    # rm_abcd1234
    pass

class Store:  # rm_short
    def save(
        self,
    ):    # rm_save2222
        x = 1    # rm_body4444

def plain():
    return 0    # rm_body5555
"""


def test_inline_ids_are_read_when_enabled():
    extraction = extract(INLINE, inline=True)
    assert extraction.file_inline_id == "rm_file0001"
    assert {d.qualified_name: d.inline_id for d in extraction.definitions} == {
        "load": "rm_abcd1234",
        "Store": None,  # not the shape of an id
        "Store.save": "rm_save2222",  # the comment ends the header's last line
        "plain": None,  # a comment in the body belongs to the body
    }


def test_inline_ids_are_ignored_when_disabled():
    extraction = extract(INLINE, inline=False)
    assert extraction.file_inline_id is None
    assert all(d.inline_id is None for d in extraction.definitions)


def test_the_file_id_comment_must_be_the_first_line():
    assert extract("\n# remora-file: rm_file0001\n", inline=True).file_inline_id is None
    crlf = extract_source(
        "m.py", b"# remora-file: rm_file0001\r\nx = 1\r\n", read_inline_ids=True
    )
    assert crlf.file_inline_id == "rm_file0001"


# ---- call sites ----------------------------------------------------------------------


def test_call_sites_name_their_owner_and_dotted_callee():
    extraction = extract(
        """\
        import os

        def run(self):
            os.path.join("a", "b")
            helper()
            self.save()
            make()()
            items[0]()
            get_obj().method()

        class K:
            value = compute()

            def m(self):
                def nested():
                    self.m()
                return nested()

        main()
        """
    )
    names = [d.qualified_name for d in extraction.definitions]

    def owner(index):
        return names[index] if index >= 0 else "<file>"

    assert sorted((owner(i), parts) for i, parts in extraction.calls) == sorted(
        [
            ("run", ("os", "path", "join")),
            ("run", ("helper",)),
            ("run", ("self", "save")),
            ("run", ("make",)),  # the outer call of make()() names nothing
            ("run", ("get_obj",)),  # .method() on a call result: unresolvable
            ("K", ("compute",)),
            ("K.m.nested", ("self", "m")),
            ("K.m", ("nested",)),
            ("<file>", ("main",)),
        ]
    )


def test_references_can_be_skipped_for_the_typing_path():
    from remora_core.discovery import extract_tree
    from remora_core.discovery.parser import parse
    from remora_core.text import LineIndex

    text = b"import os\ndef f():\n    os.getcwd()\n"
    extraction = extract_tree(
        "m.py", text, parse(text), LineIndex(text), with_references=False
    )
    assert [d.name for d in extraction.definitions] == ["f"]
    assert extraction.calls == [] and extraction.imports == []
    assert extraction.has_references is False


# ---- imports -------------------------------------------------------------------------


def test_definitions_and_imports_deep_in_bodies_are_found_past_stray_keywords():
    # A body is walked only if its text holds ``def``, ``class`` or ``import``:
    # each definition and import here is one level further than the last, the
    # spellings vary, and the keywords also sit in names, strings and comments.
    extraction = extract(
        """\
        def outer(default=None):  # the defaults
            "classes are not defined here"
            if default:
                for x in range(3):
                    try:
                        import json
                    finally:
                        async\tdef inner():
                            with open(x) as f:
                                class \\
                                    Deep:
                                    def method(self): pass
            undefined = "import nothing"
            return undefined
        """
    )
    assert [(d.qualified_name, d.kind) for d in extraction.definitions] == [
        ("outer", NodeKind.FUNCTION),
        ("outer.inner", NodeKind.FUNCTION),
        ("outer.inner.Deep", NodeKind.CLASS),
        ("outer.inner.Deep.method", NodeKind.METHOD),
    ]
    assert extraction.imports == [ImportRef("json", 0, None, "json")]


def test_imports_of_every_shape_in_document_order():
    extraction = extract(
        """\
        import os
        import os.path
        import a.b.c as abc, json
        from x import y
        from x.y import (z as zz, w)
        from . import sibling
        from .. import parent_mod
        from ..pkg.mod import thing as t
        from ...deep import *
        from .mod import *

        def f():
            import inner_mod
        """
    )
    assert extraction.imports == [
        ImportRef("os", 0, None, "os"),
        ImportRef("os.path", 0, None, "os"),
        ImportRef("a.b.c", 0, None, "abc"),
        ImportRef("json", 0, None, "json"),
        ImportRef("x", 0, "y", "y"),
        ImportRef("x.y", 0, "z", "zz"),
        ImportRef("x.y", 0, "w", "w"),
        ImportRef("", 1, "sibling", "sibling"),
        ImportRef("", 2, "parent_mod", "parent_mod"),
        ImportRef("pkg.mod", 2, "thing", "t"),
        ImportRef("deep", 3, "*", "*"),
        ImportRef("mod", 1, "*", "*"),
        ImportRef("inner_mod", 0, None, "inner_mod"),
    ]


def test_a_rebound_import_name_keeps_document_order():
    # The last binding wins in Python, so the order is what resolution relies on;
    # tree-sitter's query captures came back reversed for exactly this text.
    extraction = extract("import os\nimport pkg.a as mod\nimport pkg.b as mod\nx = 1\n")
    assert [(ref.module, ref.binding) for ref in extraction.imports] == [
        ("os", "os"),
        ("pkg.a", "mod"),
        ("pkg.b", "mod"),
    ]


def test_an_extraction_comes_back_whole_from_a_worker_process():
    """Workers pickle extractions as plain tuples (``FileExtraction.__reduce__``);
    what the server unpickles must be the same definitions, as named tuples.
    """
    import pickle

    from remora_core.model import Definition, Span

    extraction = extract(
        """\
        # remora-file: rm_file0001
        import os.path as p
        from . import sibling


        class Ünï:  # rm_class001
            @staticmethod
            def m(x):
                return p.join(sibling.f(x))
        """,
        inline=True,
    )
    back = pickle.loads(pickle.dumps(extraction, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == extraction
    assert [type(d) for d in back.definitions] == [Definition, Definition]
    assert {type(s) for d in back.definitions for s in (d.span, d.name_span)} == {Span}
    klass, method = back.definitions
    assert (klass.name, klass.inline_id, klass.name_span.ascii) == (
        "Ünï",
        "rm_class001",
        False,
    )
    assert (method.qualified_name, method.parent, method.span.start_line) == (
        "Ünï.m",
        0,
        6,  # from its decorator
    )
    assert back.calls == [(1, ("p", "join")), (1, ("sibling", "f"))]
    assert back.file_inline_id == "rm_file0001"
