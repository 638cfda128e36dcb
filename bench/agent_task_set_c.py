"""Set ``c`` of ``bench/agent_tasks.py``: requests that span nodes and files.

Each task is a small project of a few modules (``pricing.py`` with ``price()``
and ``orders.py`` / ``invoices.py`` calling it), the node asked (a path and a
qualified name; an empty name is the module itself), the request a person
types, a judge and the right answer.

- **The judge** runs what landed in the files once the proposal was accepted
  and saved (``bench/agent_task_judges.py``): the modules import and behave as
  before (or as asked), every caller was updated, a new test file passes
  against the current code and fails once the function it tests is broken.
- **The right answer** is what a capable model would propose: the members of
  a change set (the asked node by its id, other definitions by path and name,
  new files by path). The scripted model of ``--model scripted`` sends it as
  tool calls, so the plumbing (tools, proposals, the accepted edit, the files)
  is measured apart from the model.

Kinds: tests for a function, for a method, a fix with its test (new files); a
defaulted parameter passed from every caller, a parameter passed from one
caller, a parameter removed from every caller, a function and a method renamed
with their callers, a helper extracted, a function split, a constant moved to
a new module (change sets).
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agent_task_judges import (
    behaves,
    calls,
    definition,
    module,
    names,
    written_tests,
)

Judge = Callable[[Path, dict[str, str]], None]
"""(project root, the files before) → None, or AssertionError saying why not."""

PYPROJECT = (
    '[project]\nname = "shop"\nversion = "0"\n\n'
    '[tool.pytest.ini_options]\npythonpath = ["."]\n'
)
"""Every project's ``pyproject.toml``: pytest imports modules from the root."""


@dataclass(frozen=True)
class Change:
    """One member of the right answer."""

    path: str
    source: str
    """A definition (the whole of it), or the whole text of a new file or of
    the asked module."""
    own: bool = False
    """The asked node itself (named by its id: a rename keeps its place)."""
    node: str | None = None
    """Name another node by its id: '' the module ``path`` (a whole new text:
    an import line is no definition), else a qualified name in ``path``.
    ``None``: by path and the name of the definition in ``source``."""


@dataclass(frozen=True)
class ProjectTask:
    """One request to one node of a small project, with its judge."""

    name: str
    files: dict[str, str]
    """Path → text (``pyproject.toml`` is added)."""
    path: str
    """The file of the node asked."""
    target: str
    """Its qualified name ('' = the module itself)."""
    request: str
    judge: Judge
    answer: tuple[Change, ...]
    summary: str

    @property
    def project(self) -> dict[str, str]:
        """Every file of the project."""
        return {"pyproject.toml": PYPROJECT, **self.files}


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# ---- write tests ---------------------------------------------------------------------

PRICING = _d('''
    """Prices."""


    def price(amount, rate):
        """The amount with the tax rate added, rounded to cents."""
        return round(amount * (1 + rate), 2)
    ''')

ORDERS_PRICE = _d('''
    """Orders."""

    from pricing import price


    def order_total(amounts, rate):
        return sum(price(amount, rate) for amount in amounts)
    ''')

TEST_PRICING = _d("""
    from pricing import price


    def test_adds_the_rate():
        assert price(100, 0.2) == 120.0


    def test_no_rate():
        assert price(5, 0) == 5


    def test_rounds_to_cents():
        assert price(10, 0.333) == 13.33
    """)


def judge_tests_price(root: Path, before: dict[str, str]) -> None:
    written_tests(
        root,
        before,
        "pricing.py",
        "price",
        "def price(amount, rate):\n    return -1.0\n",
    )


TEXT = _d('''
    """Text helpers."""


    def slugify(title):
        words = title.lower().split()
        return "-".join(words)
    ''')

PAGES = _d('''
    """Pages."""

    from text import slugify


    def page_url(title):
        return "/pages/" + slugify(title)
    ''')

TEST_TEXT = _d("""
    from text import slugify


    def test_lowercases_and_joins_words():
        assert slugify("Hello World") == "hello-world"


    def test_extra_spaces():
        assert slugify("  a   b ") == "a-b"
    """)


def judge_tests_slugify(root: Path, before: dict[str, str]) -> None:
    written_tests(
        root, before, "text.py", "slugify", 'def slugify(title):\n    return "?"\n'
    )


CART = _d('''
    """A shopping cart."""


    class Cart:
        def __init__(self):
            self.items = []

        def add(self, name, price, quantity=1):
            self.items.append((name, price, quantity))

        def total(self):
            return sum(price * quantity for _, price, quantity in self.items)
    ''')

