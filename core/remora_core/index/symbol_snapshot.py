"""The name index as stored: a warm start's first symbol search without the graph.

``workspace/symbol`` is answered from the name index (``symbol_index.py``),
which needs every node in memory: on a warm start of a large project that
meant waiting seconds for the whole stored graph (2.3 s of CPU for 147k nodes)
and for its names to be indexed (0.8 s) before the first answer. Instead, the
names of every active node are kept in the store as one blob (the
``symbol_snapshot`` table): read and checked at start-up in a few
milliseconds, it answers for the files still only in the store, while the
live name index answers for the files in memory; the two are merged by the
ranking's own sort key (``CodeGraph.search``), so the answer is the one the
full index would give.

The blob is built from the store itself, in one read transaction (so its
names and the files' write times it records are of the same moment), in a
process of its own: it is Python work on 150k rows, and on the server's
interpreter it would slow the editor's requests meanwhile. It is built when
a start found none, or found too many files changed since (their
``indexed_at`` or file id differ from the recorded ones; those few files
are loaded from the store at once, so that the live index answers for them).

The layout makes reading it cheap: a handful of long strings and integer
arrays, no object per node. Nodes are numbered in the ranking's tie-break
order (qualified-name length, path, position, id), so within a rank a lower
number ranks first. Each of three tables (lowercased names, qualified names,
paths) holds its distinct keys joined, shortest first, like the live index's
text, and the numbers of the nodes under each key. The blob is checked
whole when read (the store sits in the project, which may be hostile): a
bad one is ignored and built again.
"""

from __future__ import annotations

import contextlib
import logging
import re
import sqlite3
import struct
import sys
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from remora_core.index.identity import ID_PREFIX

log = logging.getLogger(__name__)

SEPARATOR = "\0"
MAGIC = b"remora-symbols-L" if sys.byteorder == "little" else b"remora-symbols-B"
"""The format's version and the byte order of its arrays (written natively)."""
_HEADER = struct.Struct("<16sQQ")
"""Magic, node count, file count."""
_LENGTH = struct.Struct("<Q")

Hit = tuple[int, int, str, int, str]
"""(rank, qualified-name length, path, start byte, id): the ranking's sort key
(``search.py``), the same for a node of the snapshot and of the live index."""

_FILES = "SELECT path, file_id, indexed_at FROM files"
_STATES = "SELECT path, file_id, indexed_at, status FROM files"
_NODES = (
    "SELECT n.id, n.name, n.qualified_name, n.file_path, n.start_byte, n.kind, "
    "f.file_id FROM nodes AS n JOIN files AS f ON f.path = n.file_path "
    "WHERE n.status = 'active' AND f.file_id != '' "
    "ORDER BY length(n.qualified_name), n.file_path, n.start_byte, n.id"
)
"""In the ranking's tie-break order, sorted by SQLite (no list of every row
in memory): ``length`` counts characters and text compares as code points,
as in Python; :func:`build` checks it as the rows come."""
_FILE_NODES = (
    "SELECT DISTINCT n.file_path FROM nodes AS n JOIN files AS f "
    "ON f.path = n.file_path WHERE n.kind = 'file' AND n.id = f.file_id"
)


# ---- building -------------------------------------------------------------------


class _Postings:
    """Lowercased keys → the numbers of the nodes under each, as they come."""

    def __init__(self) -> None:
        self.table: dict[str, array] = {}

    def add(self, key: str, number: int) -> None:
        posting = self.table.get(key)
        if posting is None:
            self.table[key] = array("I", [number])
        else:
            posting.append(number)


