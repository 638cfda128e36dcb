"""The store is made only of the person's own real files inside the project
(issue 25 class 2).

A repository can ship ``.remora`` (or a file in it) as a symbolic link to
somewhere of the person's, or a folder someone else owns: the store, its lock
and its ``.gitignore`` would be written there, or its tables added to the
person's own SQLite file. The store refuses to start, with one message naming
what is wrong, and nothing outside is touched.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3

import pytest
from remora_core.store import Database

NOBODY = 65534


def tables(path) -> list[str]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return [r[0] for r in db.execute("SELECT name FROM sqlite_master")]


async def opened(root, told: list[str]) -> Database:
    database = await Database.open(root, on_problem=told.append)
    await database.close()
    return database


async def test_a_store_folder_that_is_a_link_out_is_refused(tmp_path):
    root, outside = tmp_path / "repo", tmp_path / "home"
    root.mkdir()
    outside.mkdir()
    (root / ".remora").symlink_to(outside)
    told: list[str] = []
    database = await opened(root, told)
    assert not database.available
    [message] = told
    assert ".remora is a symbolic link" in message and str(outside) in message
    assert list(outside.iterdir()) == []  # no store, lock or .gitignore there


@pytest.mark.parametrize("name", ["remora.db", "owner.lock", ".gitignore"])
async def test_a_store_file_that_is_a_link_out_is_refused(tmp_path, name):
    root, outside = tmp_path / "repo", tmp_path / "home"
    (root / ".remora").mkdir(parents=True)
    outside.mkdir()
    mine = outside / "mine.db"
    with contextlib.closing(sqlite3.connect(mine)) as db:
        db.execute("CREATE TABLE notes (text)")
        db.commit()
    before = mine.read_bytes()
    (root / ".remora" / name).symlink_to(mine)
    told: list[str] = []
    database = await opened(root, told)
    assert not database.available
    assert any(f".remora/{name} is a symbolic link" in m for m in told), told
    assert mine.read_bytes() == before
    assert tables(mine) == ["notes"]


async def test_a_store_folder_someone_else_owns_is_refused(tmp_path):
    root = tmp_path / "repo"
    (root / ".remora").mkdir(parents=True)
    os.chown(root / ".remora", NOBODY, NOBODY)
    told: list[str] = []
    database = await opened(root, told)
    assert not database.available
    assert any(f"owned by uid {NOBODY}" in m for m in told), told
    assert not (root / ".remora" / "remora.db").exists()


async def test_a_real_store_folder_of_the_person_opens(tmp_path):
    told: list[str] = []
    database = await opened(tmp_path, told)
    assert told == [] and database.problem is None
    assert (tmp_path / ".remora" / "remora.db").is_file()
