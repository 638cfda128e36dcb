"""Keeping the code index in step with the project's files on disk.

- :meth:`DiskSync.index_workspace` runs at start-up: files whose content hash is
  unchanged since the last run are skipped; the rest are parsed (in worker
  processes when there are many) and their edges resolved — cross-file calls
  need the files they name, so each file is resolved as soon as those are in
  the graph (``resolve_queue.py``), the rest once every file is in.
- :meth:`DiskSync.files_changed` handles watcher events (or polling): created
  and changed files are re-indexed, deleted ones orphaned. A created file with
  the content of a file deleted earlier is that file renamed: its ids stay.
- :meth:`DiskSync.rename` handles ``workspace/didRenameFiles`` (files and
  whole directories).

Files the editor has open are left alone: the buffer is their truth.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from remora_core.discovery import SkippedFile
from remora_core.discovery.extract import extract_source
from remora_core.discovery.files import content_hash, link_refusal
from remora_core.index.changes import Changes
from remora_core.index.collector import collector_paused
from remora_core.index.indexer import Scan, Stat, read_one, scan, stat_sources
from remora_core.index.resolve_queue import ResolveQueue, parse_order
from remora_core.store.nodes import FileRecord, FileSnapshot

if TYPE_CHECKING:
    from remora_core.index.code_index import CodeIndex
    from remora_core.progress import ProgressSink

log = logging.getLogger(__name__)

YIELD_EVERY = 50
"""Files resolved between two yields to the event loop during start-up."""
SAVE_EARLY = 200
"""Resolved files written together while indexing goes on; once fewer files
than this are left to parse, those of each batch, so that little is left to
write after the last one (the last round of 200 was ~0.1 s on one core, the
workers done, at the end of a first index of 1.7 M lines)."""


class DiskSync:
    """Re-indexes a project's files when they change on disk.

    It updates the index and hands what changed to the index's listener
    (``announce``); it calls nothing above the index.
    """

    def __init__(
        self,
        index: CodeIndex,
        progress: Callable[[], ProgressSink | None] | None = None,
    ) -> None:
        self.index = index
        self.progress = progress
        """Makes the work-done progress of indexing the workspace, if shown."""
        self.stats: dict[str, Stat] = {}
        self.parsed = 0
        """Files parsed by the last start-up index."""

    def _current(self, path: str, digest: str) -> bool:
        record = self.index.records.get(path)
        return (
            record is not None
            and record.status == "present"
            and record.content_hash == digest
            and self.index.graph.has_active_file(path)
        )

    async def index_workspace(self, scanning: Awaitable[Scan] | None = None) -> None:
        """Bring the graph up to date with every file under the root.

        ``scanning`` is a listing and hashing of the files already under way.
        """
        index = self.index
        assert index.root is not None
        sink = self.progress() if self.progress else None
        started = time.perf_counter()
        if sink:
            sink.begin("Remora: indexing", f"scanning {index.root.name}")
        self.parsed = 0
        try:
            # Start-up builds most of the graph: no garbage collection meanwhile.
            with collector_paused():
                async with index.lock:
                    if scanning is None:
                        known = index.vouched()  # read here, not in the thread
                        scanning = asyncio.to_thread(
                            scan,
                            index.root,
                            index.filter,
                            index.config.discovery.max_file_bytes,
                            lambda: known,
                        )
                    found = await scanning
                    self.stats = found.stats
                    for path, reason in found.skipped.items():
                        if path in index.documents:
                            continue
                        if (gone := index.skip(path, reason)) is not None:
                            await index.listener.announce(Changes.of_update(gone))
                    changed = [
                        path
                        for path, digest in found.hashes.items()
                        if path not in index.documents
                        and not self._current(path, digest)
                    ]
                    missing = [
                        path
                        for path, record in index.records.items()
                        if record.status == "present"
                        and path not in found.stats
                        and path not in index.documents
                    ]
                    renamed = self._match_renames(changed, missing, found.hashes)
                    for path in missing:
                        if (gone := index.forget(path)) is not None:
                            await index.listener.announce(Changes.of_update(gone))
                    reshaped, settled = await self._parse(changed, found, sink)
                    reshaped |= set(missing) | {p for pair in renamed for p in pair}
                    # Opened meanwhile: resolved against a graph still filling.
                    opened = index.opened_while_indexing & set(found.stats)
                    await index.reextract(
                        (index.dependents(reshaped) - settled) | opened
                    )
                    await index.save_dirty()
                    await index.restat(self._stats_to_record(found, set(changed)))
        finally:
            seconds = time.perf_counter() - started
            summary = (
                f"{len(self.stats)} files, {self.parsed} parsed, "
                f"{index.graph.active_count()} nodes in {seconds:.1f} s"
            )
            log.info("indexed %s: %s", index.root, summary)
            if sink:
                sink.end(summary)

    def _stats_to_record(self, found: Scan, changed: set[str]) -> dict[str, Stat]:
        """Unchanged files whose record lacks the stat that would spare reading
        them next time (only where the stored hash is that of the file on disk).
        """
        index = self.index
        stats = {}
        for path, digest in found.hashes.items():
            record = index.records.get(path)
            if (
                path in changed
                or path in index.documents
                or record is None
                or record.content_hash != digest
            ):
                continue
            stat = found.stat_to_keep(path)
            if stat is not None and record.stat != stat:
                stats[path] = stat
        return stats

    def _match_renames(
        self, changed: list[str], missing: list[str], hashes: dict[str, str]
    ) -> list[tuple[str, str]]:
        """Pair files that vanished with new files of the same content."""
        index = self.index
        renamed: list[tuple[str, str]] = []
        by_hash: dict[str, str] = {}
        for path in missing:
            digest = index.records[path].content_hash
            if digest:
                by_hash[digest] = path
        for path in changed:
            if path in index.records and index.records[path].status == "present":
                continue
            old = by_hash.pop(hashes.get(path, ""), None)
            if old is not None and index.rename(old, path):
                missing.remove(old)
                renamed.append((old, path))
                log.info("%s was renamed to %s", old, path)
        return renamed

    async def _parse(
        self, paths: list[str], found: Scan, sink: ProgressSink | None
    ) -> tuple[set[str], set[str]]:
        """Parse, apply and resolve ``paths``; return the paths whose set of
        nodes changed, and those resolved with every file in (their edges are
        settled).

        A file is resolved as soon as the files it names are in the graph
        (``resolve_queue.py``), while the rest are parsed; what is left is
        resolved once the last file is in. Writes go in order, each round's
        freshly parsed nodes first (their records without a content hash), then
        the files resolved so far, whole: a resolved file's edges never name a
        node the store has not got, so after a crash a file parsed again keeps
        its ids, and a file not yet resolved is parsed again.
        """
        index = self.index
        total = len(found.hashes)
        paths = parse_order(paths)
        queue = ResolveQueue(index, paths)
        parsed: list[str] = []
        reshaped: set[str] = set()
        done = 0
        unwritten: list[str] = []
        """Parsed since the last write: their nodes go first."""
        resolved: list[str] = []
        saving: asyncio.Task[None] | None = None

        def write() -> None:
            nonlocal saving, unwritten, resolved
            saving = asyncio.ensure_future(
                self._save_after(saving, unwritten, resolved)
            )
            unwritten, resolved = [], []

        try:
            async for batch in index.extractor.extract(paths):
                for result in batch:
                    done += 1
                    if result.path in index.documents:
                        queue.skipped(result.path, in_editor=True)
                        continue
                    if isinstance(result, SkippedFile):
                        gone = index.skip(result.path, result.reason)
                        queue.skipped(result.path, in_editor=False)
                        if gone is not None:
                            await index.listener.announce(Changes.of_update(gone))
                        reshaped.add(result.path)
                        continue
                    known = index.graph.file_node(result.path) is not None
                    update = index.apply(
                        result.path,
                        result,
                        resolve=False,
                        stat=found.stat_to_keep(result.path),
                    )
                    queue.parsed(result.path, result, update.ids)
                    parsed.append(result.path)
                    unwritten.append(result.path)
                    if update.topology_changed:
                        reshaped.add(result.path)
                    if known:  # changed since the last run (a first index is not)
                        await index.listener.announce(Changes.of_update(update))
                resolved += queue.resolve_ready()
                if len(resolved) >= SAVE_EARLY or (
                    resolved and len(paths) - done < SAVE_EARLY
                ):
                    write()
                if sink:
                    sink.report(
                        f"parsed {done}/{len(paths)} changed files of {total}",
                        int(100 * done / len(paths)),
                    )
            early = len(queue.early)
            left = queue.left()
            for count, (path, extraction, ids) in enumerate(left, 1):
                if path not in index.documents:
                    index.resolve(path, extraction, ids)
                    index.settle(path, extraction.content_hash)
                    resolved.append(path)
                if len(resolved) >= SAVE_EARLY:
                    write()
                if count % YIELD_EVERY == 0:
                    await asyncio.sleep(0)
            if unwritten or resolved:
                write()
            log.debug(
                "%d of %d parsed files resolved while parsing, %d after",
                early,
                len(parsed),
                len(left),
            )
        finally:
            if saving is not None:
                await saving
        self.parsed += len(parsed)
        return reshaped, set(parsed)

    async def _save_after(
        self,
        previous: Awaitable[None] | None,
        parsed: list[str],
        resolved: list[str],
    ) -> None:
        """Once the write before (``previous``) is done: the nodes of ``parsed``
        files, then ``resolved`` files whole. One after the other, as the store
        takes them anyway.
        """
        if previous is not None:
            await previous
        await self._save_nodes(parsed)
        await self.index.save_dirty(only=resolved)

    async def _save_nodes(self, paths: list[str]) -> None:
        """Write the nodes of freshly parsed files, their records without a
        content hash (not settled: parsed again after a crash) and no edges.
        A later write of the file whole skips these nodes (``NodeStore``
        writes a node again only when it changed).
        """
        index = self.index
        if index.store is None:
            return
        graph = index.graph
        snapshots = []
        for path in paths:
            file_node = graph.file_node(path)
            if file_node is None or path in index.documents:
                continue
            nodes = [file_node, *graph.file_nodes(path, orphans=True)]
            snapshots.append(
                FileSnapshot(FileRecord(path, file_node.id, None), nodes, [])
            )
        if snapshots:
            await index.store.save_files(snapshots)

    async def files_changed(
        self,
        created: Sequence[str] = (),
        changed: Sequence[str] = (),
        deleted: Sequence[str] = (),
    ) -> None:
        """Re-index files created, changed or deleted outside the editor."""
        index = self.index
        root = index.root
        if root is None:
            return
        if not await index.ready():
            return
        async with index.lock:
            touched: set[str] = set()
            for path in deleted:
                if path in index.documents or (root / path).exists():
                    continue
                if (gone := index.forget(path)) is not None:
                    touched.add(path)
                    await index.listener.announce(Changes.of_update(gone))
            candidates = [
                p
                for p in dict.fromkeys([*created, *changed])
                if p not in index.documents
                and index.filter.wants(p)
                and not link_refusal(root, p, index.filter.secrets)
            ]
            max_bytes = index.config.discovery.max_file_bytes
            for path in candidates:
                data, reason = await asyncio.to_thread(read_one, root, path, max_bytes)
                if path in index.documents:
                    continue
                if data is None:
                    if (root / path).exists():
                        gone = index.skip(path, reason or "unreadable")
                    elif (gone := index.forget(path)) is not None:
                        touched.add(path)
                    if gone is not None:
                        await index.listener.announce(Changes.of_update(gone))
                    continue
                digest = content_hash(data)
                if self._current(path, digest):
                    continue
                self._rename_if_moved(path, digest)
                extraction = await asyncio.to_thread(
                    extract_source,
                    path,
                    data,
                    read_inline_ids=index.config.ids.inline_comments,
                )
                if path not in index.documents:
                    update = index.apply(path, extraction)
                    if update.topology_changed:
                        touched.add(path)
                    await index.listener.announce(Changes.of_update(update))
            await index.reextract(index.dependents(touched))
            await index.save_dirty()

    def _rename_if_moved(self, path: str, digest: str) -> None:
        """A new file whose content matches a vanished file is that file, moved."""
        index = self.index
        record = index.records.get(path)
        if record is not None and record.status == "present":
            return
        for old, candidate in list(index.records.items()):
            if (
                old != path
                and candidate.content_hash == digest
                and old not in index.documents
                and (candidate.status == "deleted" or not index.absolute(old).exists())
            ):
                if index.rename(old, path):
                    log.info("%s was renamed to %s", old, path)
                return

    async def rename(self, pairs: list[tuple[str, str]]) -> None:
        """Files or directories renamed through the editor."""
        index = self.index
        if not await index.ready():
            return
        moved: list[str] = []
        async with index.lock:
            for old, new in pairs:
                for source, target in self._expand(old, new):
                    if index.rename(source, target):
                        moved.append(target)
        await self.files_changed(changed=moved)
        async with index.lock:
            await index.reextract(index.dependents(set(moved)))
            await index.save_dirty()

    def _expand(self, old: str, new: str) -> list[tuple[str, str]]:
        """A file pair, or every known file under a renamed directory."""
        index = self.index
        if old in index.graph.file_ids:
            return [(old, new)]
        prefix = old.rstrip("/") + "/"
        return [
            (path, new.rstrip("/") + "/" + path[len(prefix) :])
            for path in index.graph.paths()
            if path.startswith(prefix)
        ]

    async def poll(self, interval: float) -> None:
        """Watch the disk by polling, for editors that cannot watch for us."""
        index = self.index
        if index.root is None:
            return
        await index.until(index.indexed)
        while not index.closed:
            await asyncio.sleep(interval)
            if index.closed:
                return
            stats = await asyncio.to_thread(stat_sources, index.root, index.filter)
            before, self.stats = self.stats, stats
            created = [p for p in stats if p not in before]
            changed = [p for p in stats if p in before and stats[p] != before[p]]
            deleted = [p for p in before if p not in stats]
            if created or changed or deleted:
                await self.files_changed(created, changed, deleted)
