"""Inventory models."""

import dataclasses


def registered(cls):
    return cls


@registered
@dataclasses.dataclass
class Item:
    name: str
    price: float

    def total(self, quantity):
        return self.price * quantity

    @property
    def label(self):
        return f"{self.name} ({self.price})"

    @label.setter
    def label(self, value):
        self.name = value

    class Meta:
        def describe(self):
            return "item"

    async def refresh(self):
        return self.total(1)


def make_item(name, price=1.0):
    return Item(name, price)
