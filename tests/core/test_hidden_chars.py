"""Proposals cannot hide code behind invisible characters (issue 11 part 6).

A rewrite that adds a bidirectional control (Trojan Source, CVE-2021-42574) or
another invisible format character is refused with a reason the model can act
on; one that keeps such characters from the person's own code is allowed, and
its diff says so and shows them.
"""

from __future__ import annotations

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
