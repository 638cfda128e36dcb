"""The embedded model's own reply shapes read as what they mean (issue 27 §4).

Through the real kernel, pydantic-ai and OpenAI client, against the scripted
server replying with what the 0.5B model actually wrote in set c of
``bench/agent_tasks.py`` (``bench/README.md``): a block of tests when tests
were asked for becomes a new test file, a block with the asked definition and
new ones a change set in that file, a reply cut at its token cap a new file of
its whole tests or a clear failure. Nothing is written before an accept; every
proposal still passes the tools' checks (paths, secrets, the intent guard).
"""

from __future__ import annotations

import pytest
from remora_core.agents.providers import ModelResolver

from remora_lsp.testing.model_server import ModelServer
from remora_lsp.testing.replies import Reply
from tests.core.agent_support import AgentHarness, of_type

FILES = {
    "pricing.py": '''"""Prices."""


def price(amount, rate):
    """The amount with the tax rate added, rounded to cents."""
    return round(amount * (1 + rate), 2)
''',
    "receipt.py": '''"""Receipts."""


def receipt(prices):
    subtotal = sum(prices)
    tax = round(subtotal * 0.2, 2)
    return f"subtotal {subtotal:.2f}, tax {tax:.2f}, total {subtotal + tax:.2f}"
''',
    "stats.py": '''"""Text statistics."""


def summary(text):
    words = len(text.split())
    lines = len(text.splitlines())
    return f"{words} words, {lines} lines"
''',
    "text.py": '''"""Text helpers."""


def slugify(title):
    return "-".join(title.lower().split())
''',
    "cart.py": '''"""A cart."""


class Cart:
    def __init__(self):
        self.items = []

    def total(self):
        return sum(price * quantity for _, price, quantity in self.items)
''',
    "discounts.py": '''"""Discounts."""


def discount(price, percent):
    return price * percent / 100
''',
}

# The 0.5B model's replies in set c, word for word.
EXTRACT_HELPER = """```python
def tax_of(amount):
    return round(amount * 0.2, 2)

def receipt(prices):
    subtotal = sum(prices)
    tax = tax_of(subtotal)
    return f"subtotal {subtotal:.2f}, tax {tax:.2f}, total {subtotal + tax:.2f}"
```"""
SPLIT_FUNCTION = """```python
def count_words(text):
    return len(text.split())

def count_lines(text):
    return len(text.splitlines())

def summary(text):
    words = count_words(text)
    lines = count_lines(text)
    return f"{words} words, {lines} lines"
```"""
TESTS_UNITTEST = """```python
import unittest

class TestSlugify(unittest.TestCase):
    def test_slugify(self):
        self.assertEqual(slugify("Hello World"), "hello-world")
        self.assertEqual(slugify("A B C"), "a-b-c")
```"""
TESTS_PYTEST = """```python
import pytest
from cart import Cart

def test_total():
    cart = Cart()
    cart.items.append((1, 10, 2))
    assert cart.total() == 20
```"""
TESTS_BESIDE_A_COPY = '''```python
import pytest

def price(amount, rate):
    """The amount with the tax rate added, rounded to cents."""
    return round(amount * (1 + rate), 2)

# Test cases
@pytest.mark.parametrize("amount, rate", [
    (100, 0.05),  # $100 with 5% tax
    (200, 0.10),  # $200 with 10% tax
])
def test_price(amount, rate):
    assert price(amount, rate) == round(amount * (1 + rate), 2)
    print(f"Passed for amount={amount}, rate={rate}")
```'''
FIX_AND_TEST = """```python
def discount(price, percent):
    return price - price * percent / 100

def test_discounts():
    assert discount(100, 10) == 90, "The price after the discount should be 90"
    print("All tests passed!")

# Uncomment the following line to run the test
# test_discounts()
```"""


@pytest.fixture
async def shop(tmp_path):
    with ModelServer() as server:
        harness = AgentHarness(tmp_path / "shop", server)
        for path, text in FILES.items():
            (harness.root / path).write_text(text, encoding="utf-8")
        yield harness
        await harness.stop()


def pending(shop: AgentHarness, events: list) -> object:
    """The run's one proposal."""
    (proposed,) = of_type(events, "rewrite_proposed")
    assert shop.project is not None
    return shop.project.agents.services.proposals.get(proposed.proposal_id)


