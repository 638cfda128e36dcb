"""Every glob Remora is given, matched in linear time: the one place for it.

Globs come from people and from repositories (``discovery.include`` and
``exclude``, ``secrets.exclude``, a graph's ``path`` and ``name``, an agent's
subscription). Compiled to a backtracking regular expression, a glob such as
``*a*a*a*a*a*a*a*a*a*a*a*ab`` takes minutes against a long file name, holding
the interpreter (and so the editor's outline) the whole time. Here every glob
becomes an RE2 expression (``google-re2``): RE2 runs in time linear in the
text, whatever the pattern, and a glob longer than :data:`MAX_GLOB_CHARS` is
refused.

Two dialects, as people expect them:

- :func:`name_matches` — ``fnmatch``'s: ``*`` any characters (``/`` too),
  ``?`` one, ``[abc]`` / ``[!abc]`` / ``[a-z]`` a class; case-sensitive.
- :func:`path_matches` — a project path: ``*`` and ``?`` stay within one
  folder, ``**/`` is zero or more folders, any other ``**`` spans folders.

:func:`gitignore` builds a gitignore-style list (``pathspec``'s exact rules,
matched by its RE2 back end) for ``discovery.include`` and ``exclude``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable
from typing import Any

import pathspec
import re2

log = logging.getLogger(__name__)

MAX_GLOB_CHARS = 1000
"""The longest glob accepted (a real one is a few dozen characters)."""
_RE2_MEMORY = 8 << 20
"""Bytes RE2 may use for one compiled glob."""


class GlobError(ValueError):
    """A glob that cannot be used; the message says why."""


def check(glob: str) -> str:
    """``glob`` if it can be matched, else :class:`GlobError` saying why."""
    _compiled(glob, False)
    return glob


def name_matches(name: str, glob: str) -> bool:
    """Whether ``name`` matches ``glob`` (``fnmatch`` rules, case-sensitive).
    An unusable glob matches nothing (:func:`check` says why, where globs are
    accepted).
    """
    return _matches(name, glob, False)


def path_matches(path: str, glob: str) -> bool:
    """Whether the project path ``path`` matches ``glob`` (``*`` within a
    folder, ``**`` across folders).
    """
    return _matches(path, glob, True)


def gitignore(lines: Iterable[str]) -> pathspec.GitIgnoreSpec:
    """A gitignore-style pattern list, matched by RE2 (linear time)."""
    lines = list(lines)
    for line in lines:
        if len(line) > MAX_GLOB_CHARS:
            raise GlobError(_too_long(line))
    return pathspec.GitIgnoreSpec.from_lines(lines, backend="re2")


def _matches(text: str, glob: str, slashes: bool) -> bool:
    try:
        pattern = _compiled(glob, slashes)
    except GlobError as error:
        _warn_once(str(error))
        return False
    return pattern.fullmatch(text) is not None


@functools.lru_cache(maxsize=1024)
def _compiled(glob: str, slashes: bool) -> Any:
    if len(glob) > MAX_GLOB_CHARS:
        raise GlobError(_too_long(glob))
    options = re2.Options()
    options.max_mem = _RE2_MEMORY
    options.dot_nl = True
    options.log_errors = False  # RE2 would write to stderr itself
    try:
        return re2.compile(translate(glob, slashes=slashes), options)
    except re2.error as error:  # a reversed range such as [z-a]
        raise GlobError(f"not a usable glob: {glob[:80]!r} ({error})") from None


def _too_long(glob: str) -> str:
    return (
        f"a glob of {len(glob):,} characters is too long (at most "
        f"{MAX_GLOB_CHARS:,}): {glob[:40]!r}…"
    )


@functools.lru_cache(maxsize=64)
def _warn_once(problem: str) -> None:
    log.warning("glob ignored: %s", problem)


def translate(glob: str, *, slashes: bool) -> str:
    """The RE2 expression (without anchors) of ``glob`` in one dialect."""
    any_char = "[^/]" if slashes else "."
    parts: list[str] = []
    i, end = 0, len(glob)
    while i < end:
        char = glob[i]
        if char == "*":
            stars = i
            while i < end and glob[i] == "*":
                i += 1
            if not slashes:
                parts.append(".*")
            elif i - stars == 1:
                parts.append("[^/]*")
            elif i < end and glob[i] == "/":
                parts.append("(?:.*/)?")  # **/: zero or more folders
                i += 1
            else:
                parts.append(".*")
            continue
        if char == "?":
            parts.append(any_char)
        elif char == "[" and (found := _class(glob, i, slashes)) is not None:
            expression, i = found
            parts.append(expression)
            continue
        else:
            parts.append(_escape(char))
        i += 1
    return "".join(parts)


def _class(glob: str, start: int, slashes: bool) -> tuple[str, int] | None:
    """The class ``[...]`` at ``start`` and the index after it, or None when
    it is not closed (then ``[`` is itself, as in ``fnmatch``).
    """
    i = start + 1
    negated = i < len(glob) and glob[i] == "!"  # fnmatch: [^a] holds ^ and a
    if negated:
        i += 1
    if i < len(glob) and glob[i] == "]":  # a leading ] is a member
        i += 1
    close = glob.find("]", i)
    if close < 0:
        return None
    body = glob[start + 1 + negated : close]
    members = "".join(
        char if char == "-" and 0 < k < len(body) - 1 else _escape(char)
        for k, char in enumerate(body)
    )
    if negated:
        return f"[^{'/' if slashes else ''}{members}]", close + 1
    return f"[{members}]", close + 1


def _escape(char: str) -> str:
    plain = char.isalnum() or char == "_" or ord(char) >= 128
    return char if plain else "\\" + char


__all__ = [
    "MAX_GLOB_CHARS",
    "GlobError",
    "check",
    "gitignore",
    "name_matches",
    "path_matches",
    "translate",
]
