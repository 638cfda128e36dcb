"""The cyclic collector while projects start (``features/lifecycle.py``).

It stays off from a project's start to the freeze after indexing, so that no
collection walks the hundreds of thousands of objects indexing made before
the person is told indexing ended (they are frozen instead). What a person would
notice if this went wrong is memory that is never collected again: the
collector must come back on once the last start is over, whatever the order
in which several folders finish, and the engine's own pause while indexing
must not turn it back on in the middle.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from remora_core.index.collector import collector_paused


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


@pytest.mark.usefixtures("collector_on")
def test_collector_is_on_again_once_the_last_start_is_over() -> None:
    first, second = collector_paused(), collector_paused()
    first.__enter__()
    assert not gc.isenabled()
    second.__enter__()  # a second folder starts meanwhile
    first.__exit__(None, None, None)  # ... and finishes last
    assert not gc.isenabled()
    second.__exit__(None, None, None)
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_on")
def test_the_engines_pause_while_indexing_leaves_it_off_until_the_start_ends() -> None:
    with collector_paused():
        with collector_paused():  # indexing
            assert not gc.isenabled()
        assert not gc.isenabled()  # the heap is frozen first
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_on")
def test_a_failed_start_turns_the_collector_back_on() -> None:
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("the store could not be opened")
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    was = gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()