def build(db: sqlite3.Connection) -> bytes:
    """The blob for what ``db`` holds now (one read transaction).

    Rows are read one by one in rank order into arrays and three key
    tables: about 40 MB for 150k nodes, the rows never all in memory.
    """
    db.execute("BEGIN")
    try:
        files = db.execute(_FILES).fetchall()
        with_file_node = {path for (path,) in db.execute(_FILE_NODES)}
        # A file whose record names no file node of it is loaded as the graph
        # decides (``CodeGraph._load``): left out here, it is loaded at start.
        files = [f for f in files if f[0] in with_file_node]
        file_index = {path: i for i, (path, _, _) in enumerate(files)}
        ids: list[str] = []
        file_of, start_byte, qlens = array("I"), array("q"), array("I")
        tables = (_Postings(), _Postings(), _Postings())
        lower: dict[str, str] = {}
        previous: tuple[int, str, int, str] | None = None
        for node_id, name, qualified, path, start, kind, file_id in db.execute(_NODES):
            # The file node counts once, under the id its record names
            # (another one of the same path, left by a rename, is not loaded).
            number = file_index.get(path)
            if number is None or (kind == "file" and node_id != file_id):
                continue
            order = (len(qualified), path, start, node_id)
            if previous is not None and order <= previous:
                raise ValueError("the store's order is not the ranking's")
            previous = order
            for table, key in zip(tables, (name, qualified, path), strict=True):
                lowered = lower.get(key)
                if lowered is None:
                    lowered = lower[key] = key.lower()
                table.add(lowered, len(ids))
            ids.append(node_id)
            file_of.append(number)
            start_byte.append(start)
            qlens.append(order[0])
    finally:
        db.execute("ROLLBACK")
    del lower
    sections: list[bytes] = []

    def text(parts: Iterable[str]) -> None:
        sections.append(SEPARATOR.join(parts).encode("utf-8"))

    def joined(parts: list[str]) -> None:
        """``\\0part\\0part…\\0`` and where each part starts (one more
        entry: one past the last separator).
        """
        starts, at = array("I"), 1
        for part in parts:
            starts.append(at)
            at += len(part) + 1
        starts.append(at)
        text(["", *parts, ""])
        sections.append(starts.tobytes())

    text(f[0] for f in files)
    text(f[1] for f in files)
    sections.append(array("d", (float(f[2] or 0.0) for f in files)).tobytes())
    joined(ids)
    del ids
    sections += [file_of.tobytes(), start_byte.tobytes(), qlens.tobytes()]
    longest = qlens[-1] if qlens else -1
    bounds_by_length = array("I", (bisect_left(qlens, n) for n in range(longest + 2)))
    sections.append(bounds_by_length.tobytes())
    for postings in tables:
        keys = sorted(postings.table, key=lambda k: (len(k), k))
        joined(keys)
        bounds, flat = array("I", [0]), array("I")
        for key in keys:
            flat.extend(postings.table[key])
            bounds.append(len(flat))
        sections += [bounds.tobytes(), flat.tobytes()]
        postings.table.clear()
    header = _HEADER.pack(MAGIC, len(file_of), len(files))
    body = b"".join(_LENGTH.pack(len(s)) + s for s in sections)
    return header + body


def build_from(path: str, timeout_s: float) -> bytes | None:
    """The blob for the store at ``path``, read on a connection of its own
    (run in a process of its own: see the module docstring); None if the
    store cannot be read.
    """
    try:
        db = sqlite3.connect(
            f"file:{path}?mode=ro", uri=True, isolation_level=None, timeout=timeout_s
        )
    except sqlite3.Error as error:
        log.warning("cannot read %s to store its names: %s", path, error)
        return None
    try:
        return build(db)
    except (sqlite3.Error, UnicodeError, OverflowError, ValueError) as error:
        log.warning("cannot store the names of %s: %s", path, error)
        return None
    finally:
        db.close()


# ---- reading --------------------------------------------------------------------


class BadSnapshot(ValueError):
    """The blob is not one this code wrote (or not whole)."""


def _numbers(data: bytes | memoryview, code: str) -> array:
    values = array(code)
    if len(data) % values.itemsize:
        raise BadSnapshot("an array's length is not whole")
    values.frombytes(data)
    return values


