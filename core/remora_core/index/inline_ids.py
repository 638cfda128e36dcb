"""Inline id comments (``ids.inline_comments``): what is missing, as edits.

With the setting on, every definition line may end with its id
(``def load(self):    # rm_a1b2c3d4``, at least four spaces before ``#``) and a
file may start with ``# remora-file: rm_xxxxxxxx``; ids read from comments win
over name matching, so they survive renames (DESIGN §4). The server never writes
them behind the editor: :func:`missing_id_comments` lists the insertions the
editor is offered as one code action.

A file whose first line is a ``#!`` or encoding line gets no file comment (it
must stay first); a definition line that already carries an id keeps it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from remora_core.discovery.definitions import FILE_INLINE_ID, INLINE_ID
from remora_core.model import NodeKind
from remora_core.text import LineIndex

if TYPE_CHECKING:
    from remora_core.model import CodeNode

KEEP_FIRST = re.compile(rb"\A#!|\A#.*coding[:=]")


def missing_id_comments(
    text: bytes, nodes: list[CodeNode], lines: LineIndex | None = None
) -> list[tuple[int, str]]:
    """(byte offset, text to insert) for every missing id comment of a file."""
    lines = lines or LineIndex(text)
    newline = "\r\n" if b"\r\n" in text else "\n"
    insertions: list[tuple[int, str]] = []
    for node in nodes:
        if node.kind is NodeKind.FILE:
            if not FILE_INLINE_ID.match(text) and not KEEP_FIRST.match(text):
                insertions.append((0, f"# remora-file: {node.id}{newline}"))
            continue
        line = node.name_span.start_line
        end = lines.line_content_end(line)
        if INLINE_ID.search(text, lines.line_start(line), end):
            continue
        insertions.append((end, f"    # {node.id}"))
    return sorted(insertions)
