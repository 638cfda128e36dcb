"""Prices with VAT."""

import time


def with_vat(price):
    return round(price * 1.2, 2)


def quote(price, qty=1):
    return with_vat(price * qty)


def wait_and_total(prices):
    time.sleep(0)
    return sum(prices)


def discount(price):
    return price * 0.9


def untested(value):
    return value
