"""What the shop sells."""

from dataclasses import dataclass, field


@dataclass
class Item:
    """One product line."""

    sku: str
    name: str
    unit_price: float
    tags: list[str] = field(default_factory=list)

    def price_for(self, quantity):
        return self.unit_price * quantity

    @property
    def label(self):
        return f"{self.name} ({self.sku})"


@dataclass
class Stock:
    """How many of each item are on the shelf."""

    counts: dict[str, int] = field(default_factory=dict)

    def add(self, item, quantity):
        self.counts[item.sku] = self.counts.get(item.sku, 0) + quantity

    def take(self, item, quantity):
        available = self.counts.get(item.sku, 0)
        if quantity > available:
            raise ValueError(f"only {available} of {item.label} left")
        self.counts[item.sku] = available - quantity
