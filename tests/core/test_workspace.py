"""Agents' key-value memory and copy-on-write file overlays.

An agent must be able to remember things across restarts, draft files without
touching the project, and never reach outside the project or into secrets.
"""

from __future__ import annotations

import pytest
from remora_core.agents.workspace import KeyValueStore, Overlay
from remora_core.project_paths import PathRefused
from remora_core.store import Database

SECRETS = [".env*", "*.pem"]
AGENT = "rm_aaaaaaaa"
OTHER = "rm_bbbbbbbb"


# ---- key-value memory ----------------------------------------------------------


@pytest.mark.parametrize("persisted", [False, True])
async def test_values_round_trip_per_agent(database, persisted):
    kv = KeyValueStore(database if persisted else None)
    await kv.set(AGENT, "todo", ["parse", {"n": 2}])
    await kv.set(AGENT, "seen", True)
    await kv.set(OTHER, "todo", "other's")
    assert await kv.get(AGENT, "todo") == ["parse", {"n": 2}]
    assert await kv.get(AGENT, "missing") is None
    assert await kv.keys(AGENT) == ["seen", "todo"]
    assert await kv.get(OTHER, "todo") == "other's"
    await kv.clear(AGENT)
    assert await kv.keys(AGENT) == []
    assert await kv.get(OTHER, "todo") == "other's"


async def test_a_returned_value_is_a_copy(database):
    kv = KeyValueStore(database)
    await kv.set(AGENT, "list", [1])
    (await kv.get(AGENT, "list")).append(2)
    assert await kv.get(AGENT, "list") == [1]


