"""Faster extraction finds exactly what the plain algorithm found.

Call sites are read from two query captures (names, attribute chains) with
texts decoded once per file; this checks them against the straightforward
reading (one capture, every callee read node by node) on stdlib files and on
sources with the shapes that take the slow path: non-ASCII names, spaces and
comments inside a chain, ``True.x``, broken code.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest
import tree_sitter
from remora_core.discovery.extract import extract_source
from remora_core.discovery.parser import python_language

_STDLIB = Path(sysconfig.get_paths()["stdlib"])
_FILES = [
    "argparse.py",
    "_pydecimal.py",
    "typing.py",
    "unittest/mock.py",
    "email/_header_value_parser.py",
    "json/encoder.py",
    "asyncio/base_events.py",
]
_SHAPES = """
import os
def f():
    os . path . join('a')
    os.path  # c
    .join('b')
    True.x()
    None.y()
    ñame.attr()
    ñame()
    self.a.b.c()
    f()(1)
    x[0].y()
    (a).b()
class C:
    def m(self):
        self.m()
        super().m()
        print.x()
def broken(:
    g.h(
"""

_PLAIN_QUERY = """
(call function: (identifier) @callee)
(call function: (attribute) @callee)
"""


def _reference_parts(node: tree_sitter.Node) -> tuple[str, ...] | None:
    parts: list[str] = []
    current = node
    while current.type == "attribute":
        attribute = current.child_by_field_name("attribute")
        obj = current.child_by_field_name("object")
        if attribute is None or obj is None or not attribute.text:
            return None
        parts.append(attribute.text.decode("utf-8", errors="replace"))
        current = obj
    if current.type != "identifier" or not current.text:
        return None
    parts.append(current.text.decode("utf-8", errors="replace"))
    return tuple(reversed(parts))


def _reference_calls(text: bytes) -> list[tuple[int, tuple[str, ...]]]:
    parser = tree_sitter.Parser(python_language())
    tree = parser.parse(text)
    definitions = extract_source("x.py", text, read_inline_ids=False).definitions
    query = tree_sitter.Query(python_language(), _PLAIN_QUERY)
    first: dict[tuple[int, tuple[str, ...]], int] = {}
    for node in tree_sitter.QueryCursor(query).captures(tree.root_node)["callee"]:
        parts = _reference_parts(node)
        if not parts:
            continue
        start = node.start_byte
        owner = -1
        for index, definition in enumerate(definitions):
            if definition.span.start_byte <= start < definition.span.end_byte:
                owner = index  # the last container found is the innermost
        site = (owner, parts)
        if first.get(site, start) >= start:
            first[site] = start
    return sorted(first, key=first.__getitem__)


@pytest.mark.parametrize("name", [*_FILES, "shapes"])
def test_call_sites_match_the_node_by_node_reading(name):
    if name == "shapes":
        text = _SHAPES.encode()
    else:
        path = _STDLIB / name
        if not path.exists():
            pytest.skip(f"{name} is not in this Python's stdlib")
        text = path.read_bytes()
    calls = extract_source(name, text, read_inline_ids=True).calls
    assert calls == _reference_calls(text)
    assert len(calls) > 3