CHECKOUT_CART = _d('''
    """Checkout."""


    def checkout(cart):
        return f"Total: {cart.total():.2f}"
    ''')

TEST_CART = _d("""
    from cart import Cart


    def test_empty_cart():
        assert Cart().total() == 0


    def test_quantities():
        cart = Cart()
        cart.add("tea", 2.5, 2)
        cart.add("cake", 3)
        assert cart.total() == 8
    """)


def judge_tests_method(root: Path, before: dict[str, str]) -> None:
    written_tests(
        root, before, "cart.py", "Cart.total", "def total(self):\n    return -1\n"
    )


# ---- a fix and its test --------------------------------------------------------------

DISCOUNTS = _d('''
    """Discounts."""


    def discount(price, percent):
        return price * percent / 100
    ''')

PAY = _d('''
    """Paying."""

    from discounts import discount


    def pay(price):
        return discount(price, 5)
    ''')

DISCOUNT_BUGGY = "def discount(price, percent):\n    return price * percent / 100\n"
DISCOUNT_FIXED = (
    "def discount(price, percent):\n    return price - price * percent / 100\n"
)

TEST_DISCOUNTS = _d("""
    from discounts import discount


    def test_ten_percent_off():
        assert discount(100, 10) == 90


    def test_nothing_off():
        assert discount(80, 0) == 80
    """)


def judge_fix_and_test(root: Path, before: dict[str, str]) -> None:
    behaves(
        root,
        "import discounts, checkout\n"
        "assert discounts.discount(100, 10) == 90, 'discount(100, 10) != 90'\n"
        "assert discounts.discount(80, 25) == 60, 'discount(80, 25) != 60'\n"
        "assert checkout.pay(100) == 95, 'pay(100) != 95'\n",
    )
    # The test must catch the bug that was fixed: it fails on the old code.
    written_tests(root, before, "discounts.py", "discount", DISCOUNT_BUGGY)


# ---- parameters ----------------------------------------------------------------------

FORMAT_PRICE = _d('''
    """Prices."""


    def format_price(amount):
        return f"{amount:.2f} EUR"
    ''')

ORDERS_FORMAT = _d('''
    """Orders."""

    from pricing import format_price


    def order_line(name, amount):
        return f"{name}: {format_price(amount)}"
    ''')

INVOICES_FORMAT = _d('''
    """Invoices."""

    from pricing import format_price


    def invoice_total(amounts):
        return "Total: " + format_price(sum(amounts))
    ''')


def judge_add_currency(root: Path, before: dict[str, str]) -> None:
    behaves(
        root,
        "import inspect, pricing, orders, invoices\n"
        "p = inspect.signature(pricing.format_price).parameters\n"
        "assert 'currency' in p, 'format_price has no parameter currency'\n"
        "assert p['currency'].default == 'EUR', 'currency has no default EUR'\n"
        "assert pricing.format_price(3) == '3.00 EUR', 'format_price(3) changed'\n"
        "assert pricing.format_price(3, currency='USD') == '3.00 USD', "
        "'currency is not used'\n"
        "assert orders.order_line('tea', 2.5) == 'tea: 2.50 EUR', "
        "'order_line changed'\n"
        "assert invoices.invoice_total([1, 2]) == 'Total: 3.00 EUR', "
        "'invoice_total changed'\n",
    )
    for path in ("orders.py", "invoices.py"):
        found = calls(module(root, path), "format_price")
        assert found, f"{path} no longer calls format_price"
        for call in found:
            passed = len(call.args) >= 2 or any(
                k.arg == "currency" for k in call.keywords
            )
            assert passed, f"a call in {path} does not pass currency"


PARSING = _d('''
    """Parsing."""


    def parse_int(text):
        try:
            return int(text)
        except ValueError:
            return 0
    ''')

SETTINGS_PORT = _d('''
    """Settings."""

    from parsing import parse_int


    def port(text):
        return parse_int(text)
    ''')

LIMITS = _d('''
    """Limits."""

    from parsing import parse_int


    def max_items(text):
        return parse_int(text)
    ''')


