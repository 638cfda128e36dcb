"""Waiting for a file's text to change: an applied edit landing.

When the editor applies an accepted proposal, the new text reaches the engine a
moment later (an open buffer's ``didChange``; a file written on disk, read
again). The accept use case waits for the document to hold what it expects
(``review/decisions.py``, :meth:`Review.landed`) without polling: the index
calls :meth:`TextWatch.changed` wherever it takes a new text of a file — an
open document's edit, opening or closing one (the disk is then the truth), a
file read from disk, deleted or renamed — and whoever waits on that path looks
again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class TextWatch:
    """Wakes those waiting for the text of a path to change."""

    def __init__(self) -> None:
        self._waiting: dict[str, set[asyncio.Future[None]]] = {}
        """Path → the futures of those waiting for its next change."""

    def changed(self, path: str) -> None:
        """The index took a new text of ``path``: wake whoever waits on it."""
        for waiter in self._waiting.pop(path, ()):
            if not waiter.done():
                waiter.set_result(None)

    async def until(self, path: str, holds: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``holds()`` (asked now and after each change of
        ``path``), at most ``timeout`` seconds; whether it held.

        It is asked once more when the time is up: a change the index never
        heard of (a file written on disk while nothing watches it) is then
        still seen.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not holds():
            left = deadline - loop.time()
            if left <= 0:
                return False
            waiter: asyncio.Future[None] = loop.create_future()
            waiters = self._waiting.setdefault(path, set())
            waiters.add(waiter)
            try:
                await asyncio.wait_for(waiter, left)
            except TimeoutError:
                return holds()
            finally:
                waiters.discard(waiter)
                if not waiters and self._waiting.get(path) is waiters:
                    del self._waiting[path]
        return True
