"""Incremental re-extraction after edits gives exactly what a fresh parse gives.

An open document re-walks only the definitions an edit touches and copies the
rest (``discovery/incremental.py``), or re-parses only the top-level statements
the edit touched (``discovery/statements.py``). These tests edit real sources at
random places — inside bodies, across definitions, renaming classes, adding and
removing lines, near the top and the bottom of the file — and compare every
definition with a from-scratch extraction.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from remora_core.discovery import statements
from remora_core.discovery.definitions import extract_definitions
from remora_core.discovery.extract import extract_source
from remora_core.index.documents import OpenDocument, TextChange
from remora_core.text import PositionEncoding

SOURCE = '''\
import os


@decorator
class Outer:
    """Doc."""

    def method(self, x):
        return helper(x) + 1

    class Inner:
        def deep(self):
            def local():
                return "é😀"
            return local()

    async def fetch(self):
        # comment
        return await self.method(2)


def helper(value):
    if value:
        def nested():
            pass
    return value


class Second(Outer):
    def method(self, x):
        return 2
'''

MANY = (
    "# header comment\n\nimport sys\n\n\n"
    + SOURCE
    + "".join(
        f"\n\nCONSTANT_{n} = {n}\n\n\ndef top_{n}(a):\n    return a + {n}\n"
        f"\n\nclass Holder{n}:\n    def get(self):\n        return top_{n}(1)\n"
        for n in range(8)
    )
    + "\n\nif __name__ == '__main__':\n    top_0(1)\n"
)
"""Many top-level statements, so that a few of them are a small share."""

SNIPPETS = [
    "x",
    "\n",
    "    ",
    "def f():\n    pass\n",
    "class K:\n",
    "#",
    "é",
    "😀",
    "):",
    "\n\n",
    "return 1\n",
    "'''",
    "@d\n",
    "pass",
]


def _outline(definitions):
    return [
        (d.kind, d.name, d.qualified_name, d.span, d.name_span, d.parent, d.source_hash)
        for d in definitions
    ]


@st.composite
def edits(draw, length: int):
    count = draw(st.integers(1, 6))
    result = []
    for _ in range(count):
        start = draw(
            st.one_of(  # where people type: anywhere, and at both ends of the file
                st.integers(0, length),
                st.integers(0, min(length, 120)),
                st.integers(max(0, length - 120), length),
            )
        )
        end = draw(st.integers(start, min(length, start + 30)))
        text = draw(st.sampled_from([*SNIPPETS, ""]))
        result.append((start, end, text))
        length += len(text) - (end - start)
    return result


def _position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index)
    prefix = text[text.rfind("\n", 0, index) + 1 : index]
    return line, len(prefix.encode("utf-16-le")) // 2


def _check_random_edits(data, text: str) -> None:
    document = OpenDocument("m.py", 1, text, 10**6)
    document.extract(read_inline_ids=False, with_references=False)
    for step, (start, end, new) in enumerate(data.draw(edits(len(text)))):
        start, end = min(start, len(text)), min(end, len(text))
        change = TextChange(new, _position(text, start), _position(text, end))
        text = text[:start] + new + text[end:]
        document.apply(step + 2, [change], PositionEncoding.UTF16)
        assert document.text == text.encode("utf-8", errors="surrogatepass")
        if data.draw(st.booleans()):  # sometimes several edits between extractions
            continue
        incremental = document.extract(read_inline_ids=False, with_references=False)
        # Reuse must give what a full walk of the same tree gives ...
        walked = extract_definitions(document.tree, document.text, document.lines)
        assert _outline(incremental.definitions) == _outline(walked)
        assert incremental.has_errors == document.tree.root_node.has_error
        # ... and, for valid code, what parsing from scratch gives. (With syntax
        # errors tree-sitter may recover differently when parsing incrementally.)
        if not document.tree.root_node.has_error:
            fresh = extract_source("m.py", document.text, read_inline_ids=False)
            assert _outline(incremental.definitions) == _outline(fresh.definitions)


@settings(max_examples=1000, deadline=None)
@given(data=st.data())
def test_incremental_extraction_matches_a_fresh_one(data):
    _check_random_edits(data, SOURCE)


@pytest.mark.parametrize("source", [MANY, SOURCE], ids=["many", "few"])
@settings(max_examples=1000, deadline=None)
@given(data=st.data())
def test_chunk_reparses_match_a_fresh_one_anywhere_in_the_file(source, data):
    # Chunks of any size allowed, so that every edit that can take the chunk
    # path does: in a file of many top-level statements, and of a few.
    with mock.patch.object(statements, "CHUNK_SHARE", 1):
        _check_random_edits(data, source)


def test_typing_a_character_in_a_large_file_reuses_definitions():
    path = Path(sysconfig.get_paths()["stdlib"]) / "_pydecimal.py"
    text = path.read_text(encoding="utf-8")
    document = OpenDocument("d.py", 1, text, 10**7)
    document.extract(read_inline_ids=False, with_references=False)
    index = text.index("def _round_half_up")
    line = text.count("\n", 0, index) + 1
    for version, typed in enumerate(["x", "y", ""], 2):
        change = TextChange(typed, (line, 8), (line, 8 + (version > 2)))
        document.apply(version, [change], PositionEncoding.UTF8)
        incremental = document.extract(read_inline_ids=False, with_references=False)
        fresh = extract_source("d.py", document.text, read_inline_ids=False)
        assert _outline(incremental.definitions) == _outline(fresh.definitions)


def test_typing_at_the_top_or_bottom_of_a_large_file_parses_one_chunk():
    path = Path(sysconfig.get_paths()["stdlib"]) / "_pydecimal.py"
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    document = OpenDocument("d.py", 1, text, 10**7)
    document.extract(read_inline_ids=False, with_references=False)
    top = text.count("\n", 0, text.index("        return _NaN\n"))  # ends a class
    first_function = text.count("\n", 0, text.index("def getcontext"))
    last = len(lines) - 1
    places = [
        (top, len(lines[top]), "  # typed"),  # the worst case for tree-sitter
        (first_function, len("def getcontext"), "x"),  # renaming it
        (last, len(lines[last]), "  # typed"),
    ]
    version = 1
    for line, column, typed in places:
        for insert in (True, False):
            version += 1
            end = column if insert else column + len(typed)
            change = TextChange(typed if insert else "", (line, column), (line, end))
            document.apply(version, [change], PositionEncoding.UTF8)
            incremental = document.extract(read_inline_ids=False, with_references=False)
            assert document.last_parse == "chunk", (line, insert)
            fresh = extract_source("d.py", document.text, read_inline_ids=False)
            assert _outline(incremental.definitions) == _outline(fresh.definitions)
    # References (after the debounce) need the whole tree: parsed then, exactly.
    settled = document.extract(read_inline_ids=False, with_references=True)
    assert document.last_parse == "whole"
    assert document.text.decode() == text
    fresh = extract_source("d.py", document.text, read_inline_ids=False)
    assert _outline(settled.definitions) == _outline(fresh.definitions)
    assert settled.calls == fresh.calls
