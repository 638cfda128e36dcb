"""A prebuilt index of names for symbol search (``workspace/symbol``).

:func:`~remora_core.index.search.search_nodes` ranks every active node for
every query (1.7 million lines: ~150k nodes, 150–650 ms a keystroke). This
index answers the same question with the same ranking by looking only at the
names that can match:

- three tables map a lowercased string (a node's name, its qualified name, its
  file's path) to the ids of the active nodes carrying it, grouped by the
  length of their qualified name (the first tie-break of the ranking);
- each table's keys are also joined into one text (``\\0`` between them), so
  exact, prefix and substring matches are found with ``str.find`` over a few
  hundred kilobytes, and fuzzy matches with one regular expression whose
  character classes never backtrack;
- ranks are taken best first (id prefix, exact name, name prefix, name
  substring, qualified name or path substring, fuzzy), and within a rank whole
  groups of equal qualified-name length, shortest first, until ``limit`` nodes
  are held: only those get their full sort key. A short query matching tens of
  thousands of names costs what the first few hundred results cost.

Distinct names do not grow with copies of the same code, so neither does the
text scanned. The index is kept per file: a change to the graph marks the file
(:meth:`SymbolIndex.touch`, cheap enough for every keystroke) and the file's
entries are compared with its nodes when the index is next used, or in the
background (:meth:`SymbolIndex.catch_up`).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable

from remora_core.index.identity import ID_PREFIX
from remora_core.model import CodeNode, NodeStatus

SEPARATOR = "\0"
"""Between keys in a table's text; no name, qualified name or path holds it."""

Bucket = tuple[str, ...] | set[str]
"""Ids of one key with one qualified-name length: a tuple while small (a set
costs four times the memory of a tuple of two), a set beyond
:data:`SMALL_BUCKET`."""
Buckets = dict[int, Bucket]
"""Qualified-name length → ids."""
SMALL_BUCKET = 8


def _lower(text: str) -> str:
    """``text`` lowercased; the same object when it already is, else one copy
    for every equal key (names repeat across files).
    """
    lowered = text.lower()
    return text if lowered == text else sys.intern(lowered)


class _Table:
    """Lowercased strings → ids by qualified-name length, and their joined text."""

    def __init__(self) -> None:
        self.ids: dict[str, Buckets] = {}
        self.bounded = True
        """Whether every id under a key has a qualified name at least as long
        as the key (a name ends its qualified name; not so for paths)."""
        self._last_fuzzy: tuple[str, str, str] | None = None
        """(the text searched, the query, the text of the keys it matched) of
        the last fuzzy search read to the end."""
        self._text: str | None = None
        """``\\0key\\0key…\\0`` of every key, rebuilt when a key came or went."""

    def add(self, items: Iterable[tuple[str, int, str]]) -> None:
        """Index each (key, qualified-name length, id)."""
        table = self.ids
        get = table.get
        bounded = self.bounded
        for key, qlen, node_id in items:
            if bounded and qlen < len(key):
                bounded = self.bounded = False
            buckets = get(key)
            if buckets is None:
                table[key] = {qlen: (node_id,)}
                self._text = None
                continue
            bucket = buckets.get(qlen)
            if bucket is None:
                buckets[qlen] = (node_id,)
            elif isinstance(bucket, set):
                bucket.add(node_id)
            elif node_id not in bucket:
                grown = (*bucket, node_id)
                buckets[qlen] = grown if len(grown) <= SMALL_BUCKET else set(grown)

    def remove(self, items: Iterable[tuple[str, int, str]]) -> None:
        """Forget each (key, qualified-name length, id)."""
        table = self.ids
        for key, qlen, node_id in items:
            buckets = table.get(key)
            bucket = buckets.get(qlen) if buckets is not None else None
            if buckets is None or bucket is None:
                continue
            if isinstance(bucket, set):
                bucket.discard(node_id)
            else:
                bucket = buckets[qlen] = tuple(i for i in bucket if i != node_id)
            if not bucket:
                del buckets[qlen]
                if not buckets:
                    del table[key]
                    self._text = None

    @property
    def text(self) -> str:
        if self._text is None:
            # Shortest keys first: a scan can stop once longer keys cannot
            # rank among the results (see ``bounded``).
            keys = sorted(self.ids, key=len)
            self._text = SEPARATOR + SEPARATOR.join(keys) + SEPARATOR
        return self._text

    def containing(self, needle: str) -> Iterable[str]:
        """Keys containing ``needle`` (which may start with the separator: a
        prefix), each once, shortest first.
        """
        text = self.text
        find, rfind = text.find, text.rfind
        position = find(needle)
        while position >= 0:
            start = rfind(SEPARATOR, 0, position + 1) + 1
            end = find(SEPARATOR, position + 1)
            yield text[start:end]
            position = find(needle, end)

    def fuzzy(self, query: str) -> Iterable[str]:
        """Keys holding ``query``'s characters in order, shortest first.

        A person types: when the last complete answer was for a prefix of
        ``query``, only the keys it matched can match now (a subsequence of
        ``query`` is one of that prefix), so only their text is read.
        """
        text = self.text
        last = self._last_fuzzy
        if last is not None and last[0] is text and query.startswith(last[1]):
            text = last[2]
        matched: list[str] = []
        for match in _fuzzy_pattern(query).finditer(text):
            matched.append(match.group(1))
            yield matched[-1]
        # Read to the end (the caller did not stop early): keep for the next.
        joined = SEPARATOR + SEPARATOR.join(matched) + SEPARATOR
        self._last_fuzzy = (self.text, query, joined)


