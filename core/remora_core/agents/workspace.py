"""Per-agent scratch space: key-value memory and a copy-on-write file overlay.

Both live in the project database (tables ``kv`` and ``overlay``) and are
cached per agent in memory on first use, so reads after the first are free and
a failed or absent database (``None``: a file outside every workspace folder)
simply means they last until the server stops.

The overlay lets an agent draft files without touching the project: a read
sees the agent's own version if it wrote one, nothing if it deleted the file
(a *whiteout*), and otherwise the project's current text (the open buffer, else
the disk). Every path goes through :func:`~remora_core.project_paths.resolve_path`:
nothing outside the project root, nothing matching ``secrets.exclude``.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from remora_core.project_paths import PathRefused, is_secret, resolve_path
from remora_core.review.diffs import file_diff, split_lines

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable
    from pathlib import Path

    from remora_core.store.database import Database

log = logging.getLogger(__name__)

MAX_KEY_CHARS = 200
MAX_VALUE_BYTES = 64 * 1024
"""Largest value (as JSON, UTF-8) an agent may remember under one key."""
MAX_OVERLAY_FILE_BYTES = 2 * 1024 * 1024
"""Largest file an agent may write to its overlay."""


PERSON_KEY_PREFIX = "@"
"""Keys a person writes into an agent's memory (``@instructions``): an agent
cannot set them, clearing its memory keeps them and they do not count
against its ``limits.kv_bytes_per_agent``."""


class MemoryFull(ValueError):
    """Storing a value would take an agent past its memory budget."""


class KeyValueStore:
    """Each agent's remembered values: JSON under string keys."""

    def __init__(self, database: Database | None) -> None:
        self.database = database
        self._cache: dict[str, dict[str, str]] = {}
        """Agent id → key → value as JSON, for the agents used so far."""

    def forget_cached(self) -> None:
        """Drop what is cached: the store changed under it (a restore)."""
        self._cache.clear()

    async def get(self, agent_id: str, key: str) -> Any | None:
        """The value stored under ``key`` (a fresh copy), None if there is none."""
        stored = (await self._values(agent_id)).get(key)
        return None if stored is None else json.loads(stored)

    async def set(
        self,
        agent_id: str,
        key: str,
        value: Any,
        budget: int | None = None,
        *,
        by_person: bool = False,
    ) -> None:
        """Store ``value`` under ``key``; ValueError (for the model) if it cannot
        be. Only a person (``by_person``) writes keys starting with ``@``.
        """
        if not isinstance(key, str) or not 1 <= len(key) <= MAX_KEY_CHARS:
            raise ValueError(f"a key is a string of 1 to {MAX_KEY_CHARS} characters")
        if key.startswith(PERSON_KEY_PREFIX) and not by_person:
            raise ValueError(
                f"keys starting with {PERSON_KEY_PREFIX!r} are the person's; "
                "choose another key"
            )
        if not _is_unicode(key):
            raise ValueError("a key may not contain lone surrogate characters")
        try:
            encoded = json.dumps(value, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError, RecursionError) as error:
            raise ValueError(f"the value cannot be stored as JSON: {error}") from None
        if not _is_unicode(encoded):  # SQLite cannot store it; JSON can escape it
            encoded = json.dumps(value, allow_nan=False)
        size = len(encoded.encode("utf-8"))
        if size > MAX_VALUE_BYTES:
            raise ValueError(
                f"the value is {size:,} bytes as JSON; the limit is "
                f"{MAX_VALUE_BYTES:,} — store a summary instead"
            )
        values = await self._values(agent_id)
        if budget is not None:
            others = sum(
                len(v.encode("utf-8"))
                for k, v in values.items()
                if k != key and not k.startswith(PERSON_KEY_PREFIX)
            )
            if others + size > budget:
                raise MemoryFull(
                    f"{agent_id} would remember {others + size:,} bytes; the "
                    f"limit (limits.kv_bytes_per_agent) is {budget:,}"
                )
        values[key] = encoded
        if self.database is not None:

            def work(db: sqlite3.Connection) -> None:
                db.execute(
                    "INSERT OR REPLACE INTO kv (agent_id, key, value) VALUES (?, ?, ?)",
                    (agent_id, key, encoded),
                )

            await self.database.transaction(work, "saving an agent's memory")

    async def keys(self, agent_id: str) -> list[str]:
        """The agent's keys, sorted."""
        return sorted(await self._values(agent_id))

    async def delete(self, agent_id: str, key: str) -> bool:
        """Forget the value under ``key``; whether there was one."""
        values = await self._values(agent_id)
        if values.pop(key, None) is None:
            return False
        if self.database is not None:

            def work(db: sqlite3.Connection) -> None:
                db.execute(
                    "DELETE FROM kv WHERE agent_id = ? AND key = ?", (agent_id, key)
                )

            await self.database.transaction(work, "forgetting an agent's value")
        return True

    async def clear(self, agent_id: str) -> None:
        """Forget everything the agent stored (a person's keys stay)."""
        values = await self._values(agent_id)
        kept = {k: v for k, v in values.items() if k.startswith(PERSON_KEY_PREFIX)}
        self._cache[agent_id] = kept
        if self.database is not None:

            def work(db: sqlite3.Connection) -> None:
                db.execute(
                    "DELETE FROM kv WHERE agent_id = ? AND substr(key, 1, 1) != ?",
                    (agent_id, PERSON_KEY_PREFIX),
                )

            await self.database.transaction(work, "clearing an agent's memory")

    async def _values(self, agent_id: str) -> dict[str, str]:
        cached = self._cache.get(agent_id)
        if cached is not None:
            return cached
        loaded: dict[str, str] = {}
        if self.database is not None:

            def work(db: sqlite3.Connection) -> dict[str, str]:
                rows = db.execute(
                    "SELECT key, value FROM kv WHERE agent_id = ?", (agent_id,)
                ).fetchall()
                return {key: value for key, value in rows}

            loaded = await self.database.read(work, "reading an agent's memory") or {}
        # Another call may have filled the cache while this one read: keep its.
        return self._cache.setdefault(agent_id, loaded)


