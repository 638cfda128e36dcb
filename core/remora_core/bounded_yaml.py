"""YAML from a repository or a file, parsed with bounded work and memory.

``yaml.safe_load`` runs no code, but it is not bounded: aliases let 440 bytes
stand for millions of strings (a "billion laughs"), which then grow without
limit in whatever walks the data — validation, an error message quoting it
(34 MB), JSON sent to the server (1.6 GB). So every YAML Remora reads
(``remora.yaml``, the person's settings file, ``bundle.yaml``, graph files,
``remora graph run FILE``) goes through :func:`load_yaml`:

- a text longer than ``max_chars`` is refused before it is parsed;
- aliases (``*name``, and so ``<<: *name``) are refused where they appear: a
  Remora file never needs one, and without them the data is no larger than
  the text;
- at most :data:`MAX_DEPTH` levels of nesting and :data:`MAX_NODES` values
  (the composer is recursive; ``[[[[…`` would otherwise end in a
  RecursionError).

Every refusal is a :class:`YamlRefused`, a ``yaml.YAMLError`` — callers that
report broken YAML report it the same way, with the line and column. PyYAML's
own messages quote at most a line of the input (its snippets are cut at 75
characters); :func:`shown` cuts any other quoted value.
"""

from __future__ import annotations

import reprlib
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.events import AliasEvent
from yaml.nodes import Node

MAX_CHARS = 1_000_000
"""The largest YAML text parsed by default (settings and bundles are small)."""
MAX_DEPTH = 64
"""Levels of nesting allowed."""
MAX_NODES = 100_000
"""Values (scalars, lists, mappings) allowed in one document."""
SHOWN_CHARS = 200
"""Characters of a value quoted in a message."""


class YamlRefused(yaml.YAMLError):
    """YAML Remora does not parse: too large, aliased or too deep."""


class _BoundedLoader(yaml.SafeLoader):
    """``SafeLoader`` whose composer refuses aliases and counts what it builds."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._nodes = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if self.check_event(AliasEvent):
            event = self.peek_event()
            raise ComposerError(
                None,
                None,
                "aliases (*name) are not allowed in Remora's YAML files; "
                "write the value out",
                event.start_mark,
            )
        self._nodes += 1
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH or self._nodes > MAX_NODES:
                event = self.peek_event()
                what = (
                    f"more than {MAX_DEPTH} levels of nesting"
                    if self._depth > MAX_DEPTH
                    else f"more than {MAX_NODES:,} values"
                )
                raise ComposerError(
                    None, None, f"{what}: not a Remora file", event.start_mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def load_yaml(text: str, *, max_chars: int = MAX_CHARS) -> Any:
    """The data of one YAML document, bounded; :class:`YamlRefused` (or
    another ``yaml.YAMLError`` for broken YAML) otherwise.
    """
    if len(text) > max_chars:
        raise YamlRefused(f"{len(text):,} characters, more than the {max_chars:,} read")
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_data()
    except ComposerError as error:
        if error.problem and error.problem_mark is not None:
            mark = error.problem_mark
            raise YamlRefused(
                f"line {mark.line + 1}, column {mark.column + 1}: {error.problem}"
            ) from None
        raise
    finally:
        loader.dispose()


def shown(value: Any, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` cut to about ``limit`` characters, for a message.

    A value from a file may be huge; only its start is quoted, and ``repr``
    of a container is built no further than needed.
    """
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        text = repr(value[: limit + 1] if isinstance(value, str | bytes) else value)
    else:
        text = _bounded_repr(value, limit)
    return text if len(text) <= limit else text[:limit] + "…"


def _bounded_repr(value: Any, limit: int) -> str:
    """The start of a container's repr, without building the whole."""
    short = reprlib.Repr()
    short.maxlevel = 3
    short.maxlist = short.maxdict = short.maxtuple = short.maxset = 8
    short.maxstring = short.maxother = limit // 4
    return short.repr(value)