def members(proposal) -> list[tuple[str, str]]:
    return [(m.path, m.kind) for m in proposal.members]


async def test_the_asked_definition_and_a_new_one_become_one_change_set(shop):
    shop.server.reply_text(EXTRACT_HELPER)
    await shop.start(model={"protocol": "fenced"})
    events = await shop.ask(
        "receipt",
        "Extract the tax computation into a new function tax_of(amount) and "
        "call it from here.",
        path="receipt.py",
    )

    assert of_type(events, "tool_called")[0].tool == "propose_changes"
    proposal = pending(shop, events)
    assert proposal.kind == "change_set"
    assert members(proposal) == [
        ("receipt.py", "rewrite"),
        ("receipt.py", "new_node"),
    ]
    rewrite, new = proposal.members
    assert rewrite.node_id == shop.id("receipt", "receipt.py")
    assert "tax = tax_of(subtotal)" in rewrite.new_source
    assert new.new_source.strip().startswith("def tax_of(amount):")
    assert (shop.root / "receipt.py").read_text() == FILES["receipt.py"]
    assert len(shop.server.requests) == 1


async def test_a_split_into_two_new_functions_is_a_set_of_three(shop):
    shop.server.reply_text(SPLIT_FUNCTION)
    await shop.start(model={"protocol": "fenced"})
    events = await shop.ask(
        "summary",
        "Split this function: move the counting into two new functions "
        "count_words(text) and count_lines(text), and make summary call them.",
        path="stats.py",
    )

    proposal = pending(shop, events)
    assert members(proposal) == [
        ("stats.py", "rewrite"),
        ("stats.py", "new_node"),
        ("stats.py", "new_node"),
    ]
    assert "count_words" in proposal.summary and "count_lines" in proposal.summary


async def test_tests_asked_without_a_file_become_tests_of_the_module(shop):
    """The block uses ``slugify`` without importing it (written as if beside
    the function): the new file imports it.
    """
    shop.server.reply_text(TESTS_UNITTEST)
    await shop.start(model={"protocol": "fenced"})
    events = await shop.ask("slugify", "Write tests for this function.", path="text.py")

    called = of_type(events, "tool_called")[0]
    assert called.tool == "create_file"
    proposal = pending(shop, events)
    assert proposal.kind == "new_file"
    assert members(proposal) == [("tests/test_text.py", "new_file")]
    assert proposal.new_source.startswith(
        "from text import slugify\n\n\nimport unittest\n"
    )
    assert not (shop.root / "tests").exists()


async def test_tests_of_a_method_go_to_the_file_the_request_names(shop):
    shop.server.reply_text(TESTS_PYTEST)
    await shop.start(model={"protocol": "fenced"})
    events = await shop.ask(
        "Cart.total",
        "Write pytest tests for this method in tests/unit/test_cart_total.py.",
        path="cart.py",
    )

    proposal = pending(shop, events)
    assert members(proposal) == [("tests/unit/test_cart_total.py", "new_file")]
    # It imports Cart itself: taken as written.
    assert proposal.new_source == TESTS_PYTEST.split("\n", 1)[1].removesuffix("```")


async def test_tests_beside_a_copy_of_the_function_test_the_module_s_own(shop):
    shop.server.reply_text(TESTS_BESIDE_A_COPY)
    await shop.start(model={"protocol": "fenced"})
    events = await shop.ask(
        "price",
        "Write pytest tests for this function in tests/test_pricing.py.",
        path="pricing.py",
    )

    proposal = pending(shop, events)
    assert members(proposal) == [("tests/test_pricing.py", "new_file")]
    text = proposal.new_source
    assert text.startswith("from pricing import price\n\n\nimport pytest\n")
    assert "def price" not in text
    assert '@pytest.mark.parametrize("amount, rate", [' in text
    assert "def test_price(amount, rate):" in text


