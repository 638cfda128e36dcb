"""Invisible characters that make code read differently than it runs.

Bidirectional controls (U+202A–U+202E, U+2066–U+2069) reorder what an editor
shows without changing what Python parses: a proposal can show a comment where
the interpreter sees code (Trojan Source, CVE-2021-42574). Other format
characters (Unicode category ``Cf``: zero-width spaces and joiners, U+200E/F
marks, a byte-order mark in the middle of a file) are invisible too and can make
two identifiers look the same.

Control characters (C0 but tab, line feed, carriage return and form feed;
DEL; C1) are not shown by an editor and are *acted on* by a terminal: an
``ESC [2K`` erases the line it is on when the file or its diff is printed
(hiding an ``os.system(...)`` from ``cat`` and ``remora diff``), ``ESC ]52``
writes the clipboard. Python needs none of them raw (a string writes
``'\x1b'``), so they follow the same rule. A carriage return never reaches a
proposal raw (the source's lines are split on it), and a form feed is a
page break PEP 8 allows.

The rule for proposals (``definition_edits.py``): a new source may not carry a
hidden character the code it replaces does not already have (or more of
one than it has) — the model is told
which, where, and how to write it instead (an escape inside a string). If the
person's own code has them and the proposal keeps them, the proposal says so in
its title, diagnostic and diff (:func:`note`, :func:`reveal`), and the diff shows
each one as a visible marker.
"""

from __future__ import annotations

import re
import unicodedata

BIDI_CONTROLS = frozenset(
    chr(code) for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
)

CODE_CONTROLS = frozenset("\t\n\r\f")
"""Control characters that are code: indentation, line ends, page breaks."""

SUSPECT = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]|[^\x00-\x7f]")
"""Every character :func:`is_hidden` may be true of (one scan of the text)."""

CONTROL_NAMES = {
    0x00: "NULL",
    0x07: "BELL",
    0x08: "BACKSPACE",
    0x0B: "LINE TABULATION",
    0x1B: "ESCAPE",
    0x7F: "DELETE",
}
"""Names for the usual control characters (``unicodedata`` has none)."""


def is_control(char: str) -> bool:
    """Whether ``char`` is a control character a terminal acts on (C0 but the
    code ones, DEL, C1).
    """
    return unicodedata.category(char) == "Cc" and char not in CODE_CONTROLS


def is_hidden(char: str) -> bool:
    """Whether ``char`` is a bidirectional control, another invisible format
    character or a control character.
    """
    return (
        char in BIDI_CONTROLS or unicodedata.category(char) == "Cf" or is_control(char)
    )


def hidden_in(text: str) -> dict[str, list[int]]:
    """Each hidden character of ``text`` with the (1-based) lines it is on."""
    found: dict[str, list[int]] = {}
    line, counted = 1, 0
    for match in SUSPECT.finditer(text):
        char = match.group()
        if not is_hidden(char):
            continue
        line += text.count("\n", counted, match.start())
        counted = match.start()
        lines = found.setdefault(char, [])
        if not lines or lines[-1] != line:
            lines.append(line)
    return found


def describe(char: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE``, ``U+001B ESCAPE``."""
    fallback = "CONTROL CHARACTER" if is_control(char) else "FORMAT CHARACTER"
    name = CONTROL_NAMES.get(ord(char)) or unicodedata.name(char, fallback)
    return f"U+{ord(char):04X} {name}"


def _listing(found: dict[str, list[int]]) -> str:
    return "; ".join(
        f"{describe(char)} on line{'s' if len(lines) > 1 else ''} "
        f"{', '.join(map(str, lines[:5]))}"
        for char, lines in found.items()
    )


def added_hidden(old: str, new: str) -> str | None:
    """Why ``new`` may not replace ``old`` (None if it may): the hidden
    characters it has that ``old`` has not, for the model to act on.
    """
    found = hidden_in(new)
    if not found:
        return None
    # More of a character than the old source has is adding it: one escape
    # character of the person's must not let a model add any number more.
    added = {
        char: lines
        for char, lines in found.items()
        if new.count(char) > old.count(char)
    }
    controls = {char: lines for char, lines in added.items() if is_control(char)}
    invisible = {char: lines for char, lines in added.items() if char not in controls}
    reasons = []
    if invisible:
        reasons.append(
            "the new source contains invisible characters that can make code read "
            "differently than it runs (Trojan Source, CVE-2021-42574): "
            f"{_listing(invisible)} (lines of the new source). Remove them; if a "
            "string needs one, write it as an escape such as '\\u202e'."
        )
    if controls:
        reasons.append(
            "the new source contains raw control characters, which a terminal "
            "acts on instead of showing (an escape sequence can erase a line or "
            f"write the clipboard): {_listing(controls)} (lines of the new "
            "source). Remove them; if a string needs one, write it as an escape "
            "such as '\\x1b'."
        )
    return " ".join(reasons) or None


def note(new: str) -> str | None:
    """What a person must be told about a proposal whose text keeps hidden
    characters (already in their code); None when it has none.
    """
    found = hidden_in(new)
    if not found:
        return None
    names = ", ".join(f"U+{ord(char):04X}" for char in found)
    return f"keeps invisible characters already in your code ({names})"


def reveal(text: str) -> str:
    """``text`` with each hidden character shown as ``⟦U+202E⟧``."""
    return SUSPECT.sub(
        lambda m: f"⟦U+{ord(m.group()):04X}⟧" if is_hidden(m.group()) else m.group(),
        text,
    )
