"""What the scripted model proposes in the change-set tests of the server
(tests/lsp/test_change_sets.py) and of VS Code (tests/clients/vscode_sets.py),
against the `basic` workspace: a new test file and a currency parameter.
"""

TEST_FILE = """from pkg.service import order


def test_order_counts_the_quantity():
    assert order("a", 2) > order("a", 1)
"""
ORDER = """def order(name, quantity, currency="EUR"):
    item = make_item(name, currency=currency)
    return item.total(quantity) + models.make_item("x").price"""
MAKE_ITEM = """def make_item(name, price=1.0, currency="EUR"):
    return Item(name, convert(price, currency))"""
CURRENCY = """RATES = {"EUR": 1.0, "USD": 1.1}


def convert(amount, currency):
    return amount * RATES[currency]
"""
