"""Git is read, never obeyed (``core/remora_core/safe_git.py``).

Each test ships a repository whose ``.git`` names a command of its own — a
partial clone whose promisor remote runs ``ext::``, ``ssh`` or ``uploadpack``
commands or asks a credential helper, an fsmonitor hook, a pager, diff and
filter drivers, hooks — every one of them a script that writes a marker file.
``remora trailers``, ``remora checkpoint create`` and ``remora blame`` (the
command line, as a person runs them) and the engine's ``trailers`` and
checkpoint ``git_head`` are then run on it: the marker must never appear.
"""

from __future__ import annotations

import ast
import asyncio
import http.server
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
from remora_core.history.attribution import trailers
from remora_core.history.checkpoints import git_head
from remora_core.store.database import Database

from tests.gitrepo import commit_all

REMORA = Path(sys.executable).with_name("remora")
SOURCE = 'def f():\n    """Written by an agent."""\n'
HOOKS = (
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "post-checkout",
    "post-merge",
    "pre-push",
    "reference-transaction",
    "post-index-change",
    "fsmonitor-watchman",
    "pre-auto-gc",
)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def evil_script(tmp: Path) -> tuple[Path, Path]:
    """A script that records that it ran (in the marker file); (script, marker)."""
    marker = tmp / "RAN"
    script = tmp / "evil.sh"
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\n')
    script.chmod(0o755)
    return script, marker


def partial_clone(repo: Path, url: str) -> None:
    """``repo`` claims to be a partial clone of ``url``, and the blob of f.py
    in HEAD is missing: reading it makes an unguarded git fetch it.
    """
    blob = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD:f.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    git(repo, "config", "core.repositoryformatversion", "1")
    git(repo, "config", "extensions.partialClone", "origin")
    git(repo, "config", "remote.origin.promisor", "true")
    git(repo, "config", "remote.origin.url", url)


def promisor_ext(repo: Path, evil: Path) -> None:
    partial_clone(repo, f"ext::{evil}")
    git(repo, "config", "protocol.ext.allow", "always")
    git(repo, "config", "protocol.allow", "always")


def promisor_ssh(repo: Path, evil: Path) -> None:
    partial_clone(repo, "ssh://example.invalid/x.git")
    git(repo, "config", "core.sshCommand", str(evil))
    git(repo, "config", "protocol.ssh.allow", "always")


def promisor_uploadpack(repo: Path, evil: Path) -> None:
    upstream = repo.parent / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q", "--bare")
    partial_clone(repo, str(upstream))
    git(repo, "config", "remote.origin.uploadpack", str(evil))
    git(repo, "config", "protocol.file.allow", "always")


