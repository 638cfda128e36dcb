"""Checkpoints: named snapshots of every agent's state (DESIGN §10).

A checkpoint holds every agent's chat history (``agent_state``), key-value
memory (``kv``), overlay files (``overlay``), custom subscriptions and pending
proposals, plus each project file's content hash and the git HEAD when there
is one. Each part is stored once as a blob named by its sha256 (``blobs``);
a checkpoint row only lists the parts' hashes, so a checkpoint of unchanged
state costs one small row.

:meth:`Checkpoints.restore` brings agents' state back — tables and the
in-memory caches over them — and never writes a project file: it reports the
files whose content differs from the checkpoint. Pending proposals made since
are withdrawn (``superseded``); the checkpoint's pending ones that were not
decided since are pending again (and checked for staleness as usual).

The files' content is kept too, so a checkpoint's files can be proposed back
(``remora.checkpoint.restore {files: true}``, :meth:`Checkpoints.file_texts`):
each present file's bytes are a blob named ``file-`` + the content hash the
index already has (:data:`FILE_BLOB`). A content already stored costs
nothing — a checkpoint reads from disk only the files changed since any
earlier one (the first checkpoint reads every file once). Git's ``HEAD`` was
not enough: a checkpoint is taken before a graph run, over edits not yet
committed. A file whose bytes change while it is read is left out (its
restore then says its content was not kept).

A part is stored with its column names (``{"columns", "rows"}``) and restored
by name, so a checkpoint survives the store's later migrations: a column added
since gets its default, one no longer there is left out. Checkpoints taken
before parts carried names (a bare list of rows, ``SELECT *`` of the time) are
read with the table's first columns: SQLite's ``ALTER TABLE … ADD COLUMN``
only ever appends, so a row of N values was the first N columns.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
import sqlite3
import time
import uuid
from typing import TYPE_CHECKING, Any

from remora_core import safe_git
from remora_core.discovery.files import content_hash
from remora_core.events.models import CheckpointCreated, CheckpointRestored
from remora_core.model import ProposalStatus

if TYPE_CHECKING:
    from pathlib import Path

    from remora_core.parts_port import PartsPort

log = logging.getLogger(__name__)

_PENDING = f"status = '{ProposalStatus.PENDING}'"
PARTS: dict[str, tuple[str, str]] = {
    "agent_state": ("SELECT * FROM agent_state ORDER BY agent_id", ""),
    "kv": ("SELECT * FROM kv ORDER BY agent_id, key", ""),
    "overlay": ("SELECT * FROM overlay ORDER BY agent_id, path", ""),
    "subscriptions": (
        "SELECT * FROM subscriptions WHERE is_default = 0 ORDER BY id",
        "is_default = 0",
    ),
    "proposals": (
        f"SELECT * FROM proposals WHERE {_PENDING} ORDER BY id",
        _PENDING,
    ),
}
"""Part name → (the query that snapshots it, which rows a restore replaces)."""
FILE_BLOB = "file-{}"
"""The blob holding a file's bytes, by the index's content hash."""
FILES_SQL = (
    "SELECT path, content_hash FROM files WHERE status = 'present' ORDER BY path"
)


def _encode(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"b64": base64.b64encode(value).decode()}
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict) and "b64" in value:
        return base64.b64decode(value["b64"])
    return value


def _put(db: sqlite3.Connection, data: Any) -> str:
    body = json.dumps(data, separators=(",", ":"), sort_keys=True).encode()
    digest = hashlib.sha256(body).hexdigest()
    db.execute("INSERT OR IGNORE INTO blobs (hash, body) VALUES (?, ?)", (digest, body))
    return digest


def _get(db: sqlite3.Connection, digest: str) -> Any:
    row = db.execute("SELECT body FROM blobs WHERE hash = ?", (digest,)).fetchone()
    return json.loads(row[0]) if row else None


class DamagedCheckpoint(ValueError):
    """A checkpoint whose manifest or parts cannot be read (``str``: which)."""


DAMAGE = (
    ValueError,
    TypeError,
    KeyError,
    IndexError,
    AttributeError,
    RecursionError,
    sqlite3.IntegrityError,
    sqlite3.ProgrammingError,
)
"""What reading a damaged (or hostile, shipped) checkpoint raises: JSON that
is not JSON or is nested deeper than the parser goes, parts of the wrong
shape."""


def _part(db: sqlite3.Connection, manifest: dict[str, Any], part: str) -> Any:
    """A part the manifest names; a missing blob is damage, never "empty"
    (that would empty the table it restores).
    """
    digest = manifest.get(part)
    if not isinstance(digest, str):
        raise ValueError(f"its manifest names no {part} part")
    row = db.execute("SELECT body FROM blobs WHERE hash = ?", (digest,)).fetchone()
    if row is None:
        raise ValueError(f"its {part} part is missing from the store")
    return json.loads(row[0])


def _why(problem: BaseException) -> str:
    """A damaged checkpoint's problem in a few words."""
    if isinstance(problem, RecursionError):
        return "its JSON is nested too deeply to read"
    if isinstance(problem, json.JSONDecodeError | UnicodeDecodeError):
        return "its JSON cannot be read"
    if isinstance(problem, ValueError):
        return " ".join(str(problem).split())[:200]
    return f"its parts have the wrong shape ({type(problem).__name__})"


