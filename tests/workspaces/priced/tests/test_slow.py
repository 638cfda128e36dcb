import time

from shop.pricing import wait_and_total


def test_total_after_a_long_wait():
    time.sleep(300)
    assert wait_and_total([1, 2]) == 3
