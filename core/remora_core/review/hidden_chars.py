"""Invisible characters that make code read differently than it runs.

Bidirectional controls (U+202A–U+202E, U+2066–U+2069) reorder what an editor
shows without changing what Python parses: a proposal can show a comment where
the interpreter sees code (Trojan Source, CVE-2021-42574). Other format
characters (Unicode category ``Cf``: zero-width spaces and joiners, U+200E/F
marks, a byte-order mark in the middle of a file) are invisible too and can make
two identifiers look the same.

The rule for proposals (``definition_edits.py``): a new source may not carry a
hidden character the code it replaces does not already have — the model is told
which, where, and how to write it instead (an escape inside a string). If the
person's own code has them and the proposal keeps them, the proposal says so in
its title, diagnostic and diff (:func:`note`, :func:`reveal`), and the diff shows
each one as a visible marker.
"""

from __future__ import annotations

import unicodedata

BIDI_CONTROLS = frozenset(
    chr(code) for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
)


def is_hidden(char: str) -> bool:
    """Whether ``char`` is a bidirectional control or another invisible format
    character.
    """
    return char in BIDI_CONTROLS or unicodedata.category(char) == "Cf"


def hidden_in(text: str) -> dict[str, list[int]]:
    """Each hidden character of ``text`` with the (1-based) lines it is on."""
    if text.isascii():  # the usual case, and quick
        return {}
    found: dict[str, list[int]] = {}
    line = 1
    for char in text:
        if char == "\n":
            line += 1
        elif not char.isascii() and is_hidden(char):
            lines = found.setdefault(char, [])
            if not lines or lines[-1] != line:
                lines.append(line)
    return found


def describe(char: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE``."""
    return f"U+{ord(char):04X} {unicodedata.name(char, 'FORMAT CHARACTER')}"


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
    already = hidden_in(old)
    added = {char: lines for char, lines in found.items() if char not in already}
    if not added:
        return None
    return (
        "the new source contains invisible characters that can make code read "
        "differently than it runs (Trojan Source, CVE-2021-42574): "
        f"{_listing(added)} (lines of the new source). Remove them; if a string "
        "needs one, write it as an escape such as '\\u202e'."
    )


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
    if text.isascii():
        return text
    return "".join(
        f"⟦U+{ord(char):04X}⟧" if not char.isascii() and is_hidden(char) else char
        for char in text
    )
