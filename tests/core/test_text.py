"""Byte offsets ↔ editor positions, in every position encoding an editor may pick.

The editor puts the cursor at ``(line, character)``; the engine works in UTF-8
byte offsets. If these disagree, hover lands on the wrong function and edits
land in the wrong place, so the expected values here are computed independently
with Python's own codecs, not with the module under test.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from remora_core.discovery.parser import parse
from remora_core.text import LineIndex, PositionEncoding, encode_text, splice, ts_point

ENCODINGS = list(PositionEncoding)

# é (2 UTF-8 bytes), ñ, 中文 (3 bytes each), 😀 (4 bytes, 2 UTF-16 units),
# and all three kinds of line ending.
MIXED = "héllo ñ 中文 😀x\r\nsecond 😀😀 line\rthird é\nlast"


def width(text: str, encoding: PositionEncoding) -> int:
    """Code units of ``text`` in ``encoding``, by Python's codecs."""
    if encoding is PositionEncoding.UTF8:
        return len(text.encode("utf-8"))
    if encoding is PositionEncoding.UTF16:
        return len(text.encode("utf-16-le")) // 2
    return len(text)


def lsp_lines(text: str) -> list[str]:
    r"""Split lines the way LSP does (``\r\n``, ``\r``, ``\n``)."""
    lines, current, i = [], [], 0
    while i < len(text):
        ch = text[i]
        if ch in "\r\n":
            lines.append("".join(current))
            current = []
            if ch == "\r" and text[i + 1 : i + 2] == "\n":
                i += 1
        else:
            current.append(ch)
        i += 1
    lines.append("".join(current))
    return lines


def expected_position(
    text: str, char_index: int, encoding: PositionEncoding
) -> tuple[int, int]:
    """Compute the LSP position before ``text[char_index]`` from strings."""
    before = text[:char_index]
    line_texts = lsp_lines(before)
    return len(line_texts) - 1, width(line_texts[-1], encoding)


def boundaries(text: str) -> list[tuple[int, int]]:
    r"""List ``(char index, byte offset)`` of every place a cursor can be.

    That is every code-point boundary except between the ``\r`` and ``\n`` of
    one line ending.
    """
    found = []
    offset = 0
    for index in range(len(text) + 1):
        if not (
            index > 0 and text[index - 1] == "\r" and text[index : index + 1] == "\n"
        ):
            found.append((index, offset))
        if index < len(text):
            offset += len(text[index].encode("utf-8", errors="surrogatepass"))
    return found


# ---- known values --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("encoding", "after_emoji"),
    [
        (PositionEncoding.UTF8, 5),  # 1 + 4 bytes
        (PositionEncoding.UTF16, 3),  # 1 + a surrogate pair
        (PositionEncoding.UTF32, 2),  # 1 + one code point
    ],
)
def test_an_astral_character_counts_differently_per_encoding(encoding, after_emoji):
    text = "a😀b".encode()
    lines = LineIndex(text)
    assert lines.position(5, encoding) == (0, after_emoji)
    assert lines.offset(0, after_emoji, encoding) == 5
    assert text[lines.offset(0, after_emoji, encoding) :] == b"b"


@pytest.mark.parametrize(
    ("text", "encoding", "character"),
    [
        ("é中x", PositionEncoding.UTF8, 5),
        ("é中x", PositionEncoding.UTF16, 2),
        ("é中x", PositionEncoding.UTF32, 2),
        ("ñ😀😀x", PositionEncoding.UTF16, 5),
        ("ñ😀😀x", PositionEncoding.UTF32, 3),
    ],
)
def test_position_of_the_x_after_non_ascii(text, encoding, character):
    data = text.encode()
    lines = LineIndex(data)
    x = data.index(b"x")
    assert lines.position(x, encoding) == (0, character)
    assert lines.offset(0, character, encoding) == x


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_every_boundary_of_mixed_text_round_trips(encoding):
    data = MIXED.encode()
    lines = LineIndex(data)
    for index, offset in boundaries(MIXED):
        position = lines.position(offset, encoding)
        assert position == expected_position(MIXED, index, encoding), index
        assert lines.offset(*position, encoding) == offset, index


def test_crlf_lone_cr_and_lf_each_end_one_line():
    data = b"one\r\ntwo\rthree\nfour"
    lines = LineIndex(data)
    assert lines.line_count == 4
    assert [lines.line_start(n) for n in range(4)] == [0, 5, 9, 15]
    assert lines.position(data.index(b"two")) == (1, 0)
    assert lines.position(data.index(b"three")) == (2, 0)
    assert lines.position(data.index(b"four")) == (3, 0)
    # The end of each line's content is before its terminator.
    assert [lines.line_content_end(n) for n in range(4)] == [3, 8, 14, 19]


def test_a_text_ending_in_a_newline_has_an_empty_last_line():
    lines = LineIndex(b"x = 1\r\n")
    assert lines.line_count == 2
    assert lines.position(7) == (1, 0)
    assert lines.offset(1, 0) == 7


# ---- clamping ------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_character_past_the_end_of_a_line_means_its_end(encoding):
    data = "déf 😀\r\nnext\rlast\n".encode()
    lines = LineIndex(data)
    assert lines.offset(0, 999, encoding) == data.index(b"\r\n")
    assert lines.offset(1, 999, encoding) == data.index(b"\rlast")
    assert lines.offset(2, 999, encoding) == data.rindex(b"\n")


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_line_past_the_end_means_the_end_of_the_text(encoding):
    data = "a\nbé".encode()
    lines = LineIndex(data)
    assert lines.offset(2, 0, encoding) == len(data)
    assert lines.offset(50, 3, encoding) == len(data)
    end = lines.position(len(data), encoding)
    assert lines.position(len(data) + 10, encoding) == end


