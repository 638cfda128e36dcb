"""Prices, discounts and taxes."""

from inventory.models import Item

VAT = 0.2


def discount(total, percent):
    return total - total * percent / 100


def with_vat(amount):
    return round(amount * (1 + VAT), 2)


def quote(item: Item, quantity, percent=0):
    return with_vat(discount(item.price_for(quantity), percent))
