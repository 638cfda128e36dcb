from shop.pricing import quote


def test_quote_adds_vat():
    assert quote(10) == 12.0


def test_quote_counts_items():
    assert quote(10, 2) == 24.0
