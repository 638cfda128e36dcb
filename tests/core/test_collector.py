"""Pausing the garbage collector for bulk work never leaves it off."""

from __future__ import annotations

import gc

from remora_core.index.collector import collector_paused


def test_overlapping_pauses_resume_collection_when_the_last_ends():
    assert gc.isenabled()
    first, second = collector_paused(), collector_paused()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert not gc.isenabled(), "the second pause still runs"
    second.__exit__(None, None, None)
    assert gc.isenabled()


def test_a_pause_that_fails_resumes_collection():
    try:
        with collector_paused():
            raise RuntimeError("indexing failed")
    except RuntimeError:
        pass
    assert gc.isenabled()


def test_a_collector_switched_off_before_stays_off():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
