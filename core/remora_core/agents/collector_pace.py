"""How often Python's cyclic garbage collector runs while agents work.

CPython looks at its youngest objects every 700 net allocations of container
objects (its default, set for short scripts), and whatever is alive then is
promoted to an older generation. With tens of turns in flight, much is alive
at any moment (each turn's messages, requests, tasks) and dies a moment later
by reference counting; promoted first, it makes the older generations fill up
and set off full collections: at 64 concurrent turns (``bench/scale_model.py``)
10-13 full collections in a 1,000-node graph, 36-93 ms of CPU each with the
event loop held (every answer waiting behind it), and a collection of the
young objects every few milliseconds: ~1.5 ms of CPU per node in all.

Looking at the young objects every 10,000 allocations instead, most of them
are gone by then: at 64 concurrent turns no full collection ran, the
collector's CPU fell to about a third, its longest pause (a collection of the
middle generation, 23-54 ms) is shorter than the full ones it replaces, and
the event loop's CPU per turn fell by ~2.4 ms of ~13 (more than the
collector's own ~1 ms: its walks of the heap presumably cost the loop's caches
too). Peak memory is about the same
(the objects in question are freed by reference counting either way); cycles
are still collected.

The thresholds change once, when the agents' kernel loads (the process is
about to run turns), and only from Python's default: thresholds somebody set
on purpose stay.
"""

from __future__ import annotations

import gc
import logging

log = logging.getLogger(__name__)

PYTHON_DEFAULT = (700, 10, 10)
"""CPython's thresholds (``gc.get_threshold()`` of a fresh interpreter)."""

WHILE_AGENTS_RUN = (10_000, 10, 10)
"""The youngest generation looked at every 10,000 allocations; the older ones
as often as before, relative to it (measured against 5,000 and 20,000 at 64
concurrent turns: 5,000 still ran a full collection, 20,000 paused longer)."""


def pace_for_turns() -> bool:
    """Set :data:`WHILE_AGENTS_RUN` if the thresholds are still Python's
    default; whether they were set.
    """
    if gc.get_threshold() != PYTHON_DEFAULT:
        return False
    gc.set_threshold(*WHILE_AGENTS_RUN)
    log.debug("garbage collector thresholds %s (agents run)", WHILE_AGENTS_RUN)
    return True
