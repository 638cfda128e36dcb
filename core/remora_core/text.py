"""Byte offsets in UTF-8 text and LSP positions, in any negotiated encoding.

Tree-sitter and the store speak in UTF-8 byte offsets; the editor speaks in
``(line, character)`` positions whose ``character`` counts code units of the
position encoding negotiated at ``initialize`` (UTF-16 unless the client offered
UTF-8 or UTF-32). Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r``, as the LSP
specification says; a position past the end of a line means the end of that line.

Everything here is pure and cheap on ASCII text, which is the common case: for an
all-ASCII line the byte column *is* the character column in every encoding.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from enum import StrEnum
from itertools import accumulate

_NEWLINE = re.compile(rb"\r\n|\r|\n")


class PositionEncoding(StrEnum):
    """How the ``character`` of an LSP position counts."""

    UTF8 = "utf-8"
    UTF16 = "utf-16"
    UTF32 = "utf-32"


_PLUS_ONE = (1).__add__


def _line_starts(text: bytes) -> list[int]:
    """Byte offset at which every line of ``text`` starts (the first is 0)."""
    if b"\r" not in text:
        # Fast path: split is done in C; each line contributes len + 1 bytes
        # (``map`` rather than a generator: no Python frame per line).
        lengths = accumulate(map(_PLUS_ONE, map(len, text.split(b"\n"))))
        return [0, *list(lengths)[:-1]]
    return [0, *(m.end() for m in _NEWLINE.finditer(text))]


def _decode(chunk: bytes) -> str:
    """Decode UTF-8, keeping lone surrogates an editor may have sent us."""
    try:
        return chunk.decode("utf-8", errors="surrogatepass")
    except UnicodeDecodeError:  # a chunk cut inside a character
        return chunk.decode("utf-8", errors="replace")


def _units(chunk: bytes, encoding: PositionEncoding) -> int:
    """Count the code units of ``chunk`` (UTF-8 bytes) in ``encoding``."""
    if encoding is PositionEncoding.UTF8 or chunk.isascii():
        return len(chunk)
    decoded = _decode(chunk)
    if encoding is PositionEncoding.UTF32:
        return len(decoded)
    # Characters outside the BMP take two UTF-16 code units.
    return len(decoded) + sum(1 for ch in decoded if ord(ch) > 0xFFFF)


def _bytes_for_units(line: bytes, units: int, encoding: PositionEncoding) -> int:
    """Byte length of the longest prefix of ``line`` spanning ``units`` code units.

    A count that falls inside a character (half a surrogate pair, the middle of a
    multi-byte sequence) rounds down to the start of that character.
    """
    if line.isascii():
        return min(units, len(line))
    if encoding is PositionEncoding.UTF8:
        end = min(units, len(line))
        while 0 < end < len(line) and (line[end] & 0xC0) == 0x80:
            end -= 1
        return end
    consumed = 0
    offset = 0
    for ch in _decode(line):
        width = 2 if encoding is PositionEncoding.UTF16 and ord(ch) > 0xFFFF else 1
        if consumed + width > units:
            break
        consumed += width
        offset += len(ch.encode("utf-8", errors="surrogatepass"))
    return min(offset, len(line))


class LineIndex:
    """Line starts of one UTF-8 text, for converting offsets and positions.

    The starts are found when first needed: a parsing worker mostly needs only
    the line count and the last line (tree-sitter gives every node's line),
    and listing the starts of 1.7 M lines was 2 % of a first index.
    """

    __slots__ = ("_known_starts", "_text")

    def __init__(self, text: bytes) -> None:
        self._text = text
        self._known_starts: list[int] | None = None

    @property
    def _starts(self) -> list[int]:
        starts = self._known_starts
        if starts is None:
            starts = self._known_starts = _line_starts(self._text)
        return starts

    def after_edit(
        self, new_text: bytes, start: int, old_end: int, new_end: int
    ) -> LineIndex:
        """The index of ``new_text``, which is this text with ``start..old_end``
        replaced by ``new_text[start:new_end]``; only the touched lines are
        rescanned (a full rebuild when ``\r`` makes line ends ambiguous).
        """
        if b"\r" in new_text or b"\r" in self._text:
            return LineIndex(new_text)
        first = self.line_of(start)
        last = self.line_of(old_end)
        delta = new_end - old_end
        head = self._starts[: first + 1]
        window_start = head[-1]
        tail = [offset + delta for offset in self._starts[last + 1 :]]
        window_end = tail[0] if tail else len(new_text) + 1
        middle = []
        position = new_text.find(b"\n", window_start, window_end - 1)
        while position >= 0:
            middle.append(position + 1)
            position = new_text.find(b"\n", position + 1, window_end - 1)
        index = LineIndex.__new__(LineIndex)
        index._text = new_text
        index._known_starts = head + middle + tail
        return index

    @property
    def line_count(self) -> int:
        """Number of lines (a text ending in a newline has an empty last line)."""
        if self._known_starts is None and b"\r" not in self._text:
            return self._text.count(b"\n") + 1
        return len(self._starts)

    def last_line_start(self) -> int:
        """Byte offset at which the last line starts."""
        if self._known_starts is None:  # after the last line break, if any
            text = self._text
            return max(text.rfind(b"\n"), text.rfind(b"\r")) + 1
        return self._starts[-1]

    def line_of(self, offset: int) -> int:
        """Zero-based line holding the byte ``offset``."""
        return bisect_right(self._starts, offset) - 1

    def line_start(self, line: int) -> int:
        """Byte offset at which ``line`` starts (clamped to the text)."""
        if line < 0:
            return 0
        if line >= len(self._starts):
            return len(self._text)
        return self._starts[line]

    def line_content_end(self, line: int) -> int:
        """Byte offset of the end of ``line``, before its line terminator."""
        if line + 1 < len(self._starts):
            end = self._starts[line + 1]
            if self._text[end - 1 : end] == b"\n":
                end -= 1
            if self._text[end - 1 : end] == b"\r":
                end -= 1
            return end
        return len(self._text)

    def position(
        self, offset: int, encoding: PositionEncoding = PositionEncoding.UTF16
    ) -> tuple[int, int]:
        """LSP ``(line, character)`` of the byte ``offset``."""
        offset = max(0, min(offset, len(self._text)))
        line = self.line_of(offset)
        start = self._starts[line]
        return line, _units(self._text[start:offset], encoding)

    def offset(
        self,
        line: int,
        character: int,
        encoding: PositionEncoding = PositionEncoding.UTF16,
    ) -> int:
        """Byte offset of an LSP position, clamped as the specification requires."""
        if line < 0:
            return 0
        if line >= len(self._starts):
            return len(self._text)
        start = self._starts[line]
        end = self.line_content_end(line)
        return start + _bytes_for_units(
            self._text[start:end], max(0, character), encoding
        )


@dataclass(frozen=True, slots=True)
class ByteEdit:
    """One replacement in byte terms, with the rows/columns tree-sitter wants.

    Tree-sitter counts rows by ``\\n`` only and columns in bytes, so its points are
    computed here separately from :class:`LineIndex`, which follows LSP line rules.
    """

    start_byte: int
    old_end_byte: int
    new_end_byte: int
    start_point: tuple[int, int]
    old_end_point: tuple[int, int]
    new_end_point: tuple[int, int]


def ts_point(text: bytes, offset: int) -> tuple[int, int]:
    """Tree-sitter ``(row, byte column)`` of ``offset`` in ``text``."""
    row = text.count(b"\n", 0, offset)
    column = offset - (text.rfind(b"\n", 0, offset) + 1)
    return row, column


def splice(
    text: bytes, start: int, end: int, replacement: bytes
) -> tuple[bytes, ByteEdit]:
    """Replace ``text[start:end]`` and describe the edit for tree-sitter."""
    new_text = text[:start] + replacement + text[end:]
    new_end = start + len(replacement)
    edit = ByteEdit(
        start_byte=start,
        old_end_byte=end,
        new_end_byte=new_end,
        start_point=ts_point(text, start),
        old_end_point=ts_point(text, end),
        new_end_point=ts_point(new_text, new_end),
    )
    return new_text, edit


def encode_text(text: str) -> bytes:
    """UTF-8 bytes of editor text; lone surrogates keep their width, not crash."""
    return text.encode("utf-8", errors="surrogatepass")
