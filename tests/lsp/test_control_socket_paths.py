"""The control socket is the person's alone, and never costs them a file
(issue 25 classes 2 and 3).

- A repository that ships ``.remora/control.sock`` as a link to a file of the
  person's gets that file deleted when the server starts (``clear_stale``
  unlinked the link's target). A stale socket is removed only when it is a
  socket the person owns; a link only as a link.
- A project path too long for a Unix socket puts the socket in a runtime
  folder outside the project (``$XDG_RUNTIME_DIR``, else ``$TMPDIR``): that
  folder is made fresh with mode 0700, or refused — no socket bound there —
  when it exists and is not the person's alone (another user who made it
  first, 0777, would swap the socket and read the person's ``remora ask``).
- The command line never follows a shipped link to a socket elsewhere.

The real control server (``serve_control``) runs on a real project.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import socket
import stat
import tempfile
from pathlib import Path

import pytest
from remora_cli.control.backend import ServerBackend
from remora_cli.control.server import serve_control

from tests.core.swarm_support import settings
from tests.project_harness import Project

NOBODY = 65534


@contextlib.asynccontextmanager
async def control_server(root: Path):
    """The project at ``root`` serving its control socket."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "a.py").write_text("def alpha():\n    return 1\n", "utf-8")
    project = Project(root, settings())
    await project.start()
    task = asyncio.ensure_future(serve_control(project.app, None))
    try:
        await asyncio.sleep(0.3)  # bound, or refused, by now
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await project.close()


def is_socket(path: Path) -> bool:
    try:
        return stat.S_ISSOCK(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


async def test_a_shipped_socket_link_never_deletes_the_persons_file(tmp_path):
    root, home = tmp_path / "repo", tmp_path / "home"
    (root / ".remora").mkdir(parents=True)
    home.mkdir()
    precious = home / "thesis.tex"
    precious.write_text("years of work")
    (root / ".remora" / "control.sock").symlink_to(precious)
    async with control_server(root):
        assert precious.read_text() == "years of work"
        assert is_socket(root / ".remora" / "control.sock")  # served, as its own
    assert precious.read_text() == "years of work"


async def test_no_socket_is_bound_through_a_store_folder_linked_out(tmp_path):
    root, home = tmp_path / "repo", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    (root / ".remora").symlink_to(home)
    async with control_server(root):
        assert list(home.iterdir()) == []  # no store, no socket there


async def test_a_socket_someone_else_owns_is_not_removed(tmp_path, caplog):
    root = tmp_path / "repo"
    (root / ".remora").mkdir(parents=True)
    path = root / ".remora" / "control.sock"
    theirs = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    theirs.bind(str(path))
    theirs.close()
    os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
    before = os.lstat(path)
    with caplog.at_level(logging.WARNING):
        async with control_server(root):
            after = os.lstat(path)
    assert (after.st_ino, after.st_uid) == (before.st_ino, NOBODY)
    assert f"owned by uid {NOBODY}" in caplog.text


def long_root(tmp_path: Path) -> Path:
    root = tmp_path / ("a-project-with-a-long-name-" * 4)
    assert len(os.fsencode(root / ".remora" / "control.sock")) > 100
    return root


@pytest.fixture
def short_dir():
    """A fresh folder with a short path, as ``/run/user/1000`` or ``/tmp`` are:
    a socket in it fits ``sun_path`` whatever the test's own folder (pytest-xdist
    makes that one longer: ``…/popen-gw0/…``).
    """
    folder = Path(tempfile.mkdtemp(prefix="r-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def runtime(short_dir, monkeypatch) -> Path:
    """``$TMPDIR`` of this test, no ``$XDG_RUNTIME_DIR``."""
    base = short_dir / "tmp"
    base.mkdir()
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(base))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    return base


@pytest.mark.parametrize("made_by", ["anyone, 0777", "another user, 0700"])
async def test_a_runtime_folder_not_the_persons_alone_is_refused(
    tmp_path, runtime, caplog, made_by
):
    folder = runtime / f"remora-{os.getuid()}"
    folder.mkdir()
    if made_by.startswith("anyone"):
        folder.chmod(0o777)
    else:
        os.chown(folder, NOBODY, NOBODY)
    root = long_root(tmp_path)
    with caplog.at_level(logging.WARNING):
        async with control_server(root):
            assert list(folder.iterdir()) == []  # no socket bound there
            announced = root / ".remora" / "control.sock"
            assert not (announced.exists() or announced.is_symlink())
    assert f"{folder} is not yours alone" in caplog.text


async def test_a_fresh_runtime_folder_is_made_0700(tmp_path, runtime):
    root = long_root(tmp_path)
    async with control_server(root):
        folder = runtime / f"remora-{os.getuid()}"
        assert stat.S_IMODE(os.lstat(folder).st_mode) == 0o700
        assert [is_socket(p) for p in folder.iterdir()] == [True]


async def test_a_client_finds_the_server_of_a_long_path(tmp_path, runtime):
    root = long_root(tmp_path)
    async with control_server(root):
        backend = await ServerBackend.connect(root)
        assert backend is not None
        try:
            info = await backend.call("server.info", {})
        finally:
            await backend.close()
    assert info["pid"] == os.getpid()


async def test_xdg_runtime_dir_is_preferred(tmp_path, runtime, monkeypatch):
    xdg = runtime.parent / "run-user"
    xdg.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(xdg))
    root = long_root(tmp_path)
    async with control_server(root):
        assert [p for p in xdg.rglob("*") if is_socket(p)]
        assert not list(runtime.iterdir())


def deep_folder(under: Path) -> Path:
    """A folder of the person's (0700) whose path leaves no room for a socket."""
    folder = under / ("a-runtime-folder-with-a-long-name-" * 3)
    folder.mkdir(mode=0o700)
    assert len(os.fsencode(folder)) > 90
    return folder


async def test_an_xdg_runtime_dir_too_long_for_a_socket_is_passed_over(
    tmp_path, runtime, monkeypatch
):
    xdg = deep_folder(runtime.parent)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(xdg))
    root = long_root(tmp_path)
    async with control_server(root):
        assert not list(xdg.iterdir())
        sockets = [p for p in runtime.rglob("*") if is_socket(p)]
        assert len(sockets) == 1
        backend = await ServerBackend.connect(root)
        assert backend is not None
        await backend.close()


async def test_no_folder_short_enough_for_a_socket_says_so(
    tmp_path, runtime, monkeypatch, caplog
):
    monkeypatch.setenv("TMPDIR", str(deep_folder(runtime)))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    root = long_root(tmp_path)
    with caplog.at_level(logging.WARNING):
        async with control_server(root) as task:
            assert not task.done() or task.exception() is None
            assert not list(runtime.rglob("*.sock"))
    assert "too long for a Unix socket path" in caplog.text
    assert "set TMPDIR or XDG_RUNTIME_DIR to a shorter folder" in caplog.text


async def test_the_command_line_never_follows_a_shipped_link_to_a_socket(tmp_path):
    root, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    (root / ".remora").mkdir(parents=True)
    elsewhere.mkdir()
    reached: list[bytes] = []

    async def listen(reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        reached.append(await reader.readline())
        writer.close()

    trap = await asyncio.start_unix_server(listen, path=str(elsewhere / "s.sock"))
    (root / ".remora" / "control.sock").symlink_to(elsewhere / "s.sock")
    try:
        backend = await ServerBackend.connect(root)
        if backend is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(backend.call("server.info", {}), 2)
            await backend.close()
        await asyncio.sleep(0.1)
    finally:
        trap.close()
    assert backend is None
    assert reached == []