def judge_default_from_caller(root: Path, before: dict[str, str]) -> None:
    behaves(
        root,
        "import parsing, settings, limits\n"
        "assert parsing.parse_int('7') == 7, 'parse_int(\"7\") changed'\n"
        "assert parsing.parse_int('x') == 0, 'the default is not 0'\n"
        "assert parsing.parse_int('x', default=5) == 5, 'default is not used'\n"
        "assert settings.port('x') == 8080, 'port(\"x\") is not 8080'\n"
        "assert settings.port('81') == 81, 'port(\"81\") changed'\n"
        "assert limits.max_items('x') == 0, 'max_items(\"x\") changed'\n"
        "assert limits.max_items('3') == 3, 'max_items(\"3\") changed'\n",
    )


LOGS = _d('''
    """Logging."""


    def log_line(message, verbose):
        return f"[log] {message}"
    ''')

APP = _d('''
    """The app."""

    from logs import log_line


    def start():
        return log_line("start", True)


    def stop():
        return log_line("stop", verbose=False)
    ''')


def judge_remove_parameter(root: Path, before: dict[str, str]) -> None:
    behaves(
        root,
        "import inspect, logs, app\n"
        "p = list(inspect.signature(logs.log_line).parameters)\n"
        "assert p == ['message'], f'log_line takes {p}'\n"
        "assert app.start() == '[log] start', 'start changed'\n"
        "assert app.stop() == '[log] stop', 'stop changed'\n",
    )


# ---- renames -------------------------------------------------------------------------

CALC = _d('''
    """Prices."""


    def calc(amount, discount):
        return amount - amount * discount
    ''')

ORDERS_CALC = _d('''
    """Orders."""

    from pricing import calc


    def order_price(amount):
        return calc(amount, 0.1)
    ''')

INVOICES_CALC = _d('''
    """Invoices."""

    import pricing


    def invoice_price(amount, customer_discount):
        return pricing.calc(amount, customer_discount)
    ''')


def judge_rename_callers(root: Path, before: dict[str, str]) -> None:
    for path in ("pricing.py", "orders.py", "invoices.py"):
        assert "calc" not in names(module(root, path)), f"{path} still uses calc"
    behaves(
        root,
        "import pricing, orders, invoices\n"
        "assert pricing.net_price(100, 0.5) == 50, 'net_price changed'\n"
        "assert orders.order_price(100) == 90, 'order_price changed'\n"
        "assert invoices.invoice_price(100, 0.5) == 50, 'invoice_price changed'\n",
    )


ACCOUNT = _d('''
    """Accounts."""


    class Account:
        def __init__(self, owner):
            self.owner = owner
            self.entries = []

        def deposit(self, amount):
            self.entries.append(amount)

        def bal(self):
            return sum(self.entries)
    ''')

REPORT = _d('''
    """Reports."""

    from account import Account


    def opening(owner, amount):
        account = Account(owner)
        account.deposit(amount)
        return account.bal()


    def statement(account):
        return f"{account.owner}: {account.bal()}"
    ''')


def judge_rename_method(root: Path, before: dict[str, str]) -> None:
    for path in ("account.py", "report.py"):
        assert "bal" not in names(module(root, path)), f"{path} still uses bal"
    behaves(
        root,
        "import account, report\n"
        "a = account.Account('Ann')\n"
        "a.deposit(5)\n"
        "assert a.balance() == 5, 'balance changed'\n"
        "assert report.opening('Bob', 7) == 7, 'opening changed'\n"
        "assert report.statement(a) == 'Ann: 5', 'statement changed'\n",
    )


# ---- extract, split, move ------------------------------------------------------------

RECEIPT = _d('''
    """Receipts."""


    def receipt(prices):
        subtotal = sum(prices)
        tax = round(subtotal * 0.2, 2)
        return f"subtotal {subtotal:.2f}, tax {tax:.2f}, total {subtotal + tax:.2f}"
    ''')

RECEIPT_NEW = _d("""
    def receipt(prices):
        subtotal = sum(prices)
        tax = tax_of(subtotal)
        return f"subtotal {subtotal:.2f}, tax {tax:.2f}, total {subtotal + tax:.2f}"
    """)

TAX_OF = "def tax_of(amount):\n    return round(amount * 0.2, 2)\n"


def judge_extract_helper(root: Path, before: dict[str, str]) -> None:
    tree = module(root, "receipt.py")
    assert calls(definition(tree, "receipt"), "tax_of"), "receipt does not call tax_of"
    behaves(
        root,
        "import receipt\n"
        "assert receipt.tax_of(100) == 20, 'tax_of(100) != 20'\n"
        "assert receipt.receipt([10, 5.5]) == "
        "'subtotal 15.50, tax 3.10, total 18.60', 'receipt changed'\n"
        "assert receipt.receipt([]) == 'subtotal 0.00, tax 0.00, total 0.00', "
        "'receipt changed'\n",
    )


