"""Waiting for an applied edit to land: woken by the index's changes, no polling."""

from __future__ import annotations

import asyncio

from remora_core.config import validate
from remora_core.index.code_index import CodeIndex
from remora_core.index.document_sync import DocumentSync
from remora_core.index.documents import TextChange
from remora_core.index.text_watch import TextWatch
from remora_core.text import PositionEncoding


async def test_a_wait_ends_when_the_change_it_waits_for_comes():
    watch, text = TextWatch(), {"a.py": "old"}
    waiting = asyncio.ensure_future(
        watch.until("a.py", lambda: text["a.py"] == "new", timeout=60)
    )
    await asyncio.sleep(0)
    watch.changed("b.py")  # another file: not woken for it, still waiting
    text["a.py"] = "other"
    watch.changed("a.py")  # not yet the text it waits for
    await asyncio.sleep(0)
    assert not waiting.done()
    text["a.py"] = "new"
    watch.changed("a.py")
    assert await asyncio.wait_for(waiting, 10) is True


async def test_a_wait_gives_up_unless_the_text_is_there_at_the_end():
    watch, text = TextWatch(), {"a.py": "old"}
    assert await watch.until("a.py", lambda: text["a.py"] == "new", 0.01) is False
    # A change nobody announced is still seen when the time is up.
    waiting = asyncio.ensure_future(
        watch.until("a.py", lambda: text["a.py"] == "new", 0.05)
    )
    await asyncio.sleep(0)
    text["a.py"] = "new"
    assert await asyncio.wait_for(waiting, 10) is True
    assert await watch.until("a.py", lambda: True, 0) is True


async def test_an_open_documents_edit_wakes_whoever_waits_for_its_text():
    index = CodeIndex(None, validate({})[0])
    sync = DocumentSync(index, disk=None)  # closing, which needs it, is not tested
    sync.open("a.py", 1, "x = 1\n")
    waiting = asyncio.ensure_future(
        index.text_watch.until(
            "a.py", lambda: index.read_text("a.py") == b"x = 2\n", timeout=60
        )
    )
    await asyncio.sleep(0)
    assert not waiting.done()
    sync.change("a.py", 2, [TextChange("x = 2\n")], PositionEncoding.UTF16)
    assert await asyncio.wait_for(waiting, 10) is True
