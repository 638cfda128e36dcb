"""The project database: creation, migrations, failure modes and round trips.

A user must never lose data to Remora: a database it cannot use (too new,
damaged) is reported once, in words, and left exactly as it was.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from hypothesis import given, settings
from hypothesis import strategies as st
from remora_core.model import (
    AgentStatus,
    CodeNode,
    Edge,
    EdgeKind,
    NodeKind,
    NodeStatus,
    Span,
)
from remora_core.store import Database, FileRecord, FileSnapshot, NodeStore
from remora_core.store.migrations import LATEST_VERSION

if TYPE_CHECKING:
    from pathlib import Path


def tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as connection:
        rows = connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        return {name for (name,) in rows}


def user_version(path: Path) -> int:
    with sqlite3.connect(path) as connection:
        return connection.execute("PRAGMA user_version").fetchone()[0]


# ---- creating and migrating ----------------------------------------------------------


async def test_a_new_project_gets_a_migrated_database_kept_out_of_git(tmp_path):
    database = await Database.open(tmp_path)
    try:
        assert database.available and database.problem is None
        assert await database.version() == LATEST_VERSION
    finally:
        await database.close()
    store = tmp_path / ".remora"
    assert database.path == store / "remora.db"
    assert (store / ".gitignore").read_text(encoding="utf-8").strip() == "*"
    assert user_version(database.path) == LATEST_VERSION
    assert {"files", "nodes", "edges"} <= tables(database.path)


async def test_the_database_uses_wal_and_foreign_keys(tmp_path):
    database = await Database.open(tmp_path)
    try:
        assert database.connection is not None
        async with database.connection.execute("PRAGMA journal_mode") as cursor:
            assert (await cursor.fetchone())[0] == "wal"
        async with database.connection.execute("PRAGMA foreign_keys") as cursor:
            assert (await cursor.fetchone())[0] == 1
    finally:
        await database.close()


async def test_reopening_is_idempotent(tmp_path):
    first = await Database.open(tmp_path)
    await first.close()
    await first.close()  # closing twice is harmless
    second = await Database.open(tmp_path)
    try:
        assert second.available
        assert await second.version() == LATEST_VERSION
    finally:
        await second.close()
    assert user_version(second.path) == LATEST_VERSION


async def test_a_users_own_gitignore_is_not_overwritten(tmp_path):
    (tmp_path / ".remora").mkdir()
    (tmp_path / ".remora" / ".gitignore").write_text("remora.db\n", encoding="utf-8")
    database = await Database.open(tmp_path)
    await database.close()
    assert (tmp_path / ".remora" / ".gitignore").read_text() == "remora.db\n"


# ---- databases we cannot use ---------------------------------------------------------


async def test_a_database_from_a_newer_remora_is_reported_and_left_alone(tmp_path):
    path = tmp_path / ".remora" / "remora.db"
    path.parent.mkdir()
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE future (x)")
        connection.execute(f"PRAGMA user_version = {LATEST_VERSION + 5}")
    told: list[str] = []

    database = await Database.open(tmp_path, on_problem=told.append)
    await database.close()

    assert not database.available
    assert database.problem is not None
    assert told == [database.problem]  # exactly one message
    assert str(LATEST_VERSION + 5) in database.problem
    assert "newer" in database.problem and "upgrade" in database.problem
    assert str(path) in database.problem
    assert user_version(path) == LATEST_VERSION + 5  # not migrated down or up
    assert tables(path) == {"future"}


async def test_a_corrupt_database_is_reported_and_not_touched(tmp_path):
    path = tmp_path / ".remora" / "remora.db"
    path.parent.mkdir()
    garbage = b"this is not sqlite \x00\xff" * 512
    path.write_bytes(garbage)

    database = await Database.open(tmp_path)
    await database.close()

    assert not database.available
    problem = database.problem
    assert problem is not None
    assert str(path) in problem
    assert "damaged" in problem
    assert "memory" in problem  # the user learns that work carries on
    assert path.read_bytes() == garbage
    # Besides the file, only the store's lock (one writer per store) was added.
    assert sorted(p.name for p in path.parent.iterdir()) == [
        ".gitignore",
        "owner.lock",
        "remora.db",
    ]


async def test_an_unusable_store_skips_writes_instead_of_raising(tmp_path):
    path = tmp_path / ".remora" / "remora.db"
    path.parent.mkdir()
    path.write_bytes(b"garbage" * 100)
    database = await Database.open(tmp_path)
    try:
        store = NodeStore(database)
        assert await store.load() == ([], [], [])
        record = FileRecord("a.py", "rm_file0001", "hash")
        assert await store.save_files([FileSnapshot(record, [], [])]) is False
    finally:
        await database.close()
    assert path.read_bytes() == b"garbage" * 100


# ---- nodes and edges round trip ------------------------------------------------------


def node(
    node_id: str,
    kind: NodeKind,
    name: str,
    *,
    path: str = "pkg/mod.py",
    parent: str | None = "rm_file0001",
    start: int = 0,
    status: NodeStatus = NodeStatus.ACTIVE,
) -> CodeNode:
    return CodeNode(
        id=node_id,
        kind=kind,
        name=name,
        qualified_name=name if kind is NodeKind.FILE else f"Q.{name}",
        file_path=path,
        span=Span(start, start + 40, 2, 4, 5, 12, ascii=False),
        name_span=Span(start + 8, start + 13, 2, 8, 2, 13, ascii=True),
        parent_id=parent,
        source_hash=f"hash-{node_id}",
        status=status,
        agent_status=AgentStatus.AWAITING_REVIEW,
    )


async def test_files_nodes_and_edges_round_trip(tmp_path):
    file_node = node("rm_file0001", NodeKind.FILE, "pkg/mod.py", parent=None)
    klass = node("rm_class001", NodeKind.CLASS, "Café")
    method = node(
        "rm_method01", NodeKind.METHOD, "grüß", parent="rm_class001", start=50
    )
    orphan = node("rm_orphan01", NodeKind.FUNCTION, "old", status=NodeStatus.ORPHANED)
    calls = Edge("rm_method01", "rm_class001", EdgeKind.CALLS)
    imports = Edge("rm_file0001", "rm_other001", EdgeKind.IMPORTS)  # saved later
    parent = Edge("rm_class001", "rm_method01", EdgeKind.PARENT_OF)
    record = FileRecord("pkg/mod.py", "rm_file0001", "content-hash")
    skipped = FileRecord("big.py", "", None, "skipped", "larger than the limit")

    database = await Database.open(tmp_path)
    try:
        store = NodeStore(database)
        saved = await store.save_files(
            [
                FileSnapshot(
                    record,
                    [file_node, klass, method, orphan],
                    [calls, imports, parent],
                ),
                FileSnapshot(skipped, [], []),
            ]
        )
        assert saved is True
    finally:
        await database.close()

    reopened = await Database.open(tmp_path)
    try:
        files, nodes, edges = await NodeStore(reopened).load()
    finally:
        await reopened.close()
    assert sorted(files, key=lambda f: f.path) == [skipped, record]
    assert sorted(nodes, key=lambda n: n.id) == sorted(
        [file_node, klass, method, orphan], key=lambda n: n.id
    )
    # parent_of edges are derived from parent_id on load, not read back.
    assert sorted(edges, key=lambda e: e.kind) == [calls, imports]


async def test_saving_a_file_again_replaces_its_edges(tmp_path):
    record = FileRecord("a.py", "rm_file0001", "h1")
    first = [Edge("rm_aaaaaaaa", "rm_bbbbbbbb", EdgeKind.CALLS)]
    second = [Edge("rm_aaaaaaaa", "rm_cccccccc", EdgeKind.CALLS)]
    other = FileRecord("b.py", "rm_file0002", "h2")
    kept = [Edge("rm_dddddddd", "rm_bbbbbbbb", EdgeKind.CALLS)]
    database = await Database.open(tmp_path)
    try:
        store = NodeStore(database)
        await store.save_files([FileSnapshot(record, [], first)])
        await store.save_files([FileSnapshot(other, [], kept)])
        await store.save_files([FileSnapshot(record, [], second)])
        _, _, edges = await store.load()
    finally:
        await database.close()
    assert sorted(edges, key=lambda e: e.to_id) == [kept[0], second[0]]


async def test_moving_a_file_rekeys_its_record_and_nodes(tmp_path):
    file_node = node("rm_file0001", NodeKind.FILE, "old.py", path="old.py", parent=None)
    function = node("rm_func0001", NodeKind.FUNCTION, "f", path="old.py")
    database = await Database.open(tmp_path)
    try:
        store = NodeStore(database)
        await store.save_files(
            [
                FileSnapshot(
                    FileRecord("old.py", "rm_file0001", "h"), [file_node, function], []
                )
            ]
        )
        assert await store.move_file("old.py", "new/place.py")
        files, nodes, _ = await store.load()
    finally:
        await database.close()
    assert [f.path for f in files] == ["new/place.py"]
    assert {n.id: n.file_path for n in nodes} == {
        "rm_file0001": "new/place.py",
        "rm_func0001": "new/place.py",
    }


# ---- saving only what changed ------------------------------------------------------

_PATHS = ("a.py", "b.py")
_IDS = tuple(f"rm_node000{i}" for i in range(4))
_EDGES = tuple(
    Edge(source, target, kind)
    for source in _IDS[:2]
    for target in _IDS[2:]
    for kind in (EdgeKind.CALLS, EdgeKind.PARENT_OF)
)


@st.composite
def _saves(draw):
    """Steps of (path, {node id: version}, edges) for two files."""
    steps = []
    for _ in range(draw(st.integers(1, 6))):
        path = draw(st.sampled_from(_PATHS))
        ids = draw(st.lists(st.sampled_from(_IDS), unique=True, max_size=4))
        versions = {i: draw(st.integers(0, 2)) for i in ids}
        edges = draw(st.lists(st.sampled_from(_EDGES), unique=True, max_size=6))
        steps.append((path, versions, edges))
    return steps


@settings(max_examples=40, deadline=None)
@given(steps=_saves())
async def test_saving_again_stores_what_a_whole_save_stores(tmp_path_factory, steps):
    """A store re-saving files writes only the nodes that changed (also when
    an id moves between files); what it then holds is what saving each step
    whole gives.
    """
    made: dict[tuple[str, str, int], CodeNode] = {}

    def snapshot(path: str, versions: dict[str, int], edges) -> FileSnapshot:
        nodes = []
        for node_id, version in versions.items():
            key = (path, node_id, version)  # the same version is the same object
            if key not in made:
                made[key] = node(node_id, NodeKind.FUNCTION, f"f{version}", path=path)
            nodes.append(made[key])
        return FileSnapshot(
            FileRecord(path, f"rm_{path[0]}file0001", "h"), nodes, edges
        )

    async def stored(root: Path, *, incremental: bool):
        database = await Database.open(root)
        try:
            store = NodeStore(database)
            for path, versions, edges in steps:
                if not incremental:
                    store = NodeStore(database)  # remembers nothing: writes all
                assert await store.save_files([snapshot(path, versions, edges)])
            files, nodes, _ = await NodeStore(database).load()
            edges = await database.read(
                lambda db: sorted(
                    db.execute("SELECT from_id, to_id, kind, file_path FROM edges")
                ),
                "reading edges",
            )
        finally:
            await database.close()
        return files, sorted(nodes, key=lambda n: n.id), edges

    incremental = await stored(tmp_path_factory.mktemp("a"), incremental=True)
    whole = await stored(tmp_path_factory.mktemp("b"), incremental=False)
    assert incremental == whole