STATS = _d('''
    """Text statistics."""


    def summary(text):
        words = len(text.split())
        lines = len(text.splitlines())
        return f"{words} words, {lines} lines"
    ''')

SUMMARY_NEW = _d("""
    def summary(text):
        return f"{count_words(text)} words, {count_lines(text)} lines"
    """)

COUNT_WORDS = "def count_words(text):\n    return len(text.split())\n"
COUNT_LINES = "def count_lines(text):\n    return len(text.splitlines())\n"


def judge_split_function(root: Path, before: dict[str, str]) -> None:
    summary = definition(module(root, "stats.py"), "summary")
    for helper in ("count_words", "count_lines"):
        assert calls(summary, helper), f"summary does not call {helper}"
    behaves(
        root,
        "import stats\n"
        "assert stats.count_words('a b\\nc') == 3, 'count_words'\n"
        "assert stats.count_lines('a b\\nc') == 2, 'count_lines'\n"
        "assert stats.summary('a b\\nc') == '3 words, 2 lines', 'summary changed'\n"
        "assert stats.summary('') == '0 words, 0 lines', 'summary changed'\n",
    )


ORDERS_TAX = _d('''
    """Orders."""

    TAX_RATE = 0.2


    def with_tax(amount):
        return amount * (1 + TAX_RATE)
    ''')

INVOICES_TAX = _d('''
    """Invoices."""

    from orders import TAX_RATE


    def tax_line(amount):
        return f"tax {amount * TAX_RATE:.2f}"
    ''')

ORDERS_MOVED = _d('''
    """Orders."""

    from settings import TAX_RATE


    def with_tax(amount):
        return amount * (1 + TAX_RATE)
    ''')


def judge_move_constant(root: Path, before: dict[str, str]) -> None:
    tree = module(root, "orders.py")
    assigned = [
        t.id
        for s in tree.body
        if isinstance(s, ast.Assign)
        for t in s.targets
        if isinstance(t, ast.Name)
    ]
    assert "TAX_RATE" not in assigned, "orders.py still defines TAX_RATE"
    behaves(
        root,
        "import settings, orders, invoices\n"
        "assert settings.TAX_RATE == 0.2, 'settings.TAX_RATE != 0.2'\n"
        "assert orders.TAX_RATE is settings.TAX_RATE, 'orders does not use it'\n"
        "assert orders.with_tax(100) == 120, 'with_tax changed'\n"
        "assert invoices.tax_line(10) == 'tax 2.00', 'tax_line changed'\n",
    )


# ---- the set -------------------------------------------------------------------------