async def test_a_fix_with_its_test_rewrites_the_function_and_adds_the_test_file(
    shop,
):
    shop.server.reply_text(FIX_AND_TEST)
    await shop.start(model={"protocol": "fenced"})
    events = await shop.ask(
        "discount",
        "Fix the bug: discount(100, 10) must return 90, the price after the "
        "discount. Then add a test for it in tests/test_discounts.py.",
        path="discounts.py",
    )

    proposal = pending(shop, events)
    assert members(proposal) == [
        ("discounts.py", "rewrite"),
        ("tests/test_discounts.py", "new_file"),
    ]
    rewrite, tests = proposal.members
    assert "test_discounts" not in rewrite.new_source
    assert tests.new_source.startswith("from discounts import discount\n\n\n")
    assert "def test_discounts():" in tests.new_source
    assert "print(" in tests.new_source  # the test's own body is kept


async def test_tests_not_asked_for_stay_a_refused_rewrite(shop):
    shop.server.reply_text(TESTS_UNITTEST)
    shop.server.reply_text(TESTS_UNITTEST)
    await shop.start(model={"protocol": "fenced"})
    events = await shop.ask("slugify", "Make it strip punctuation.", path="text.py")

    assert {e.tool for e in of_type(events, "tool_called")} == {"rewrite_self"}
    assert not of_type(events, "rewrite_proposed")
    (failed,) = of_type(events, "agent_failed")
    assert "expected one function definition" in failed.error


async def test_a_guarded_turn_may_not_add_definitions_this_way(shop):
    """Asked for a docstring, a block that adds ``tax_of`` is a change set
    whose new definition the intent guard refuses, twice: no proposal.
    """
    documented = (
        FILES["receipt.py"]
        .split("\n\n\n", 1)[1]
        .replace("):\n", '):\n    """The receipt line."""\n', 1)
    )
    reply = f"```python\n{documented}\n\ndef tax_of(amount):\n    return 0\n```"
    shop.server.reply_text(reply)
    shop.server.reply_text(EXTRACT_HELPER)
    await shop.start(model={"protocol": "fenced"})
    events = await shop.ask("receipt", "Add a docstring.", path="receipt.py")

    assert not of_type(events, "rewrite_proposed")
    first, _second = of_type(events, "tool_result")
    assert "you proposed a new definition" in first.summary
    (failed,) = of_type(events, "agent_failed")
    assert failed.error.startswith("No proposal: asked “Add a docstring.”")
    assert "tax = tax_of(subtotal)" in failed.error


@pytest.mark.parametrize(
    ("named", "why"),
    [("../test_outside.py", "outside"), ("tests/test_secret.py", "secrets")],
)
async def test_a_test_file_outside_the_project_or_secret_is_refused(shop, named, why):
    shop.server.reply_text(TESTS_UNITTEST)
    shop.server.reply_text(TESTS_UNITTEST)
    await shop.start(
        model={"protocol": "fenced"}, secrets={"exclude": ["tests/test_secret.py"]}
    )
    events = await shop.ask(
        "slugify", f"Write tests for this function in {named}.", path="text.py"
    )

    assert not of_type(events, "rewrite_proposed")
    results = of_type(events, "tool_result")
    assert [r.tool for r in results] == ["create_file", "create_file"]
    assert why in results[0].summary
    assert of_type(events, "agent_failed")
    assert not (shop.root.parent / "test_outside.py").exists()
    assert not (shop.root / "tests").exists()


async def test_nonsense_in_the_block_ends_in_a_clear_failure(shop):
    shop.server.reply_text("```python\nthe tests are good\n```")
    shop.server.reply_text("```python\nimport os\nprint(os)\n```")
    await shop.start(model={"protocol": "fenced"})
    events = await shop.ask(
        "receipt", "Write tests for this function.", path="receipt.py"
    )

    assert not of_type(events, "rewrite_proposed")
    (failed,) = of_type(events, "agent_failed")
    assert failed.error.startswith("No proposal")


async def test_tests_cut_at_the_token_cap_keep_their_whole_tests(shop):
    cut = (
        "```python\nimport pytest\n\n\ndef test_hello():\n"
        '    assert slugify("Hello World") == "hello-world"\n\n\n'
        'def test_many():\n    assert slugify("A B C D E F G H'
    )
    shop.server.script.append(Reply(text=cut, finish_reason="length"))
    await shop.start(model={"protocol": "fenced"})
    events = await shop.ask("slugify", "Write tests for this function.", path="text.py")

    proposal = pending(shop, events)
    assert members(proposal) == [("tests/test_text.py", "new_file")]
    assert "def test_hello():" in proposal.new_source
    assert "test_many" not in proposal.new_source
    assert proposal.new_source.startswith("from text import slugify\n")