def git_head(project: PartsPort) -> str | None:
    """The commit HEAD names, None without git."""
    if project.root is None or not (project.root / ".git").exists():
        return None
    done = safe_git.run(project.root, ["rev-parse", "HEAD"], timeout=30)
    if done is None or done.returncode != 0:
        return None
    return done.stdout.decode(errors="replace").strip() or None


class Checkpoints:
    """The checkpoints of one project (its store must be writable)."""

    def __init__(self, project: PartsPort) -> None:
        self.project = project

    async def create(self, label: str | None = None) -> str:
        """Snapshot agents' state; the checkpoint id."""
        database = self.project.database
        if database is None:
            raise ValueError("this project has no store to keep checkpoints in")
        await self.project.swarm.events.settled()  # what agents did is written
        if self.project.agents is not None:
            await self.project.agents.services.memory.close()  # histories too
        checkpoint_id = f"cp_{uuid.uuid4().hex[:12]}"
        head = git_head(self.project)
        label = (label or "")[:200]
        contents = await self._new_contents()

        def work(db: sqlite3.Connection) -> None:
            db.executemany(
                "INSERT OR IGNORE INTO blobs (hash, body) VALUES (?, ?)", contents
            )
            manifest = {}
            for part, (query, _) in PARTS.items():
                found = db.execute(query)
                columns = [c[0] for c in found.description]
                rows = [[_encode(v) for v in row] for row in found]
                manifest[part] = _put(db, {"columns": columns, "rows": rows})
            manifest["files"] = _put(db, [list(r) for r in db.execute(FILES_SQL)])
            db.execute(
                "INSERT INTO checkpoints (id, label, created_at, git_head, manifest) "
                "VALUES (?, ?, ?, ?, ?)",
                (checkpoint_id, label, time.time(), head, json.dumps(manifest)),
            )

        await database.transaction(work, "taking a checkpoint")
        await self.project.swarm.emit(CheckpointCreated(checkpoint_id=checkpoint_id))
        return checkpoint_id

    async def _new_contents(self) -> list[tuple[str, bytes]]:
        """(blob name, bytes) of the present files whose content no blob
        holds yet, read from disk (a file changing meanwhile is left out).
        """
        database, root = self.project.database, self.project.root
        if database is None or root is None:
            return []
        wanted = {
            FILE_BLOB.format(record.content_hash): path
            for path, record in self.project.records.items()
            if record.status == "present" and record.content_hash
        }

        def known(db: sqlite3.Connection) -> set[str]:
            names = list(wanted)
            found: set[str] = set()
            for at in range(0, len(names), 500):
                chunk = names[at : at + 500]
                marks = ", ".join("?" * len(chunk))
                rows = db.execute(
                    f"SELECT hash FROM blobs WHERE hash IN ({marks})", chunk
                )
                found.update(row[0] for row in rows)
            return found

        stored = await database.read(known, "reading kept file contents") or set()
        missing = {name: path for name, path in wanted.items() if name not in stored}
        return await asyncio.to_thread(_read_contents, root, missing)

    async def file_texts(
        self, checkpoint_id: str, current: dict[str, str]
    ) -> tuple[set[str], dict[str, bytes | None]]:
        """The files present at the checkpoint, and each of them whose content
        hash then is not ``current``'s (path → content hash now) → its bytes
        then (None: not kept, a checkpoint from before contents were); only
        those are read. KeyError if the checkpoint is unknown.
        """
        database = self.project.database
        if database is None:
            raise ValueError("this project has no store")

        def work(
            db: sqlite3.Connection,
        ) -> tuple[set[str], dict[str, bytes | None]] | None:
            row = db.execute(
                "SELECT manifest FROM checkpoints WHERE id = ?", (checkpoint_id,)
            ).fetchone()
            if row is None:
                return None
            try:
                files = _part(db, json.loads(row[0]), "files") or []
                present: set[str] = set()
                found: dict[str, bytes | None] = {}
                for path, digest in files:
                    present.add(str(path))
                    if current.get(str(path)) == digest:
                        continue  # the same content now
                    body = db.execute(
                        "SELECT body FROM blobs WHERE hash = ?",
                        (FILE_BLOB.format(digest),),
                    ).fetchone()
                    found[str(path)] = bytes(body[0]) if body else None
                return present, found
            except DAMAGE as problem:
                raise DamagedCheckpoint(
                    f"checkpoint {checkpoint_id} is damaged ({_why(problem)})"
                ) from None

        found = await database.read(work, "reading a checkpoint's files")
        if found is None:
            raise KeyError(f"no checkpoint {checkpoint_id}")
        return found

    async def list(self) -> list[dict[str, Any]]:
        """Every checkpoint, newest first."""
        database = self.project.database
        if database is None:
            return []

        def work(db: sqlite3.Connection) -> list[dict[str, Any]]:
            rows = db.execute(
                "SELECT id, label, created_at, git_head FROM checkpoints "
                "ORDER BY created_at DESC"
            ).fetchall()
            keys = ("checkpoint_id", "label", "created_at", "git_head")
            return [dict(zip(keys, row, strict=True)) for row in rows]

        return await database.read(work, "listing checkpoints") or []

    async def restore(self, checkpoint_id: str) -> dict[str, Any]:
        """Bring agents' state back; ``{restored, files_differing}``."""
        database = self.project.database
        if database is None:
            raise ValueError("this project has no store")

        def work(db: sqlite3.Connection) -> list[list[Any]] | None:
            row = db.execute(
                "SELECT manifest FROM checkpoints WHERE id = ?", (checkpoint_id,)
            ).fetchone()
            if row is None:
                return None
            try:
                # Every part is read before any table changes; a damaged one
                # rolls the whole transaction back.
                manifest = json.loads(row[0])
                if not isinstance(manifest, dict):
                    raise ValueError("its manifest is not a JSON object")
                stored = {part: _part(db, manifest, part) for part in (*PARTS, "files")}
                for part, (_, replaced) in PARTS.items():
                    _replace(db, part, replaced, stored[part])
                files = stored["files"] or []
                return [[path, digest] for path, digest in files]
            except DAMAGE as problem:
                raise DamagedCheckpoint(
                    f"checkpoint {checkpoint_id} is damaged ({_why(problem)}); "
                    "nothing was restored"
                ) from None

        files = await database.transaction(work, "restoring a checkpoint")
        if files is None:
            raise KeyError(f"no checkpoint {checkpoint_id}")
        await self._reload()
        differing = self._differing(files)
        await self.project.swarm.emit(CheckpointRestored(checkpoint_id=checkpoint_id))
        return {"restored": True, "files_differing": differing}

    def _differing(self, files: list[list[Any]]) -> list[str]:
        then = {path: digest for path, digest in files}
        now = {
            path: record.content_hash
            for path, record in self.project.records.items()
            if record.status == "present"
        }
        return sorted(p for p in then.keys() | now.keys() if then.get(p) != now.get(p))

    async def _reload(self) -> None:
        """Make the in-memory caches agree with the restored tables."""
        agents = self.project.agents
        if agents is not None:
            services = agents.services
            for cached in (services.memory, services.kv, services.overlay):
                cached.forget_cached()  # each agent is read again when it runs
            await services.proposals.reload()
        swarm = self.project.swarm
        for subscription in list(swarm.index.by_id.values()):
            swarm.index.remove(subscription.id)
        for subscription in await swarm.subscriptions.load():
            swarm.index.add(subscription)


