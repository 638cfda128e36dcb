import nowhere_to_be_found  # a module this project lacks

from shop.pricing import discount


def test_discount():
    assert discount(10) == 9.0