async def test_a_test_class_cut_mid_method_keeps_its_whole_lines(shop):
    cut = (
        "```python\nimport unittest\n\nclass TestSlugify(unittest.TestCase):\n"
        "    def test_slugify(self):\n"
        '        self.assertEqual(slugify("Hello World"), "hello-world")\n'
        '        self.assertEqual(slugify("A B"), "a-b")\n'
        '        self.assertEqual(slugify("A B C D E F G H I J K L M'
    )
    shop.server.script.append(Reply(text=cut, finish_reason="length"))
    await shop.start(model={"protocol": "fenced"})
    events = await shop.ask("slugify", "Write tests for this function.", path="text.py")

    text = pending(shop, events).new_source
    assert text.endswith('        self.assertEqual(slugify("A B"), "a-b")\n')
    assert "class TestSlugify(unittest.TestCase):" in text


async def test_a_rewrite_cut_at_the_token_cap_fails_at_once(shop):
    cut = "```python\ndef receipt(prices):\n    subtotal = sum(pri"
    shop.server.script.append(Reply(text=cut, finish_reason="length"))
    await shop.start(model={"protocol": "fenced"})
    events = await shop.ask("receipt", "Round the subtotal.", path="receipt.py")

    (failed,) = of_type(events, "agent_failed")
    assert "reached the server's length limit" in failed.error
    assert len(shop.server.requests) == 1  # not asked again for the same
    assert not of_type(events, "rewrite_proposed")


async def test_the_embedded_model_is_asked_for_a_capped_reply(shop, monkeypatch):
    """The embedded model's server (here the scripted one in its place) gets a
    cap on the reply's tokens sized to the node; another server does not.
    """

    async def scripted_in_its_place(resolver):
        return shop.server.url, "embedded"

    monkeypatch.setattr(ModelResolver, "_start_local", scripted_in_its_place)
    shop.server.reply_text(EXTRACT_HELPER)
    await shop.start(model={"provider": "local", "base_url": None, "preload": False})
    await shop.ask("receipt", "Extract tax_of(amount).", path="receipt.py")

    request = shop.server.requests[0]
    cap = request["n_predict"]
    assert 512 <= cap <= 2048
    assert request.get("max_completion_tokens", request.get("max_tokens")) == cap
    assert "grammar" in request  # the embedded model's fenced protocol


async def test_another_server_gets_no_cap(shop):
    shop.server.reply_text(EXTRACT_HELPER)
    await shop.start(model={"protocol": "fenced"})
    await shop.ask("receipt", "Extract tax_of(amount).", path="receipt.py")

    request = shop.server.requests[0]
    assert "n_predict" not in request and "max_completion_tokens" not in request


async def test_a_new_import_goes_with_the_tests_unless_the_code_needs_it(shop):
    """``import pytest`` beside a fix and its test goes to the test file; an
    import the fixed function needs has no place in a definition's rewrite:
    that block stays refused, as before.
    """
    fixed = FIX_AND_TEST.replace("```python\n", "```python\nimport pytest\n", 1)
    shop.server.reply_text(fixed)
    await shop.start(model={"protocol": "fenced"})
    asked = "Fix the bug and add a test for it."
    events = await shop.ask("discount", asked, path="discounts.py")

    rewrite, tests = pending(shop, events).members
    assert "pytest" not in rewrite.new_source
    assert tests.new_source.startswith(
        "from discounts import discount\n\n\nimport pytest\n"
    )

    needs = FIX_AND_TEST.replace("```python\n", "```python\nimport math\n", 1)
    needs = needs.replace("return price -", "return math.floor(price) -")
    shop.server.reply_text(needs)
    shop.server.reply_text(needs)
    events = await shop.ask("discount", asked, path="discounts.py")

    assert {e.tool for e in of_type(events, "tool_called")} == {"rewrite_self"}
    (failed,) = of_type(events, "agent_failed")
    assert "expected one function definition" in failed.error