def test_negative_positions_clamp_to_the_start():
    lines = LineIndex(b"abc\ndef")
    assert lines.offset(-1, 2) == 0
    assert lines.offset(1, -5) == 4


def test_a_utf16_count_inside_a_surrogate_pair_rounds_down():
    data = "a😀b".encode()
    lines = LineIndex(data)
    # Character 2 is the middle of 😀 (units 1 and 2): the cursor goes before it.
    assert lines.offset(0, 2, PositionEncoding.UTF16) == 1


@pytest.mark.parametrize(("character", "expected"), [(1, 0), (2, 0), (3, 3), (4, 3)])
def test_a_utf8_count_inside_a_multibyte_character_rounds_down(character, expected):
    data = "中é".encode()  # 中 is bytes 0-2, é is bytes 3-4
    assert LineIndex(data).offset(0, character, PositionEncoding.UTF8) == expected


def test_encode_text_keeps_lone_surrogates_instead_of_crashing():
    data = encode_text("a\ud83db")  # half an emoji, as a buggy client may send
    assert len(data) == 5
    lines = LineIndex(data)
    assert lines.offset(0, 2, PositionEncoding.UTF16) == 4


# ---- tree-sitter points --------------------------------------------------------------


def test_ts_point_counts_rows_by_newline_and_columns_in_bytes():
    text = "é = 1\r\nb = '中'\n".encode()
    assert ts_point(text, 0) == (0, 0)
    assert ts_point(text, text.index(b"1")) == (0, 5)
    assert ts_point(text, text.index(b"b")) == (1, 0)
    assert ts_point(text, text.index("中".encode())) == (1, 5)
    assert ts_point(text, len(text)) == (2, 0)
    assert ts_point(b"a\rbc", 3) == (0, 3)  # a lone CR does not start a row


def test_splice_describes_a_multiline_replacement():
    text = b"def f():\n    return 1\n"
    start = text.index(b"1")
    replacement = "(\n    'é',\n'😀')".encode()
    new_text, edit = splice(text, start, start + 1, replacement)
    assert new_text == "def f():\n    return (\n    'é',\n'😀')\n".encode()
    assert (edit.start_byte, edit.old_end_byte) == (start, start + 1)
    assert edit.new_end_byte == start + len(replacement)
    assert edit.start_point == (1, 11)
    assert edit.old_end_point == (1, 12)
    assert edit.new_end_point == (3, 7)  # bytes: quote, 4-byte emoji, quote, paren


def _shape(tree) -> list[tuple]:
    found = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        found.append(
            (
                node.type,
                node.start_byte,
                node.end_byte,
                tuple(node.start_point),
                tuple(node.end_point),
            )
        )
        stack.extend(reversed(node.children))
    return found


SOURCE = (
    "class Café:\r\n"
    "    def grüß(self):\n"
    "        return '😀'  # emoji\n"
    "\n"
    "# a lone\rCR is no line break for tree-sitter\n"
    "def tail(x):\n"
    "    return [x,\n"
    "            x]\n"
)


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    replacement=st.sampled_from(
        [
            "",
            "x",
            "\n",
            "\r\n",
            "\r",
            "é",
            "😀",
            "def g():\n    pass\n",
            "(\n",
            "'中文'",
        ]
    ),
)
def test_incremental_reparse_after_splice_matches_a_fresh_parse(data, replacement):
    """An edit described by ``splice`` keeps every node's range right.

    Bytes and points must be what a fresh parse of the new text gives.
    """
    text = SOURCE.encode()
    cuts = [offset for _, offset in boundaries(SOURCE)]
    start = data.draw(st.sampled_from(cuts), label="start")
    end = data.draw(st.sampled_from([c for c in cuts if c >= start]), label="end")
    tree = parse(text)
    new_text, edit = splice(text, start, end, replacement.encode())
    tree.edit(
        start_byte=edit.start_byte,
        old_end_byte=edit.old_end_byte,
        new_end_byte=edit.new_end_byte,
        start_point=edit.start_point,
        old_end_point=edit.old_end_point,
        new_end_point=edit.new_end_point,
    )
    fresh = _shape(parse(new_text))
    assert _shape(parse(new_text, tree)) == fresh
    # And ts_point agrees with tree-sitter's own idea of every node's point.
    for _, start_byte, end_byte, start_point, end_point in fresh:
        assert ts_point(new_text, start_byte) == start_point
        assert ts_point(new_text, end_byte) == end_point


# ---- the round-trip property ---------------------------------------------------------

line_endings_heavy = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(["\n", "\r", "é", "中", "😀", "\U0010ffff"]),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(text=line_endings_heavy, data=st.data())
def test_position_then_offset_returns_the_offset(text, data):
    """For any text and any place a cursor can be, in every encoding."""
    encoded = text.encode("utf-8")
    lines = LineIndex(encoded)
    index, offset = data.draw(st.sampled_from(boundaries(text)), label="boundary")
    for encoding in ENCODINGS:
        position = lines.position(offset, encoding)
        assert position == expected_position(text, index, encoding)
        assert lines.offset(*position, encoding) == offset
