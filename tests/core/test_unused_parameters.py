"""A near miss: a rewrite adds a parameter its code never uses.

The finder on hand-built pairs, then runs through the real kernel with the
scripted model: refused once with the names, and a second such rewrite goes
through with a failed ``parameters-used`` check.
"""

from __future__ import annotations

import pytest
from remora_core.review.unused_parameters import unused_new_parameters

from tests.core.agent_support import of_type

JOIN = 'def join_words(words):\n    return " ".join(words)'


@pytest.mark.parametrize(
    ("new", "unused"),
    [
        ('def join_words(words, sep=" "):\n    return " ".join(words)', ["sep"]),
        ('def join_words(words, sep=" "):\n    return sep.join(words)', []),
        # Used only inside a nested function or a lambda is used.
        (
            'def join_words(words, sep=" "):\n    f = lambda: sep\n'
            "    return f().join(words)",
            [],
        ),
        # Not counted: *args, **kwargs, self, _private.
        (
            "def join_words(words, *args, _hint=None, **options):\n"
            '    return " ".join(words)',
            [],
        ),
        # A stub keeps its parameters for its callers.
        ('def join_words(words, sep):\n    """Join."""\n    ...', []),
        (
            "def join_words(words, sep, end):\n    raise NotImplementedError",
            [],
        ),
        # Two at once, in order.
        ("def join_words(words, sep, end):\n    return words", ["sep", "end"]),
        # Not a function: nothing to say.
        ("class join_words:\n    pass", []),
    ],
)
def test_new_parameters_the_code_never_uses(new, unused):
    assert unused_new_parameters(JOIN, new) == unused


def test_a_method_as_the_file_holds_it():
    old = "def push(self, item):\n        self.items.append(item)"
    new = "def push(self, item, times=1):\n        self.items.append(item)"
    assert unused_new_parameters(old, new, "    ") == ["times"]


def fenced(source: str) -> str:
    return f"```python\n{source}\n```"


UNUSED = "def total(prices, start=0):\n    return sum(prices)"
USED = "def total(prices, start=0):\n    return sum(prices, start)"


async def test_an_unused_new_parameter_is_refused_once_then_used(shop):
    shop.server.reply_text(fenced(UNUSED))
    shop.server.reply_text(fenced(USED))
    project = await shop.start(model={"protocol": "fenced"})
    events = await shop.ask("total", "Add a parameter start and add it to the sum.")

    first, second = of_type(events, "tool_result")
    assert not first.ok
    assert first.summary == (
        "Error: you added the parameter `start` but your code never uses it; "
        "use it as the request says, or leave it out"
    )
    assert "never uses it" in shop.server.messages(1)[-1]["content"]
    assert second.ok
    (proposal,) = project.agents.services.proposals.pending()
    assert proposal.new_source == USED
    assert proposal.check("parameters-used") is None


async def test_sent_again_the_unused_parameter_is_proposed_with_a_failed_check(shop):
    shop.server.reply_text(fenced(UNUSED))
    shop.server.reply_text(fenced(UNUSED))
    project = await shop.start(model={"protocol": "fenced"})
    events = await shop.ask("total", "Add a parameter start for later.")

    assert [r.ok for r in of_type(events, "tool_result")] == [False, True]
    assert of_type(events, "agent_completed")
    (proposal,) = project.agents.services.proposals.pending()
    check = proposal.check("parameters-used")
    assert check is not None and check.ok is False
    assert check.detail == "the new parameter `start` is never used"
    (proposed,) = of_type(events, "rewrite_proposed")
    assert {"name": "parameters-used", "ok": False}.items() <= proposed.checks[
        0
    ].items()