class Overlay:
    """Each agent's copy-on-write view of the project's files."""

    def __init__(
        self,
        database: Database | None,
        root: Path | None,
        read_base: Callable[[str], bytes | None],
        secrets: list[str],
    ) -> None:
        self.database = database
        self.root = root
        self.read_base = read_base
        """Current bytes of a project path (open buffer, else disk); None if missing."""
        self.secrets = list(secrets)
        self._cache: dict[str, dict[str, bytes | None]] = {}
        """Agent id → path → content written, or None for a deleted file."""

    def forget_cached(self) -> None:
        """Drop what is cached: the store changed under it (a restore)."""
        self._cache.clear()

    def resolve(self, path: str) -> str:
        """The project path for ``path``; PathRefused if the agent may not use it."""
        if self.root is not None:
            return resolve_path(self.root, path, self.secrets)
        return _memory_path(path, self.secrets)

    async def read(self, agent_id: str, path: str) -> bytes:
        """The file as the agent sees it; FileNotFoundError if it does not exist."""
        relative = self.resolve(path)
        changes = await self._changes(agent_id)
        if relative in changes:
            content = changes[relative]
            if content is None:
                raise FileNotFoundError(f"{relative} was deleted in your workspace")
            return content
        base = self.read_base(relative)
        if base is None:
            raise FileNotFoundError(f"{relative} does not exist in the project")
        return base

    async def write(self, agent_id: str, path: str, content: bytes) -> None:
        """Give the agent its own version of a file."""
        relative = self.resolve(path)
        if not isinstance(content, bytes | bytearray):
            raise ValueError("file content must be bytes")
        if len(content) > MAX_OVERLAY_FILE_BYTES:
            raise ValueError(
                f"{relative} would be {len(content):,} bytes; the limit is "
                f"{MAX_OVERLAY_FILE_BYTES:,}"
            )
        (await self._changes(agent_id))[relative] = bytes(content)
        await self._store(agent_id, relative, bytes(content))

    async def delete(self, agent_id: str, path: str) -> None:
        """Delete a file in the agent's view; FileNotFoundError if it has none."""
        relative = self.resolve(path)
        changes = await self._changes(agent_id)
        exists_in_base = self.read_base(relative) is not None
        exists = (
            changes[relative] is not None if relative in changes else exists_in_base
        )
        if not exists:
            raise FileNotFoundError(f"{relative} does not exist in your workspace")
        if exists_in_base:
            changes[relative] = None
            await self._store(agent_id, relative, None)
        else:  # a file only the agent created: no whiteout needed
            del changes[relative]
            await self._forget(agent_id, relative)

    async def changes(self, agent_id: str) -> dict[str, bytes | None]:
        """Every path the agent changed: its content, or None if deleted."""
        return dict(await self._changes(agent_id))

    async def diff(self, agent_id: str) -> str:
        """A unified diff of all the agent's changes against the project now."""
        parts: list[str] = []
        for path, content in sorted((await self._changes(agent_id)).items()):
            base = self.read_base(path)
            if base is None and content is None:
                continue  # deleted in the overlay and meanwhile in the project
            if b"\x00" in (base or b"") or b"\x00" in (content or b""):
                if base != content:
                    parts.append(f"Binary files a/{path} and b/{path} differ\n")
                continue
            parts.append(
                file_diff(
                    path,
                    split_lines(_decode(base)),
                    split_lines(_decode(content)),
                    created=base is None,
                    deleted=content is None,
                )
            )
        return "".join(parts)

    async def clear(self, agent_id: str) -> None:
        """Drop every change the agent made."""
        self._cache[agent_id] = {}
        if self.database is not None:

            def work(db: sqlite3.Connection) -> None:
                db.execute("DELETE FROM overlay WHERE agent_id = ?", (agent_id,))

            await self.database.transaction(work, "clearing an agent's workspace")

    async def _changes(self, agent_id: str) -> dict[str, bytes | None]:
        cached = self._cache.get(agent_id)
        if cached is not None:
            return cached
        loaded: dict[str, bytes | None] = {}
        if self.database is not None:

            def work(db: sqlite3.Connection) -> dict[str, bytes | None]:
                rows = db.execute(
                    "SELECT path, content, deleted FROM overlay WHERE agent_id = ?",
                    (agent_id,),
                ).fetchall()
                return {
                    path: None if deleted else bytes(c) for path, c, deleted in rows
                }

            loaded = (
                await self.database.read(work, "reading an agent's workspace") or {}
            )
        return self._cache.setdefault(agent_id, loaded)

    async def _store(self, agent_id: str, path: str, content: bytes | None) -> None:
        if self.database is None:
            return
        base = self.read_base(path)
        base_hash = hashlib.sha256(base).hexdigest() if base is not None else None

        def work(db: sqlite3.Connection) -> None:
            # base_hash records the file the first change was made from.
            db.execute(
                "INSERT INTO overlay (agent_id, path, content, deleted, base_hash) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (agent_id, path) DO UPDATE SET "
                "content = excluded.content, deleted = excluded.deleted",
                (agent_id, path, content, int(content is None), base_hash),
            )

        await self.database.transaction(work, "saving an agent's workspace")

    async def _forget(self, agent_id: str, path: str) -> None:
        if self.database is None:
            return

        def work(db: sqlite3.Connection) -> None:
            db.execute(
                "DELETE FROM overlay WHERE agent_id = ? AND path = ?", (agent_id, path)
            )

        await self.database.transaction(work, "saving an agent's workspace")


def _memory_path(path: str, secrets: list[str]) -> str:
    """:func:`resolve_path` without a root: relative, no ``..``, no secrets."""
    if not isinstance(path, str) or not path.strip() or "\x00" in path:
        raise PathRefused("give a file path relative to the project root")
    pure = PurePosixPath(path.replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts:
        raise PathRefused(f"{path!r} is outside the project; access refused")
    relative = pure.as_posix()
    if relative == ".":
        raise PathRefused("give a file path, not the project root")
    if is_secret(relative, secrets):
        raise PathRefused(f"{relative!r} matches secrets.exclude; access refused")
    return relative


def _decode(content: bytes | None) -> str:
    return "" if content is None else content.decode("utf-8", "replace")


def _is_unicode(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8 (no lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