def _read_contents(root: Path, wanted: dict[str, str]) -> list[tuple[str, bytes]]:
    """(blob name, bytes) of each wanted file whose bytes still have the
    content hash the name carries (in a thread: it reads files).
    """
    found: list[tuple[str, bytes]] = []
    for name, path in wanted.items():
        try:
            data = (root / path).read_bytes()
        except OSError as error:
            log.info("checkpoint: %s not kept: %s", path, error)
            continue
        if FILE_BLOB.format(content_hash(data)) == name:
            found.append((name, data))
    return found


def _named(db: sqlite3.Connection, table: str, stored: Any) -> tuple[list[str], list]:
    """A stored part as (column names, rows), whichever shape it was kept in."""
    if isinstance(stored, dict):
        return list(stored["columns"]), list(stored["rows"])
    rows = list(stored or [])
    if not rows:
        return [], []
    # A bare list (before parts carried names): the table's first columns.
    columns = [c[1] for c in db.execute(f"PRAGMA table_info({table})")]
    width = len(rows[0])
    if width > len(columns):
        raise ValueError(
            f"a checkpoint's {table} rows have {width} values, the table has "
            f"only {len(columns)} columns"
        )
    return columns[:width], rows


def _replace(db: sqlite3.Connection, part: str, replaced: str, stored: Any) -> None:
    columns, rows = _named(db, part, stored)
    if part == "proposals":
        # Withdraw what was proposed since; bring back what is not decided.
        db.execute(
            "UPDATE proposals SET status = ?, decided_at = ? WHERE status = ?",
            (ProposalStatus.SUPERSEDED, time.time(), ProposalStatus.PENDING),
        )
        decided = {
            r[0]
            for r in db.execute(
                "SELECT id FROM proposals WHERE status IN (?, ?)",
                (ProposalStatus.ACCEPTED, ProposalStatus.REJECTED),
            )
        }
        at = columns.index("id") if rows else 0
        rows = [r for r in rows if r[at] not in decided]
    else:
        db.execute(f"DELETE FROM {part}" + (f" WHERE {replaced}" if replaced else ""))
    if not rows:
        return
    # By name: columns added since take their defaults, removed ones are dropped.
    now = {c[1] for c in db.execute(f"PRAGMA table_info({part})")}
    kept = [i for i, name in enumerate(columns) if name in now]
    names = ", ".join(f'"{columns[i]}"' for i in kept)
    marks = ", ".join("?" * len(kept))
    db.executemany(
        f"INSERT OR REPLACE INTO {part} ({names}) VALUES ({marks})",
        [[_decode(row[i]) for i in kept] for row in rows],
    )