SET_C: list[ProjectTask] = [
    ProjectTask(
        "tests_function", {"pricing.py": PRICING, "orders.py": ORDERS_PRICE},
        "pricing.py", "price",
        "Write pytest tests for this function in tests/test_pricing.py.",
        judge_tests_price, (Change("tests/test_pricing.py", TEST_PRICING),),
        "tests for price"),
    ProjectTask(
        "tests_unnamed_file", {"text.py": TEXT, "pages.py": PAGES},
        "text.py", "slugify", "Write tests for this function.",
        judge_tests_slugify, (Change("tests/test_text.py", TEST_TEXT),),
        "tests for slugify"),
    ProjectTask(
        "tests_method", {"cart.py": CART, "checkout.py": CHECKOUT_CART},
        "cart.py", "Cart.total",
        "Write pytest tests for this method in tests/test_cart.py.",
        judge_tests_method, (Change("tests/test_cart.py", TEST_CART),),
        "tests for Cart.total"),
    ProjectTask(
        "fix_and_test", {"discounts.py": DISCOUNTS, "checkout.py": PAY},
        "discounts.py", "discount",
        "Fix the bug: discount(100, 10) must return 90, the price after the "
        "discount. Then add a test for it in tests/test_discounts.py.",
        judge_fix_and_test,
        (Change("discounts.py", DISCOUNT_FIXED, own=True),
         Change("tests/test_discounts.py", TEST_DISCOUNTS)),
        "fix discount and test it"),
    ProjectTask(
        "add_parameter_callers",
        {"pricing.py": FORMAT_PRICE, "orders.py": ORDERS_FORMAT,
         "invoices.py": INVOICES_FORMAT},
        "pricing.py", "format_price",
        'Add a parameter currency with the default value "EUR", use it in place '
        'of the fixed "EUR", and pass currency="EUR" from every caller.',
        judge_add_currency,
        (Change("pricing.py",
                'def format_price(amount, currency="EUR"):\n'
                '    return f"{amount:.2f} {currency}"\n', own=True),
         Change("orders.py",
                "def order_line(name, amount):\n"
                '    return f"{name}: {format_price(amount, currency=\'EUR\')}"\n'),
         Change("invoices.py",
                "def invoice_total(amounts):\n"
                '    return "Total: " + format_price(sum(amounts), currency="EUR")\n')),
        "add currency to format_price and its callers"),
    ProjectTask(
        "parameter_one_caller",
        {"parsing.py": PARSING, "settings.py": SETTINGS_PORT, "limits.py": LIMITS},
        "parsing.py", "parse_int",
        "Add a parameter default with the default value 0 and return it instead "
        "of 0 when the text is not a number. Make port in settings.py pass "
        "default=8080.",
        judge_default_from_caller,
        (Change("parsing.py",
                "def parse_int(text, default=0):\n    try:\n        return int(text)\n"
                "    except ValueError:\n        return default\n", own=True),
         Change("settings.py",
                "def port(text):\n    return parse_int(text, default=8080)\n")),
        "parse_int takes a default; port passes 8080"),
    ProjectTask(
        "remove_parameter", {"logs.py": LOGS, "app.py": APP},
        "logs.py", "log_line",
        "Remove the unused parameter verbose and update every caller.",
        judge_remove_parameter,
        (Change("logs.py", 'def log_line(message):\n    return f"[log] {message}"\n',
                own=True),
         Change("app.py", 'def start():\n    return log_line("start")\n'),
         Change("app.py", 'def stop():\n    return log_line("stop")\n')),
        "remove verbose from log_line and its callers"),
    ProjectTask(
        "rename_callers",
        {"pricing.py": CALC, "orders.py": ORDERS_CALC, "invoices.py": INVOICES_CALC},
        "pricing.py", "calc",
        "Rename this function to net_price and update every caller.",
        judge_rename_callers,
        (Change("pricing.py",
                "def net_price(amount, discount):\n"
                "    return amount - amount * discount\n", own=True),
         Change("orders.py", ORDERS_CALC.replace("calc", "net_price"), node=""),
         Change("invoices.py",
                "def invoice_price(amount, customer_discount):\n"
                "    return pricing.net_price(amount, customer_discount)\n")),
        "rename calc to net_price"),
    ProjectTask(
        "rename_method", {"account.py": ACCOUNT, "report.py": REPORT},
        "account.py", "Account.bal",
        "Rename this method to balance and update every caller.",
        judge_rename_method,
        (Change("account.py", "def balance(self):\n    return sum(self.entries)\n",
                own=True),
         Change("report.py",
                "def opening(owner, amount):\n    account = Account(owner)\n"
                "    account.deposit(amount)\n    return account.balance()\n"),
         Change("report.py",
                "def statement(account):\n"
                '    return f"{account.owner}: {account.balance()}"\n')),
        "rename Account.bal to balance"),
    ProjectTask(
        "extract_helper", {"receipt.py": RECEIPT},
        "receipt.py", "receipt",
        "Extract the tax computation into a new function tax_of(amount) and call "
        "it from here.",
        judge_extract_helper,
        (Change("receipt.py", RECEIPT_NEW, own=True), Change("receipt.py", TAX_OF)),
        "extract tax_of from receipt"),
    ProjectTask(
        "split_function", {"stats.py": STATS},
        "stats.py", "summary",
        "Split this function: move the counting into two new functions "
        "count_words(text) and count_lines(text), and make summary call them.",
        judge_split_function,
        (Change("stats.py", SUMMARY_NEW, own=True),
         Change("stats.py", COUNT_WORDS), Change("stats.py", COUNT_LINES)),
        "split summary into count_words and count_lines"),
    ProjectTask(
        "move_constant", {"orders.py": ORDERS_TAX, "invoices.py": INVOICES_TAX},
        "orders.py", "",
        "Move the constant TAX_RATE into a new module settings.py and import it "
        "from there.",
        judge_move_constant,
        (Change("orders.py", ORDERS_MOVED, own=True),
         Change("settings.py", '"""Settings."""\n\nTAX_RATE = 0.2\n')),
        "move TAX_RATE to settings.py"),
]  # fmt: skip
