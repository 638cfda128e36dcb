"""Tree-sitter parsing of Python, one parser per thread.

``tree_sitter.Parser`` objects are not safe to share between threads, and worker
processes need their own, so parsers are created lazily per thread. Queries are
compiled once per process from the ``.scm`` files next to this module.
"""

from __future__ import annotations

import threading
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

import tree_sitter
import tree_sitter_python

if TYPE_CHECKING:
    from remora_core.text import LineIndex

_local = threading.local()


@cache
def python_language() -> tree_sitter.Language:
    """The tree-sitter Python grammar."""
    return tree_sitter.Language(tree_sitter_python.language())


def _parser() -> tree_sitter.Parser:
    parser = getattr(_local, "parser", None)
    if parser is None:
        parser = _local.parser = tree_sitter.Parser(python_language())
    return parser


def parse(source: bytes, old_tree: tree_sitter.Tree | None = None) -> tree_sitter.Tree:
    """Parse UTF-8 Python source, reusing ``old_tree`` (already edited) if given."""
    if old_tree is None:
        return _parser().parse(source)
    return _parser().parse(source, old_tree)


_EVERYTHING = [tree_sitter.Range((0, 0), (0xFFFFFFFF, 0xFFFFFFFF), 0, 0xFFFFFFFF)]


def parse_range(
    source: bytes, start: int, end: int, lines: LineIndex
) -> tree_sitter.Tree:
    """Parse only ``source[start:end]``; node positions stay those of ``source``."""
    parser = _parser()
    start_line, end_line = lines.line_of(start), lines.line_of(end)
    parser.included_ranges = [
        tree_sitter.Range(
            (start_line, start - lines.line_start(start_line)),
            (end_line, end - lines.line_start(end_line)),
            start,
            end,
        )
    ]
    try:
        return parser.parse(source)
    finally:
        parser.included_ranges = _EVERYTHING


@cache
def query(name: str) -> tree_sitter.Query:
    """The compiled query ``queries/python/<name>.scm``."""
    assert __package__ is not None  # set for every module of a package
    text = resources.files(__package__).joinpath("queries", "python", f"{name}.scm")
    return tree_sitter.Query(python_language(), text.read_text(encoding="utf-8"))
