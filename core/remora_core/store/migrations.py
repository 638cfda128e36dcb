"""Versioned schema migrations for the project database.

``MIGRATIONS[i]`` brings a database from version ``i`` to ``i + 1``; the version
lives in ``PRAGMA user_version``. Each migration runs in one transaction, so a
crash half-way leaves the previous version intact. Never edit a released
migration: append a new one.
"""

from __future__ import annotations

MIGRATIONS: list[str] = [
    # 1: the structural core — files, nodes, edges (DESIGN §5).
    """
    CREATE TABLE files (
        path TEXT PRIMARY KEY,
        file_id TEXT NOT NULL,
        content_hash TEXT,
        status TEXT NOT NULL DEFAULT 'present',  -- present | deleted | skipped
        skipped_reason TEXT,
        indexed_at REAL
    );
    CREATE TABLE nodes (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        qualified_name TEXT NOT NULL,
        file_path TEXT NOT NULL,
        start_line INTEGER NOT NULL,
        start_col INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        end_col INTEGER NOT NULL,
        start_byte INTEGER NOT NULL,
        end_byte INTEGER NOT NULL,
        span_ascii INTEGER NOT NULL DEFAULT 1,
        name_line INTEGER NOT NULL,
        name_start_col INTEGER NOT NULL,
        name_end_col INTEGER NOT NULL,
        name_start_byte INTEGER NOT NULL,
        name_end_byte INTEGER NOT NULL,
        name_ascii INTEGER NOT NULL DEFAULT 1,
        source_hash TEXT NOT NULL,
        parent_id TEXT,
        status TEXT NOT NULL DEFAULT 'active',
        agent_status TEXT NOT NULL DEFAULT 'idle',
        updated_at REAL NOT NULL
    );
    CREATE INDEX nodes_by_file ON nodes(file_path);
    CREATE TABLE edges (
        from_id TEXT NOT NULL,
        to_id TEXT NOT NULL,  -- may name a node of a file saved later
        kind TEXT NOT NULL,
        file_path TEXT NOT NULL,  -- the file whose parse produced the edge
        PRIMARY KEY (from_id, to_id, kind)
    ) WITHOUT ROWID;
    CREATE INDEX edges_by_target ON edges(to_id, kind);
    CREATE INDEX edges_by_file ON edges(file_path);
    """,
]

LATEST_VERSION = len(MIGRATIONS)
