"""Taking orders against the stock."""

from inventory import pricing
from inventory.models import Item, Stock


class OrderBook:
    """Orders placed so far."""

    def __init__(self, stock: Stock):
        self.stock = stock
        self.lines = []

    def place(self, item: Item, quantity, percent=0):
        self.stock.take(item, quantity)
        amount = pricing.quote(item, quantity, percent)
        self.lines.append((item.sku, quantity, amount))
        return amount

    def total(self):
        return sum(amount for _sku, _quantity, amount in self.lines)


def demo():
    stock = Stock()
    tea = Item("T-1", "Green tea", 4.5)
    stock.add(tea, 10)
    book = OrderBook(stock)
    book.place(tea, 3, percent=10)
    return book.total()