async def test_values_survive_a_restart(tmp_path):
    database = await Database.open(tmp_path)
    kv = KeyValueStore(database)
    await kv.set(AGENT, "notes", {"ünïcode": "✓", "n": 1.5})
    await kv.set(AGENT, "gone", 1)
    await kv.set(OTHER, "kept", 2)
    await kv.clear(AGENT)
    await kv.set(AGENT, "notes", {"ünïcode": "✓", "n": 1.5})
    await database.close()
    database = await Database.open(tmp_path)
    try:
        reopened = KeyValueStore(database)
        assert await reopened.get(AGENT, "notes") == {"ünïcode": "✓", "n": 1.5}
        assert await reopened.keys(AGENT) == ["notes"]
        assert await reopened.get(OTHER, "kept") == 2
    finally:
        await database.close()


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("", 1, "a key is a string of 1 to 200 characters"),
        ("k" * 201, 1, "a key is a string of 1 to 200 characters"),
        ("k", {1, 2}, "the value cannot be stored as JSON: Object of type set"),
        ("k", float("nan"), "the value cannot be stored as JSON: Out of range float"),
        ("k", "x" * 70_000, "the value is 70,002 bytes as JSON; the limit is 65,536"),
    ],
)
async def test_bad_keys_and_values_are_refused_clearly(key, value, message):
    kv = KeyValueStore(None)
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(")):
        await kv.set(AGENT, key, value)
    assert await kv.keys(AGENT) == []


async def test_a_value_with_a_lone_surrogate_is_stored_escaped(database):
    kv = KeyValueStore(database)
    await kv.set(AGENT, "odd", "a\udc80b")
    assert await KeyValueStore(database).get(AGENT, "odd") == "a\udc80b"


# ---- overlays -----------------------------------------------------------------------


@pytest.fixture
def project(tmp_path):
    """A project folder with two files and a secret; buffers override the disk."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_bytes(b"one\ntwo\nthree\n")
    (tmp_path / "pkg" / "b.py").write_bytes(b"bee\n")
    (tmp_path / ".env").write_bytes(b"TOKEN=x\n")
    return tmp_path


def reader(root, buffers=None):
    buffers = buffers or {}

    def read_base(path: str) -> bytes | None:
        if path in buffers:
            return buffers[path]
        target = root / path
        return target.read_bytes() if target.is_file() else None

    return read_base


async def test_reads_fall_through_to_the_project_until_the_agent_writes(
    project, database
):
    overlay = Overlay(
        database, project, reader(project, {"pkg/b.py": b"buffer\n"}), SECRETS
    )
    assert await overlay.read(AGENT, "pkg/a.py") == b"one\ntwo\nthree\n"
    assert await overlay.read(AGENT, "pkg/b.py") == b"buffer\n"
    await overlay.write(AGENT, "pkg/a.py", b"one\n2\nthree\n")
    assert await overlay.read(AGENT, "pkg/a.py") == b"one\n2\nthree\n"
    assert await overlay.read(OTHER, "pkg/a.py") == b"one\ntwo\nthree\n"
    assert (project / "pkg" / "a.py").read_bytes() == b"one\ntwo\nthree\n"


async def test_deleting_leaves_a_whiteout(project, database):
    overlay = Overlay(database, project, reader(project), SECRETS)
    await overlay.delete(AGENT, "pkg/b.py")
    with pytest.raises(
        FileNotFoundError, match=r"^pkg/b\.py was deleted in your workspace$"
    ):
        await overlay.read(AGENT, "pkg/b.py")
    with pytest.raises(FileNotFoundError, match="does not exist in your workspace"):
        await overlay.delete(AGENT, "pkg/b.py")
    assert (project / "pkg" / "b.py").exists()
    await overlay.write(AGENT, "pkg/b.py", b"back\n")
    assert await overlay.read(AGENT, "pkg/b.py") == b"back\n"


async def test_a_file_only_the_agent_created_is_simply_removed(project, database):
    overlay = Overlay(database, project, reader(project), SECRETS)
    await overlay.write(AGENT, "pkg/new.py", b"new\n")
    await overlay.delete(AGENT, "pkg/new.py")
    assert await overlay.changes(AGENT) == {}
    with pytest.raises(
        FileNotFoundError, match=r"^pkg/new\.py does not exist in the project$"
    ):
        await overlay.read(AGENT, "pkg/new.py")


async def test_the_diff_shows_every_change_against_the_project(project, database):
    overlay = Overlay(database, project, reader(project), SECRETS)
    await overlay.write(AGENT, "pkg/a.py", b"one\n2\nthree\n")
    await overlay.write(AGENT, "pkg/c.py", b"sea\n")
    await overlay.delete(AGENT, "pkg/b.py")
    assert await overlay.changes(AGENT) == {
        "pkg/a.py": b"one\n2\nthree\n",
        "pkg/b.py": None,
        "pkg/c.py": b"sea\n",
    }
    assert await overlay.diff(AGENT) == (
        "--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
        "--- a/pkg/b.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-bee\n"
        "--- /dev/null\n+++ b/pkg/c.py\n@@ -0,0 +1 @@\n+sea\n"
    )
    await overlay.clear(AGENT)
    assert await overlay.diff(AGENT) == ""
    assert await overlay.read(AGENT, "pkg/b.py") == b"bee\n"


async def test_overlays_survive_a_restart(project):
    database = await Database.open(project)
    overlay = Overlay(database, project, reader(project), SECRETS)
    await overlay.write(AGENT, "pkg/a.py", b"\x00binary\xff")
    await overlay.delete(AGENT, "pkg/b.py")
    await overlay.write(OTHER, "pkg/c.py", b"sea\n")
    await overlay.clear(OTHER)
    await database.close()
    database = await Database.open(project)
    try:
        reopened = Overlay(database, project, reader(project), SECRETS)
        assert await reopened.changes(AGENT) == {
            "pkg/a.py": b"\x00binary\xff",
            "pkg/b.py": None,
        }
        assert await reopened.changes(OTHER) == {}
        assert "Binary files a/pkg/a.py and b/pkg/a.py differ\n" in await reopened.diff(
            AGENT
        )
    finally:
        await database.close()


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../outside.py", "'../outside.py' is outside the project; access refused"),
        (
            "/etc/passwd",
            "'/etc/passwd' is absolute; give a path relative to the project root",
        ),
        (".env", "'.env' matches secrets.exclude; access refused"),
        (
            "keys/server.pem",
            "'keys/server.pem' matches secrets.exclude; access refused",
        ),
        ("", "give a file path relative to the project root"),
    ],
)
async def test_paths_outside_the_project_or_secret_are_refused(project, path, message):
    overlay = Overlay(None, project, reader(project), SECRETS)
    for attempt in (
        overlay.read(AGENT, path),
        overlay.write(AGENT, path, b"x"),
        overlay.delete(AGENT, path),
    ):
        with pytest.raises(PathRefused) as refused:
            await attempt
        assert str(refused.value) == message


async def test_without_a_root_paths_are_still_checked_and_memory_is_used():
    files = {"scratch.py": b"x = 1\n"}
    overlay = Overlay(None, None, files.get, SECRETS)
    await overlay.write(AGENT, "./scratch.py", b"x = 2\n")
    assert await overlay.read(AGENT, "scratch.py") == b"x = 2\n"
    for path in ("../up.py", "/abs.py", ".env.local"):
        with pytest.raises(PathRefused):
            await overlay.read(AGENT, path)


async def test_oversized_and_non_bytes_content_is_refused(project):
    overlay = Overlay(None, project, reader(project), SECRETS)
    with pytest.raises(ValueError, match="limit is 2,097,152"):
        await overlay.write(AGENT, "pkg/a.py", b"x" * (2 * 1024 * 1024 + 1))
    with pytest.raises(ValueError, match="must be bytes"):
        await overlay.write(AGENT, "pkg/a.py", "text")  # type: ignore[arg-type]
    assert await overlay.changes(AGENT) == {}
