"""Reading a project off the event loop: listing, hashing and parsing files.

Listing and hashing run in a thread (they are I/O). Parsing runs in worker
processes when there are many files (tree-sitter and the extraction walk are CPU
work, and two cores beat one), in a thread when there are few (spawning workers
costs more than it saves). Workers are started with ``spawn`` (the server has
threads; ``fork`` would copy their locks) and get their stdout pointed at
stderr, because the LSP speaks on stdout.

The pool lives only as long as a batch needs it, so an idle server holds no
worker processes; :meth:`Extractor.close` stops a running one at shutdown. A
first index starts it ahead (:meth:`Extractor.start_ahead`), while the store
opens. Workers run at a lower CPU priority than the server: on a small machine
the server's own share of indexing (applying, resolving, writing the store)
then keeps pace, instead of piling up behind the parsing. On Linux a worker
dies with the server, even when the server is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import multiprocessing
import os
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from remora_core.discovery.extract import FileExtraction, SkippedFile, extract_paths
from remora_core.discovery.files import (
    FileFilter,
    SourceSkipped,
    content_hash,
    list_sources,
    read_source,
)
from remora_core.index.workers import start_worker

log = logging.getLogger(__name__)

POOL_THRESHOLD = 24
"""Fewer changed files than this are parsed in a thread, not in workers."""
BATCH_SIZE = 16
AHEAD_MAX = 4
"""Workers :meth:`Extractor.start_ahead` starts at most."""


RESULTS_PIPE_BYTES = 1024 * 1024
"""The pipe that brings the workers' results back holds this much: the most
Linux lets a process ask for without privileges (``pipe-max-size``); 64 KB
unless asked."""


def _widen_results(pool: ProcessPoolExecutor) -> None:
    """Let a worker write a batch's results (57 KB on average, 200 KB at most
    for the stdlib) into the pipe at once and go on parsing.

    With 64 KB, a worker waited for the server's reader, a thread that takes
    the interpreter lock from the busy event loop again for every 64 KB: each
    worker sat ~0.3 s of a 7 s first index at 1.7 M lines (4 % of its time)
    in ``write``. Linux only; elsewhere, or refused, the pipe stays as it is.
    """
    setting = getattr(fcntl, "F_SETPIPE_SZ", None)
    queue = getattr(pool, "_result_queue", None)  # CPython 3.8 to 3.13
    reader = getattr(queue, "_reader", None)
    if setting is None or reader is None:
        return
    with contextlib.suppress(OSError):
        fcntl.fcntl(reader.fileno(), setting, RESULTS_PIPE_BYTES)


def _ready() -> None:
    """A worker's first task when started ahead: being up, with this module
    (and so the parser) imported.
    """


Stat = tuple[int, int, int, int]
"""``(mtime_ns, size, ctime_ns, inode)`` of a file: what changes when it is
written, replaced or restored with an old mtime (``cp -p``, ``tar x``), as
``git`` compares; also how polling notices changes."""


VOUCH_MARGIN_NS = 2_000_000_000
"""How much older than the scan a file's mtime must be for its stat to vouch
for its content next time (see :func:`scan`)."""

Vouched = dict[str, tuple[Stat, str]]
"""Path → the stat a stored content hash was taken at, and that hash."""


@dataclass(frozen=True, slots=True)
class Scan:
    """The indexed files on disk: content hashes, skip reasons and stats."""

    hashes: dict[str, str]
    skipped: dict[str, str]
    stats: dict[str, Stat]
    taken_ns: int = 0
    """Wall-clock time (``time.time_ns``) just before the files were listed."""

    def stat_to_keep(self, path: str) -> Stat | None:
        """``path``'s stat if it may vouch for the content read after it: the
        file was last modified well before the scan, so a later change moves
        its mtime (and its ctime). A file written within the filesystem's
        timestamp tick of the scan could be written again keeping every time
        and its size: such a file is read next time.
        """
        stat = self.stats.get(path)
        if stat is None or stat[0] > self.taken_ns - VOUCH_MARGIN_NS:
            return None
        return stat


def stat_sources(root: Path, file_filter: FileFilter) -> dict[str, Stat]:
    """The :data:`Stat` of every indexed file (blocking)."""
    stats: dict[str, Stat] = {}
    base = str(root)
    for path in list_sources(root, file_filter):
        try:  # os.path, not pathlib: building a Path per file costs more
            info = os.stat(os.path.join(base, path))
        except OSError:
            continue
        stats[path] = (info.st_mtime_ns, info.st_size, info.st_ctime_ns, info.st_ino)
    return stats


UNREAD = ""
"""The hash :func:`scan` gives a file it did not read (see ``read``)."""


def scan(
    root: Path,
    file_filter: FileFilter,
    max_bytes: int,
    vouched: Callable[[], Vouched] | None = None,
    *,
    read: bool = True,
) -> Scan:
    """List, stat and hash every indexed file (blocking: run it in a thread).

    ``vouched`` gives, once the files are listed, the stored hashes whose file
    stat is known (it may wait for the store): a file whose :data:`Stat` is
    unchanged keeps its stored hash unread, as ``git status`` does with its
    index; any other file is read and hashed.

    ``read`` false (a first index: nothing stored to compare with, every file
    is parsed): the files are listed and stat'ed only, each hash is
    :data:`UNREAD`. The parsing workers read, check and hash each file anyway;
    reading them here too cost the server a quarter of a second of CPU on 1.7
    million lines, while the workers waited for the list.
    """
    hashes: dict[str, str] = {}
    skipped: dict[str, str] = {}
    taken_ns = time.time_ns()
    stats = stat_sources(root, file_filter)
    if not read:
        return Scan(dict.fromkeys(stats, UNREAD), skipped, stats, taken_ns)
    known = vouched() if vouched is not None else {}
    base = str(root)
    for path, stat in stats.items():
        stored = known.get(path)
        if stored is not None and stored[0] == stat and stat[1] <= max_bytes:
            hashes[path] = stored[1]
            continue
        size = stat[1]
        try:
            data = read_source(os.path.join(base, path), max_bytes, size=size)
            hashes[path] = content_hash(data)
        except SourceSkipped as reason:
            skipped[path] = str(reason)
    return Scan(hashes, skipped, stats, taken_ns)


def read_one(root: Path, path: str, max_bytes: int) -> tuple[bytes | None, str | None]:
    """A file's bytes, or why it is skipped (blocking)."""
    try:
        return read_source(root / path, max_bytes), None
    except SourceSkipped as reason:
        return None, str(reason)


