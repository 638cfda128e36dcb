"""The garbage collector: paused for bulk work (never left off), paced for turns."""

from __future__ import annotations

import gc

from remora_core.agents.collector_pace import (
    PYTHON_DEFAULT,
    WHILE_AGENTS_RUN,
    pace_for_turns,
)
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


def test_agents_collect_young_objects_less_often_unless_thresholds_were_set():
    saved = gc.get_threshold()
    try:
        gc.set_threshold(*PYTHON_DEFAULT)
        assert pace_for_turns()
        assert gc.get_threshold() == WHILE_AGENTS_RUN
        assert not pace_for_turns(), "once"
        gc.set_threshold(1234, 5, 5)  # somebody's own choice
        assert not pace_for_turns()
        assert gc.get_threshold() == (1234, 5, 5)
    finally:
        gc.set_threshold(*saved)
