"""Tree-sitter parsing of Python, one parser per thread.

``tree_sitter.Parser`` objects are not safe to share between threads, and worker
processes need their own, so parsers are created lazily per thread. Queries are
compiled once per process from the ``.scm`` files next to this module.
"""

from __future__ import annotations

import threading
from functools import cache
from importlib import resources

import tree_sitter
import tree_sitter_python

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


@cache
def query(name: str) -> tree_sitter.Query:
    """The compiled query ``queries/python/<name>.scm``."""
    text = resources.files(__package__).joinpath("queries", "python", f"{name}.scm")
    return tree_sitter.Query(python_language(), text.read_text(encoding="utf-8"))