def _starts(keys: list[int] | str) -> array:
    """Where each ``\\0``-separated part of ``keys`` (joined without the outer
    separators) begins in ``"\\0" + keys + "\\0"``, and one past the end.
    """
    found = array("I", [1])
    if isinstance(keys, str):
        position = keys.find(SEPARATOR)
        while position >= 0:
            found.append(position + 2)
            position = keys.find(SEPARATOR, position + 1)
        found.append(len(keys) + 2)
    return found


class _Table:
    """Keys (shortest first) and the numbers of the nodes under each."""

    def __init__(
        self, text: str, starts: array, bounds: array, postings: array, bounded: bool
    ):
        self.text = text
        """``\\0key\\0key…\\0``."""
        self.starts = starts
        """Where key ``k`` starts in :attr:`text`; one more entry at the end."""
        self.bounds = bounds
        """Key ``k``'s nodes are ``postings[bounds[k]:bounds[k + 1]]``."""
        self.postings = postings
        self.bounded = bounded
        """Whether a key is never longer than the qualified names under it."""
        self._last_fuzzy: tuple[str, str, array, list[int]] | None = None
        """(query, the text of the keys it matched, where they start, their
        numbers) of the last fuzzy search read to the end: the next
        keystroke's matches are among them."""

    def key_at(self, position: int) -> int:
        """The number of the key whose text holds ``position``."""
        return bisect_right(self.starts, position) - 1

    def key(self, number: int) -> str:
        return self.text[self.starts[number] : self.starts[number + 1] - 1]

    def length(self, number: int) -> int:
        return self.starts[number + 1] - self.starts[number] - 1

    def nodes(self, number: int) -> array:
        return self.postings[self.bounds[number] : self.bounds[number + 1]]

    def exact(self, wanted: str) -> Iterator[int]:
        position = self.text.find(SEPARATOR + wanted + SEPARATOR)
        if position >= 0:
            yield self.key_at(position + 1)

    def containing(self, needle: str) -> Iterator[int]:
        """Keys holding ``needle`` (a prefix when it starts with the
        separator), each once, shortest first.
        """
        find, skip = self.text.find, needle[0] == SEPARATOR
        position = find(needle)
        while position >= 0:
            number = self.key_at(position + skip)
            yield number
            # Past this key (and forward, whatever a damaged blob says).
            position = find(needle, max(self.starts[number + 1] - 1, position + 1))

    def fuzzy(self, query: str) -> Iterator[int]:
        """Keys holding ``query``'s characters in order (as the live index's
        ``_Table.fuzzy``), shortest first. When the last search read to the
        end was for a prefix of ``query``, only the keys it matched are read.
        """
        last = self._last_fuzzy
        if last is not None and query.startswith(last[0]):
            _, text, starts, numbers = last
        else:
            text, starts, numbers = self.text, self.starts, None
        matched: list[int] = []
        for match in _fuzzy_pattern(query).finditer(text):
            number = bisect_right(starts, match.start(1)) - 1
            if numbers is not None:
                number = numbers[number]
            matched.append(number)
            yield number
        keys = SEPARATOR.join(self.key(n) for n in matched)
        narrowed = SEPARATOR + keys + SEPARATOR if keys else SEPARATOR
        self._last_fuzzy = (query, narrowed, _starts(keys), matched)


def _fuzzy_pattern(query: str) -> re.Pattern[str]:
    """As ``symbol_index._fuzzy_pattern``: no backtracking."""
    parts = [re.escape(SEPARATOR)]
    for ch in query:
        parts.append(f"[^{re.escape(SEPARATOR + ch)}]*{re.escape(ch)}")
    parts.append(f"[^{re.escape(SEPARATOR)}]*")
    return re.compile(f"{parts[0]}({''.join(parts[1:])})")


@dataclass(frozen=True)
class StoredFile:
    """What the store says of a file now: checked against the snapshot's."""

    file_id: str
    indexed_at: float
    present: bool


