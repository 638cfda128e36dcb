"""Persistence: the project's SQLite database and its repositories."""

from remora_core.store.database import DB_NAME, STORE_DIR, Database
from remora_core.store.nodes import FileRecord, FileSnapshot, NodeStore

__all__ = [
    "DB_NAME",
    "STORE_DIR",
    "Database",
    "FileRecord",
    "FileSnapshot",
    "NodeStore",
]