class Extractor:
    """Parses batches of files, in worker processes when worth it."""

    def __init__(self, root: Path, max_bytes: int, read_inline_ids: bool, workers: int):
        self.root = root
        self.max_bytes = max_bytes
        self.read_inline_ids = read_inline_ids
        self.workers = max(1, workers)
        self._pool: ProcessPoolExecutor | None = None
        self._ahead: ProcessPoolExecutor | None = None
        """Workers started by :meth:`start_ahead`, not used yet."""

    def start_ahead(self) -> None:
        """Start the worker processes now, when a first index of the project
        is coming: they start Python and import the parser while the server
        opens its store and lists the files, rather than after. Stopped by
        :meth:`release_ahead` if the index turns out not to need them.
        """
        if self.workers == 1 or self._ahead is not None:
            return
        try:
            pool = self._new_pool()
            # A few now; a big machine's others start when work comes.
            for _ in range(min(self.workers, AHEAD_MAX)):
                pool.submit(_ready)
        except (OSError, RuntimeError, ImportError) as error:  # no processes here
            log.warning("cannot start parsing workers ahead: %s", error)
            return
        self._ahead = pool

    def release_ahead(self) -> None:
        """Stop workers started ahead that no extraction took."""
        pool, self._ahead = self._ahead, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def _new_pool(self) -> ProcessPoolExecutor:
        pool = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=start_worker,
            initargs=(os.getpid(),),
        )
        _widen_results(pool)
        return pool

    async def extract(
        self, paths: list[str]
    ) -> AsyncIterator[list[FileExtraction | SkippedFile]]:
        """Yield results batch by batch as they complete."""
        if not paths:
            return
        if len(paths) < POOL_THRESHOLD or self.workers == 1:
            self.release_ahead()
            for start in range(0, len(paths), BATCH_SIZE):
                yield await asyncio.to_thread(
                    extract_paths,
                    str(self.root),
                    paths[start : start + BATCH_SIZE],
                    self.max_bytes,
                    self.read_inline_ids,
                )
            return
        loop = asyncio.get_running_loop()
        pool = self._pool = self._ahead or self._new_pool()
        self._ahead = None
        # Results in the order they complete, through a queue: waiting on the
        # set of pending batches each time walked them all (224 batches for
        # 1.7 M lines: ~25k callbacks added and removed).
        finished: asyncio.Queue[asyncio.Future[list[FileExtraction | SkippedFile]]]
        finished = asyncio.Queue()
        starts = range(0, len(paths), BATCH_SIZE)
        try:
            for start in starts:
                batch = loop.run_in_executor(
                    pool,
                    extract_paths,
                    str(self.root),
                    paths[start : start + BATCH_SIZE],
                    self.max_bytes,
                    self.read_inline_ids,
                )
                batch.add_done_callback(finished.put_nowait)
            for _ in starts:
                yield (await finished.get()).result()
        finally:
            self._pool = None
            pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop a running pool without waiting for its work."""
        self.release_ahead()
        pool, self._pool = self._pool, None
        if pool is not None:
            # Taken first: shutting down forgets them (``_processes`` is None).
            processes = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for process in processes:
                process.terminate()