def _fuzzy_pattern(query: str) -> re.Pattern[str]:
    """Keys holding ``query``'s characters in order: after each character, a
    run of anything but the next one, so the first occurrence is taken as
    ``_fuzzy`` in ``search.py`` does, and nothing backtracks.
    """
    parts = [re.escape(SEPARATOR)]
    for ch in query:
        parts.append(f"[^{re.escape(SEPARATOR + ch)}]*{re.escape(ch)}")
    parts.append(f"[^{re.escape(SEPARATOR)}]*")
    return re.compile(f"{parts[0]}({''.join(parts[1:])})")


class SymbolIndex:
    """Names of every active node, kept per file, searched without a scan."""

    def __init__(self, nodes: dict[str, CodeNode]) -> None:
        self._nodes = nodes
        """The graph's nodes by id (read at query time for the sort keys)."""
        self._names = _Table()
        self._qualified = _Table()
        self._paths = _Table()
        self._by_length: dict[int, set[str]] = {}
        """Every indexed id by qualified-name length (for id prefixes)."""
        self._id_text: str | None = None
        """``\\0id\\0id…\\0`` of every indexed id, rebuilt when one came or went."""
        self._files: dict[str, list[CodeNode]] = {}
        """Path → its nodes as they were indexed."""
        self._dirty: set[str] = set()
        """Paths changed since their entries were last compared."""

    # ---- keeping up ---------------------------------------------------------------

    def touch(self, path: str) -> None:
        """``path``'s nodes changed (or came, or went)."""
        self._dirty.add(path)

    @property
    def behind(self) -> int:
        """How many files wait to be compared."""
        return len(self._dirty)

    def catch_up(
        self, current: Callable[[str], list[CodeNode]], count: int | None = None
    ) -> None:
        """Compare up to ``count`` (all: None) changed files with their active
        nodes as ``current`` gives them.
        """
        while self._dirty and (count is None or count > 0):
            path = self._dirty.pop()
            self._refresh(path, current(path))
            if count is not None:
                count -= 1

    def _refresh(self, path: str, nodes: list[CodeNode]) -> None:
        before = {node.id: node for node in self._files.get(path, ())}
        gone: list[CodeNode] = []
        came: list[CodeNode] = []
        for node in nodes:
            old = before.pop(node.id, None)
            if old is None:
                came.append(node)
            elif old is not node and (
                old.name != node.name or old.qualified_name != node.qualified_name
            ):
                gone.append(old)
                came.append(node)
        gone.extend(before.values())  # no longer in the file, or not active
        key = path.lower()
        if gone:
            self._change(key, gone, add=False)
            for node in gone:
                self._moved(path, node.id)
        if came:
            self._change(key, came, add=True)
        if nodes:
            # The node objects themselves (the graph holds them anyway) say
            # what each was indexed under: no copy of its keys per node.
            self._files[path] = nodes
        else:
            self._files.pop(path, None)

    def _change(self, path_key: str, nodes: list[CodeNode], *, add: bool) -> None:
        """Index (or forget) nodes of one file in every table."""
        lengths = [len(n.qualified_name) for n in nodes]
        ids = [n.id for n in nodes]
        tables = (
            (self._names, [_lower(n.name) for n in nodes]),
            (self._qualified, [_lower(n.qualified_name) for n in nodes]),
            (self._paths, [path_key] * len(nodes)),
        )
        for table, keys in tables:
            items = zip(keys, lengths, ids, strict=True)
            if add:
                table.add(items)
            else:
                table.remove(items)
        by_length = self._by_length
        for node_id, qlen in zip(ids, lengths, strict=True):
            bucket = by_length.get(qlen)
            if add:
                if bucket is None:  # not ``setdefault``: a set built per id
                    bucket = by_length[qlen] = set()
                bucket.add(node_id)
            elif bucket is not None:
                bucket.discard(node_id)
        self._id_text = None

    def _moved(self, path: str, node_id: str) -> None:
        """A node that left ``path`` for another file (its inline id moved with
        it) may share the keys just forgotten: index it there again.
        """
        node = self._nodes.get(node_id)
        if node is None or node.file_path == path:
            return
        other = self._files.get(node.file_path)
        if other is not None and any(n.id == node_id for n in other):
            self._files[node.file_path] = [n for n in other if n.id != node_id]
            self._dirty.add(node.file_path)

    # ---- searching ----------------------------------------------------------------

    def _id_groups(self, wanted: str) -> dict[int, list[Bucket]]:
        """Ids starting with ``wanted`` (longer than a character after the
        prefix) by qualified-name length, found in the joined ids.
        """
        if self._id_text is None:
            ids = (i for bucket in self._by_length.values() for i in bucket)
            self._id_text = SEPARATOR + SEPARATOR.join(ids) + SEPARATOR
        text, needle = self._id_text, SEPARATOR + wanted
        found: dict[int, set[str]] = {}
        nodes = self._nodes
        position = text.find(needle)
        while position >= 0:
            end = text.find(SEPARATOR, position + 1)
            node = nodes.get(text[position + 1 : end])
            if node is not None:
                found.setdefault(len(node.qualified_name), set()).add(node.id)
            position = text.find(needle, end)
        return {qlen: [ids] for qlen, ids in found.items()}

    def search(self, wanted: str, limit: int) -> list[CodeNode]:
        """The ``limit`` best matches of ``wanted`` (already stripped and
        lowercased, not empty), ranked as ``search.py`` ranks them.
        """
        return [self._nodes[hit[4]] for hit in self.ranked(wanted, limit)]

    def ranked(self, wanted: str, limit: int) -> list[tuple[int, int, str, int, str]]:
        """The sort keys (rank, qualified-name length, path, start byte, id)
        of :meth:`search`'s answer, best first.
        """
        found: list[tuple[int, int, str, int, str]] = []
        seen: set[str] = set()
        nodes = self._nodes

        def take(
            rank: int, groups: dict[int, list[Bucket]], prefix: str | None = None
        ) -> bool:
            """Add whole groups, shortest qualified names first, until ``limit``
            are held (only ids starting with ``prefix``, if given); whether
            they are.
            """
            for qlen in sorted(groups):
                sets = groups[qlen]
                ids = set().union(*sets)
                if prefix is not None:
                    ids = {i for i in ids if i.startswith(prefix)}
                ids = ids - seen
                seen.update(ids)
                for node_id in ids:
                    node = nodes.get(node_id)
                    if node is None:  # never: every removal touches its file
                        continue
                    found.append(
                        (rank, qlen, node.file_path, node.span.start_byte, node_id)
                    )
                if len(found) >= limit:
                    return True
            return False

        def grouped(
            tables: Iterable[tuple[_Table, Iterable[str]]],
        ) -> dict[int, list[Bucket]]:
            """Ids under the keys, by qualified-name length. Keys come shortest
            first; in a bounded table, a key of length L holds no qualified name
            shorter than L, so once that table alone gave enough ids with
            shorter ones, its longer keys cannot rank and are not read.
            """
            groups: dict[int, list[Bucket]] = {}
            counts: dict[int, int] = {}
            need = limit - len(found) + len(seen)  # seen ids may come again
            for table, keys in tables:
                length = -1
                for key in keys:
                    if table.bounded and len(key) != length:
                        length = len(key)
                        held = sum(c for q, c in counts.items() if q < length)
                        if held >= need:
                            break
                    for qlen, ids in table.ids[key].items():
                        groups.setdefault(qlen, []).append(ids)
                        if table.bounded:  # an id is under one key of a table
                            counts[qlen] = counts.get(qlen, 0) + len(ids)
            return groups

        names = self._names
        done = False
        if wanted.startswith(ID_PREFIX):
            if len(wanted) <= len(ID_PREFIX) + 1:  # most ids: read a few groups
                by_length: dict[int, list[Bucket]] = {
                    qlen: [ids] for qlen, ids in self._by_length.items()
                }
                done = take(0, by_length, prefix=wanted)
            else:
                done = take(0, self._id_groups(wanted))
        if not done:
            exact = [wanted] if wanted in names.ids else []
            done = take(1, grouped([(names, exact)]))
        if not done:
            prefixed = (k for k in names.containing(SEPARATOR + wanted) if k != wanted)
            done = take(2, grouped([(names, prefixed)]))
        if not done:
            inside = (k for k in names.containing(wanted) if not k.startswith(wanted))
            done = take(3, grouped([(names, inside)]))
        if not done:
            qualified, paths = self._qualified, self._paths
            done = take(
                4,
                grouped(
                    [
                        (paths, paths.containing(wanted)),  # read whole first
                        (qualified, qualified.containing(wanted)),
                    ]
                ),
            )
        if not done:
            take(5, grouped([(self._qualified, self._qualified.fuzzy(wanted))]))
        found.sort()
        return found[:limit]


def active_nodes(
    file_node: CodeNode | None, definitions: list[CodeNode]
) -> list[CodeNode]:
    """A file's searchable nodes: its file node and definitions, if active."""
    found = [n for n in definitions if n.status is NodeStatus.ACTIVE]
    if file_node is not None and file_node.status is NodeStatus.ACTIVE:
        found.append(file_node)
    return found