_TEXTS = (0, 1, 3, 9, 13, 17)
"""Which of the blob's sections are text (the others are arrays)."""
_SECTIONS = 21


def _sections(data: bytes) -> tuple[int, int, list[memoryview]]:
    """The node count, file count and sections of a blob (views into it: the
    arrays and texts made of them are copies anyway).
    """
    if len(data) < _HEADER.size:
        raise BadSnapshot("too short")
    magic, count, file_count = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise BadSnapshot("not a snapshot of this version and byte order")
    sections: list[memoryview] = []
    view, offset = memoryview(data), _HEADER.size
    while offset < len(data):
        if offset + _LENGTH.size > len(data):
            raise BadSnapshot("a section's length is cut")
        (length,) = _LENGTH.unpack_from(data, offset)
        offset += _LENGTH.size
        if offset + length > len(data):
            raise BadSnapshot("a section is cut")
        sections.append(view[offset : offset + length])
        offset += length
    if len(sections) != _SECTIONS:
        raise BadSnapshot(f"not {_SECTIONS} sections")
    return count, file_count, sections


class SymbolSnapshot:
    """The stored name index, answering for the files still only in the store.

    Reading it checks only that its parts fit together (cheap); a blob whose
    numbers are wrong inside can only make a search raise ``IndexError`` or
    ``ValueError`` (never loop: every scan moves forward), which the caller
    takes as "no snapshot" (``CodeGraph.search``).
    """

    def __init__(self, data: bytes) -> None:
        """Read the blob; :class:`BadSnapshot` if its parts do not fit."""
        count, file_count, sections = _sections(data)
        try:
            texts = {i: str(sections[i], "utf-8") for i in _TEXTS}
        except UnicodeDecodeError as error:
            raise BadSnapshot("text that is not UTF-8") from error
        self.paths = texts[0].split(SEPARATOR) if file_count else []
        self.file_ids = texts[1].split(SEPARATOR) if file_count else []
        self.indexed_at = _numbers(sections[2], "d")
        self.id_text = texts[3]
        self.id_starts = _numbers(sections[4], "I")
        self.file_of = _numbers(sections[5], "I")
        self.start_byte = _numbers(sections[6], "q")
        self.qlen = _numbers(sections[7], "I")
        self.qlen_start = _numbers(sections[8], "I")
        """First node number of each qualified-name length (for pruning)."""
        self.names, self.qualified, self.path_keys = (
            _Table(
                texts[first],
                _numbers(sections[first + 1], "I"),
                _numbers(sections[first + 2], "I"),
                _numbers(sections[first + 3], "I"),
                bounded,
            )
            for first, bounded in ((9, True), (13, True), (17, False))
        )
        self._check(count, file_count)
        self.excluded = bytearray(file_count)
        """Files the snapshot does not answer for (loaded, or changed)."""
        self._by_path = {path: i for i, path in enumerate(self.paths)}

    def _check(self, count: int, file_count: int) -> None:
        """The parts fit together (sizes, and every node number within bounds:
        a search passes over numbers past the nodes, so it would not notice;
        see the class docstring).
        """
        sizes = (len(self.paths), len(self.file_ids), len(self.indexed_at))
        if any(size != file_count for size in sizes):
            raise BadSnapshot("file tables of different lengths")
        per_node = (len(self.id_starts) - 1, len(self.file_of))
        per_node += (len(self.start_byte), len(self.qlen))
        if any(size != count for size in per_node) or not self.qlen_start:
            raise BadSnapshot("node tables of different lengths")
        if count and max(self.file_of) >= file_count:
            raise BadSnapshot("a node in no file")
        for table in (self.names, self.qualified, self.path_keys):
            if len(table.bounds) != len(table.starts) or not table.bounds:
                raise BadSnapshot("a table's bounds do not fit its keys")
            if table.bounds[-1] != len(table.postings):
                raise BadSnapshot("a table's bounds do not fit its nodes")
            if table.postings and max(table.postings) >= count:
                raise BadSnapshot("a table names a node that is not there")

    # ---- which files it answers for --------------------------------------------

    def stale(self, stored: dict[str, StoredFile]) -> list[str]:
        """Exclude every file whose store state is not the one the snapshot
        was built from; the paths of those with searchable nodes in the store
        (the caller loads them: the live index answers for them).
        """
        found = []
        for path, now in stored.items():
            number = self._by_path.get(path)
            if number is None:
                if now.present:  # indexed after the snapshot was built
                    found.append(path)
            elif (
                self.file_ids[number] != now.file_id
                or self.indexed_at[number] != now.indexed_at
            ):
                self.excluded[number] = 1
                found.append(path)
        for path in self._by_path.keys() - stored.keys():
            self.excluded[self._by_path[path]] = 1
        return found

    def exclude(self, paths: Iterable[str]) -> None:
        """These files are in memory now: the live index answers for them."""
        for path in paths:
            number = self._by_path.get(path)
            if number is not None:
                self.excluded[number] = 1

    @property
    def files(self) -> int:
        """How many files it was built from."""
        return len(self.paths)

    # ---- searching --------------------------------------------------------------

    def node_id(self, number: int) -> str:
        """The id of node ``number``."""
        starts = self.id_starts
        return self.id_text[starts[number] : starts[number + 1] - 1]

    def hit(self, rank: int, number: int) -> Hit:
        """Node ``number``'s sort key at ``rank``."""
        return (
            rank,
            self.qlen[number],
            self.paths[self.file_of[number]],
            self.start_byte[number],
            self.node_id(number),
        )

    def search(self, wanted: str, limit: int, skip: Callable[[str], bool]) -> list[Hit]:
        """The ``limit`` best matches of ``wanted`` (stripped, lowercased, not
        empty) among the nodes of the files it answers for, as the live
        index ranks them; ``skip``: ids to leave out (a node in memory under
        another file: its inline id moved, and memory is newer).
        """
        extra = 0
        while True:
            hits = self._search(wanted, limit + extra)
            kept = [hit for hit in hits if not skip(hit[4])]
            if len(kept) >= limit or len(hits) < limit + extra:
                return kept[:limit]
            extra += len(hits) - len(kept)

    def _search(self, wanted: str, limit: int) -> list[Hit]:
        found: list[tuple[int, int]] = []
        seen: set[int] = set()
        excluded, file_of = self.excluded, self.file_of

        def best(numbers: Iterable[int], count: int, below: int) -> list[int]:
            """The first ``count`` distinct eligible numbers under ``below``
            of ``numbers`` (sorted): per node, Python reads only these.
            """
            out: list[int] = []
            last = -1
            for number in numbers:
                if number >= below:
                    break
                if number == last:
                    continue
                last = number
                if not excluded[file_of[number]] and number not in seen:
                    out.append(number)
                    if len(out) >= count:
                        break
            return out

        def eligible(numbers: Iterable[int]) -> Iterator[int]:
            for number in numbers:
                if not excluded[file_of[number]] and number not in seen:
                    yield number

        def take(rank: int, numbers: array | list[int]) -> bool:
            """Add the best of ``numbers`` until ``limit`` are held; whether
            they are.
            """
            for number in best(sorted(numbers), limit - len(found), len(self.qlen)):
                found.append((rank, number))
                seen.add(number)
            return len(found) >= limit

        def gather(tables: Iterable[tuple[_Table, Iterable[int]]]) -> array:
            """The nodes under the keys (eligible or not: :func:`take` sees).
            A bounded table's keys come shortest first and hold no qualified
            name shorter than themselves, so once that table alone gave
            enough eligible nodes that rank before its next key's, its longer
            keys are not read (looked at each time the nodes held doubled).
            """
            held = array("I")
            need = limit - len(found)
            bound_at = self.qlen_start
            last = len(bound_at) - 1
            for table, keys in tables:
                length = -1
                counted = array("I")  # an id is under one key of a table
                check_at = need
                for key in keys:
                    if table.bounded and (size := table.length(key)) != length:
                        length = size
                        if len(counted) >= check_at:
                            check_at = 2 * len(counted)
                            below = bound_at[min(size, last)]
                            if len(best(sorted(counted), need, below)) >= need:
                                break
                    nodes = table.nodes(key)
                    held.extend(nodes)
                    if table.bounded:
                        counted.extend(nodes)
            return held

        names = self.names
        if wanted.startswith(ID_PREFIX) and take(0, self._ids(wanted, limit, eligible)):
            return self._hits(found)
        if take(1, gather([(names, names.exact(wanted))])):
            return self._hits(found)
        exact = next(names.exact(wanted), None)
        prefixed = (k for k in names.containing(SEPARATOR + wanted) if k != exact)
        if take(2, gather([(names, prefixed)])):
            return self._hits(found)
        inside = (
            k for k in names.containing(wanted) if not names.key(k).startswith(wanted)
        )
        if take(3, gather([(names, inside)])):
            return self._hits(found)
        qualified, paths = self.qualified, self.path_keys
        both = [
            (paths, paths.containing(wanted)),
            (qualified, qualified.containing(wanted)),
        ]
        if take(4, gather(both)):
            return self._hits(found)
        take(5, gather([(qualified, qualified.fuzzy(wanted))]))
        return self._hits(found)

    def _ids(
        self,
        wanted: str,
        limit: int,
        eligible: Callable[[Iterable[int]], Iterator[int]],
    ) -> list[int]:
        """The first ``limit`` eligible nodes whose id starts with ``wanted``
        (node numbers are in rank order, and so is the id text).
        """
        text, starts, needle = self.id_text, self.id_starts, SEPARATOR + wanted

        def starting() -> Iterator[int]:
            position = text.find(needle)
            while position >= 0:
                number = bisect_right(starts, position + 1) - 1
                yield number
                position = text.find(needle, starts[number + 1] - 1)

        found = []
        for number in eligible(starting()):
            found.append(number)
            if len(found) >= limit:
                break
        return found

    def _hits(self, found: list[tuple[int, int]]) -> list[Hit]:
        return [self.hit(rank, number) for rank, number in found]