class _AskForPassword(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="x"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def password_server():
    """An HTTP server on 127.0.0.1 that asks for a password."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AskForPassword)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/x.git"
    server.shutdown()
    server.server_close()


def promisor_credentials(repo: Path, evil: Path, url: str) -> None:
    partial_clone(repo, url)
    git(repo, "config", "credential.helper", f"!{evil}")
    git(repo, "config", "core.askPass", str(evil))


def fsmonitor(repo: Path, evil: Path) -> None:
    git(repo, "config", "core.fsmonitor", str(evil))
    git(repo, "config", "core.fsmonitorHookVersion", "2")


def pager(repo: Path, evil: Path) -> None:
    git(repo, "config", "core.pager", str(evil))
    for name in ("cat-file", "rev-parse"):
        git(repo, "config", f"pager.{name}", str(evil))


def drivers(repo: Path, evil: Path) -> None:
    """External diff, textconv and filters (through ``.gitattributes``)."""
    (repo / ".gitattributes").write_text("* diff=evil filter=evil merge=evil\n")
    git(repo, "config", "diff.external", str(evil))
    git(repo, "config", "diff.evil.command", str(evil))
    git(repo, "config", "diff.evil.textconv", str(evil))
    for key in ("clean", "smudge", "process"):
        git(repo, "config", f"filter.evil.{key}", str(evil))
    git(repo, "config", "merge.evil.driver", str(evil))


def hooks(repo: Path, evil: Path) -> None:
    for folder in (repo / ".git" / "hooks", repo / "elsewhere"):
        folder.mkdir(exist_ok=True)
        for name in HOOKS:
            (folder / name).write_bytes(evil.read_bytes())
            (folder / name).chmod(0o755)
    git(repo, "config", "core.hooksPath", str(repo / "elsewhere"))


def embedded_bare(repo: Path, evil: Path) -> None:
    """The project folder is itself a git directory (a bare repository shipped
    inside a project), and a partial clone as in :func:`promisor_ext`.
    """
    promisor_ext(repo, evil)
    for item in (repo / ".git").iterdir():
        shutil.move(item, repo / item.name)
    (repo / ".git").rmdir()
    git(repo, "config", "core.bare", "true")


KINDS = {
    "promisor-ext": promisor_ext,
    "promisor-ssh-command": promisor_ssh,
    "promisor-uploadpack": promisor_uploadpack,
    "fsmonitor": fsmonitor,
    "pager": pager,
    "drivers": drivers,
    "hooks": hooks,
    "embedded-bare": embedded_bare,
}


async def hostile_project(tmp_path: Path, kind: str, url: str) -> tuple[Path, Path]:
    """A committed project with an accepted proposal of f.py in its store, its
    ``.git`` made hostile as ``kind`` says; (project, marker).
    """
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "f.py").write_text(SOURCE)
    commit_all(repo)
    (repo / "f.py").write_text(SOURCE + "\n\ndef g():\n    return 1\n")
    evil, marker = evil_script(tmp_path)
    if kind == "promisor-credentials":
        promisor_credentials(repo, evil, url)
    else:
        KINDS[kind](repo, evil)
    database = await Database.open(repo)
    row = (
        "pr_000000000001",
        "rm_ffffffff",
        "f.py",
        "def f():\n    pass",
        SOURCE.rstrip("\n"),
        1.0,
        1.0,
    )
    await database.transaction(
        lambda db: db.execute(
            "INSERT INTO proposals (id, node_id, kind, file_path, base_hash, "
            "start_byte, end_byte, old_source, new_source, diff, status, created_at, "
            "decided_at) VALUES (?, ?, 'rewrite', ?, '', 0, 0, ?, ?, '', 'accepted', "
            "?, ?)",
            row,
        ),
        "test",
    )
    await database.close()
    return repo, marker


async def cli(root: Path, *args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        str(REMORA),
        "--project",
        str(root),
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


@pytest.mark.parametrize("kind", [*KINDS, "promisor-credentials"])
async def test_a_hostile_git_directory_runs_nothing(kind, tmp_path, password_server):
    repo, marker = await hostile_project(tmp_path, kind, password_server)

    # The engine: trailers read HEAD (cat-file), a checkpoint reads HEAD's id.
    database = await Database.open(repo)
    try:
        found = await trailers(repo, database, lambda p: (repo / p).read_bytes())
    finally:
        await database.close()
    head = git_head(SimpleNamespace(root=repo))  # pyright: ignore[reportArgumentType]
    assert (head is None) == (kind == "embedded-bare")  # no .git: no HEAD asked
    assert not marker.exists(), marker.read_text()
    # A partial clone's f.py blob is missing and nothing fetched it: not in
    # HEAD, so the agent's line counts as uncommitted. Elsewhere it is
    # committed.
    expected = (
        ["Remora-Agent: rm_ffffffff (pr_000000000001)"]
        if kind.startswith("promisor") or kind == "embedded-bare"
        else []
    )
    assert found == expected

    # The command line, as a person (or a prepare-commit-msg hook) runs it.
    code, out, err = await cli(repo, "trailers")
    assert code == 0, err
    assert out.splitlines() == expected
    code, out, err = await cli(repo, "checkpoint", "create", "x")
    assert code == 0, err
    code, out, err = await cli(repo, "blame", "f.py")
    assert code == 0, err
    assert not marker.exists(), marker.read_text()


def test_an_ordinary_repository_is_still_read(tmp_path, monkeypatch):
    """The overrides take nothing away from a plain repository, and it is the
    project's repository that is read even from a hook of another one (git
    sets GIT_DIR and GIT_INDEX_FILE for its hooks).
    """
    from remora_core.history.attribution import head_texts

    project, other = tmp_path / "project", tmp_path / "other"
    for repo, text in ((project, SOURCE), (other, "x = 'another repository'\n")):
        repo.mkdir()
        (repo / "f.py").write_text(text)
        commit_all(repo)
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    assert head_texts(project, ["f.py", "gone.py"]) == {"f.py": SOURCE}
    head = git_head(SimpleNamespace(root=project))  # pyright: ignore[reportArgumentType]
    assert head is not None and len(head) == 40


def test_no_other_module_spawns_git():
    """Every git call goes through safe_git: no other module of the server or
    the command line names ``git`` as a program to run.
    """
    top = Path(__file__).resolve().parents[2]
    offenders = []
    for folder in ("core", "remora_lsp"):
        for path in sorted((top / folder).rglob("*.py")):
            if path.name == "safe_git.py" or ".venv" in path.parts:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call):
                    continue
                values = [*node.args, *(k.value for k in node.keywords)]
                for value in list(values):
                    if isinstance(value, (ast.List, ast.Tuple)):
                        values.extend(value.elts)
                    if isinstance(value, ast.Starred):
                        values.append(value.value)
                for value in values:
                    if (
                        isinstance(value, ast.Constant)
                        and isinstance(value.value, str)
                        and (value.value == "git" or value.value.startswith("git "))
                    ):
                        offenders.append(f"{path.relative_to(top)}:{node.lineno}")
    assert offenders == []
