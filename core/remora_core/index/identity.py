"""Node identity: minting ids and keeping them across re-parses.

Rules (DESIGN §4):

- an id is ``rm_`` + 8 random characters of ``[a-z0-9]``;
- on a re-parse, each definition takes the id of the old node of the same file
  with the same ``(qualified name, kind)``; duplicates (a property getter and its
  setter) pair up in document order;
- an old node nobody claims becomes ``orphaned`` and is kept;
- if a definition matches no active node but an orphan of the same file with the
  same ``(qualified name, kind)``, the orphan is revived — so renaming ``load`` to
  ``load_config`` and back (or undoing the rename) gives ``load`` its id back;
- with ``ids.inline_comments`` on, an id written in a ``# rm_…`` comment wins over
  name matching (so it survives a rename), unless another definition of the same
  parse already claimed it or the id belongs to an active node of another file.
"""

from __future__ import annotations

import secrets
import string
import threading
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from remora_core.model import CodeNode, Definition, NodeKind, NodeStatus

_ALPHABET = string.ascii_lowercase + string.digits
ID_PREFIX = "rm_"


_TO_ALPHABET = bytes(ord(_ALPHABET[byte % len(_ALPHABET)]) for byte in range(256))
_BIASED = bytes(range(256 - 256 % len(_ALPHABET), 256))
"""Random bytes from 252 on would favour the first letters: dropped."""
_random = ""
_random_at = 0
"""Unused random characters are ``_random[_random_at:]``."""
_random_lock = threading.Lock()


def _random_chars(count: int) -> str:
    # One call to the OS for hundreds of ids: indexing a large project mints
    # tens of thousands, and ``secrets.choice`` per character was ~1 s of that;
    # a position into the buffer, not a copy of its rest per id, another 0.4 s.
    global _random, _random_at
    with _random_lock:
        while len(_random) - _random_at < count:
            fresh = secrets.token_bytes(4096).translate(_TO_ALPHABET, _BIASED)
            _random, _random_at = _random[_random_at:] + fresh.decode("ascii"), 0
        chars = _random[_random_at : _random_at + count]
        _random_at += count
    return chars


def new_id(taken: Callable[[str], bool] = lambda _id: False) -> str:
    """A fresh random id not accepted by ``taken``."""
    while True:
        candidate = ID_PREFIX + _random_chars(8)
        if not taken(candidate):
            return candidate


def new_ids(count: int, taken: Callable[[str], bool]) -> list[str]:
    """``count`` fresh ids, none accepted by ``taken`` and no two alike: the
    characters of all of them taken from the buffer at once.
    """
    chars = _random_chars(8 * count)
    ids = [ID_PREFIX + chars[start : start + 8] for start in range(0, 8 * count, 8)]
    seen: set[str] = set()
    for index, candidate in enumerate(ids):
        if candidate in seen or taken(candidate):  # one in 36**8: mint again
            candidate = ids[index] = new_id(lambda c: c in seen or taken(c))
        seen.add(candidate)
    return ids


def is_node_id(value: object) -> bool:
    """Whether ``value`` has the shape of a node id."""
    return (
        isinstance(value, str)
        and len(value) == len(ID_PREFIX) + 8
        and value.startswith(ID_PREFIX)
        and all(ch in _ALPHABET for ch in value[len(ID_PREFIX) :])
    )


@dataclass
class IdAssignment:
    """Result of matching one parse of a file against its previous nodes."""

    ids: list[str]
    """The id of each definition, parallel to the definitions list."""
    orphaned: list[str] = field(default_factory=list)
    """Previously active ids that no definition claimed."""
    revived: list[str] = field(default_factory=list)
    """Orphaned ids that came back."""
    created: list[str] = field(default_factory=list)
    """Ids minted by this parse."""


def assign_ids(
    definitions: list[Definition],
    previous: Iterable[CodeNode],
    *,
    taken: Callable[[str], bool],
    foreign_active: Callable[[str], bool] = lambda _id: False,
) -> IdAssignment:
    """Give every definition an id, preferring the ids of ``previous`` nodes.

    ``previous`` are the nodes recorded for this file (any status, file node
    excluded). ``taken`` says whether an id exists anywhere (to avoid collisions
    when minting); ``foreign_active`` whether it is active in another file.
    """
    previous = list(previous)
    if not previous and not any(d.inline_id for d in definitions):
        # A file seen for the first time (every file of a first index): only
        # new ids, minted together.
        minted = new_ids(len(definitions), taken)
        return IdAssignment(ids=minted, created=list(minted))
    active: dict[tuple[str, NodeKind], deque[str]] = defaultdict(deque)
    orphans: dict[tuple[str, NodeKind], deque[str]] = defaultdict(deque)
    previous_status: dict[str, NodeStatus] = {}
    for node in sorted(previous, key=lambda n: n.span.start_byte):
        key = (node.qualified_name, node.kind)
        target = active if node.status is NodeStatus.ACTIVE else orphans
        target[key].append(node.id)
        previous_status[node.id] = node.status

    ids: list[str | None] = [None] * len(definitions)
    claimed: set[str] = set()

    # Inline ids first: they are the user's explicit statement of identity.
    for index, definition in enumerate(definitions):
        wanted = definition.inline_id
        if (
            wanted
            and wanted not in claimed
            and (wanted in previous_status or not foreign_active(wanted))
        ):
            ids[index] = wanted
            claimed.add(wanted)

    result = IdAssignment(ids=[])
    for index, definition in enumerate(definitions):
        if ids[index] is not None:
            continue
        key = (definition.qualified_name, definition.kind)
        chosen = _first_unclaimed(active[key], claimed) or _first_unclaimed(
            orphans[key], claimed
        )
        if chosen is None:
            chosen = new_id(lambda c: c in claimed or taken(c))
            result.created.append(chosen)
        ids[index] = chosen
        claimed.add(chosen)

    result.ids = [i for i in ids if i is not None]
    for node_id, status in previous_status.items():
        if node_id in claimed:
            if status is NodeStatus.ORPHANED:
                result.revived.append(node_id)
        elif status is NodeStatus.ACTIVE:
            result.orphaned.append(node_id)
    return result


def _first_unclaimed(candidates: deque[str], claimed: set[str]) -> str | None:
    while candidates:
        candidate = candidates.popleft()
        if candidate not in claimed:
            return candidate
    return None