# ---- the store ----------------------------------------------------------------------


def read_stored(db: sqlite3.Connection) -> tuple[bytes | None, dict[str, StoredFile]]:
    """The stored blob (None if there is none) and every file's state now, in
    one read (the caller's transaction).
    """
    row = None
    with contextlib.suppress(sqlite3.OperationalError):  # an older store
        row = db.execute("SELECT data FROM symbol_snapshot WHERE id = 1").fetchone()
    stored = {
        path: StoredFile(file_id or "", float(indexed_at or 0.0), status == "present")
        for path, file_id, indexed_at, status in db.execute(_STATES)
    }
    return (bytes(row[0]) if row else None), stored


def write_stored(db: sqlite3.Connection, data: bytes) -> bool:
    """Keep ``data`` as the store's snapshot (in a write transaction)."""
    db.execute(
        "INSERT OR REPLACE INTO symbol_snapshot (id, data) VALUES (1, ?)", (data,)
    )
    return True


def opened(
    data: bytes | None, stored: dict[str, StoredFile]
) -> tuple[SymbolSnapshot | None, list[str]]:
    """The snapshot in ``data`` with the files it cannot answer for excluded,
    and those files' paths; (None, []) without a sound blob.
    """
    if data is None:
        return None, []
    try:
        snapshot = SymbolSnapshot(data)
    except BadSnapshot as error:
        log.warning("the stored names cannot be used (%s): they are built again", error)
        return None, []
    return snapshot, snapshot.stale(stored)
