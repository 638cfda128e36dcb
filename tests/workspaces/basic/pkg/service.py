"""Order handling."""

from pkg.models import Item, make_item
from . import models


def order(name, quantity):
    item = make_item(name)
    return item.total(quantity) + models.make_item("x").price


class Service:
    def run(self):
        def step():
            return order("a", 1)

        return step() + self.helper()

    def helper(self):
        return order("b", 2)


def unused(item: Item):
    # a comment inside the body

    return item
    # a trailing comment: not part of the node
