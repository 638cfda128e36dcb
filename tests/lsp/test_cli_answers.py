"""Answers, never tracebacks: every ``remora`` verb, fed a damaged store.

A store shipped with a repository (or damaged by a crash, a disk, another
program) can hold rows of the wrong type, blobs that are gone, checkpoint
manifests that are not JSON or are JSON nested 100,000 deep. Whatever a verb
meets, it ends with one line on stderr saying what went wrong, the exit code
``docs/command-line.md`` documents, and no Python traceback.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import session
from tests.lsp.helpers import eventually
from tests.lsp.test_command_line import remora

NESTED = "[" * 100_000 + "]" * 100_000
"""JSON nested deeper than any parser's recursion."""
NOT_JSON = "{not json"
BAD_UTF8 = b"\xff\xfe\x00garbage"
PROPOSAL = "pr_0123456789ab"
RUN = "run_0123456789ab"


@pytest.fixture(scope="module")
def baseline(tmp_path_factory, request) -> Path:
    """The basic workspace with a store: nodes, a checkpoint, a proposal, a
    run and its events (made once; every test damages a copy).
    """
    import asyncio

    from tests.conftest import WORKSPACES

    root = tmp_path_factory.mktemp("baseline") / "basic"
    shutil.copytree(WORKSPACES / "basic", root)

    async def make() -> None:
        code, _out, err = await remora(root, "checkpoint", "create", "base")
        assert code == 0, err
        code, _out, err = await remora(root, "nodes", "helper", "--json")
        assert code == 0, err

    asyncio.run(make())
    with sqlite3.connect(root / ".remora" / "remora.db") as db:
        (node_id,) = db.execute(
            "SELECT id FROM nodes WHERE qualified_name = 'Service.helper'"
        ).fetchone()
        db.execute(
            "INSERT INTO proposals (id, node_id, run_id, kind, file_path, base_hash, "
            "start_byte, end_byte, old_source, new_source, diff, status, created_at) "
            "VALUES (?, ?, ?, 'rewrite', 'pkg/service.py', 'x', 0, 1, 'a', 'b', "
            "'--- a\n+++ b\n', 'pending', 1.0)",
            (PROPOSAL, node_id, RUN),
        )
        db.execute(
            "INSERT INTO runs (id, node_id, status, started_at) "
            "VALUES (?, ?, 'completed', 1.0)",
            (RUN, node_id),
        )
    db.close()
    return root


def one_line_each(err: str) -> bool:
    """Nothing on stderr runs over several lines (a traceback, a dump of an
    error's details is indented).
    """
    return all(line and not line[0].isspace() for line in err.splitlines())


def damaged(baseline: Path, tmp_path: Path, *statements: tuple[str, tuple]) -> Path:
    root = tmp_path / "basic"
    shutil.copytree(baseline, root)
    with sqlite3.connect(root / ".remora" / "remora.db") as db:
        for sql, values in statements:
            db.execute(sql, values)
    db.close()
    return root


MANIFEST = "UPDATE checkpoints SET manifest = ?"
BLOBS = "UPDATE blobs SET body = ?"
CORRUPT_PROPOSAL = (
    "UPDATE proposals SET created_at = 'yesterday', diff = ?, start_byte = 'x', "
    "old_source = 7, reasoning = ?, base_version = 'v'",
    (BAD_UTF8, BAD_UTF8),
)
CORRUPT_EVENTS = (
    "UPDATE events SET payload = ?, timestamp = 'noon'",
    (NESTED,),
)
CORRUPT_RUNS = (
    "UPDATE runs SET started_at = 'x', status = 'exploded', error = ?, node_id = 5",
    (BAD_UTF8,),
)
CORRUPT_CHECKPOINTS = (
    "UPDATE checkpoints SET created_at = 'noon', label = ?, git_head = 5",
    (BAD_UTF8,),
)

CASES = {
    "manifest-not-json": ([(MANIFEST, (NOT_JSON,))], ["checkpoint", "restore", "CP"]),
    "manifest-nested": ([(MANIFEST, (NESTED,))], ["checkpoint", "restore", "CP"]),
    "manifest-a-list": ([(MANIFEST, ("[1, 2]",))], ["checkpoint", "restore", "CP"]),
    "manifest-bytes": ([(MANIFEST, (BAD_UTF8,))], ["checkpoint", "restore", "CP"]),
    "blobs-missing": ([("DELETE FROM blobs", ())], ["checkpoint", "restore", "CP"]),
    "blob-nested": ([(BLOBS, (NESTED,))], ["checkpoint", "restore", "CP"]),
    "blob-not-json": ([(BLOBS, (BAD_UTF8,))], ["checkpoint", "restore", "CP"]),
    "blob-wrong-shape": (
        [(BLOBS, ('{"columns": 5, "rows": [[1]]}',))],
        ["checkpoint", "restore", "CP"],
    ),
    "checkpoint-create": ([CORRUPT_PROPOSAL, CORRUPT_RUNS], ["checkpoint", "create"]),
    "graph-status": ([CORRUPT_RUNS], ["graph", "status", "gr_0123"]),
    "checkpoint-rows": ([CORRUPT_CHECKPOINTS], ["checkpoint", "list"]),
    "checkpoint-rows-json": ([CORRUPT_CHECKPOINTS], ["checkpoint", "list", "--json"]),
    "proposal-rows": ([CORRUPT_PROPOSAL], ["proposals", "--status", "all"]),
    "proposal-rows-json": ([CORRUPT_PROPOSAL], ["proposals", "--json"]),
    "proposal-diff": ([CORRUPT_PROPOSAL], ["diff", PROPOSAL]),
    "proposal-accept": ([CORRUPT_PROPOSAL], ["accept", PROPOSAL]),
    "proposal-reject": ([CORRUPT_PROPOSAL], ["reject", PROPOSAL, "--feedback", ""]),
    "trailers": (
        [CORRUPT_PROPOSAL, ("UPDATE proposals SET status = 'accepted'", ())],
        ["trailers"],
    ),
    "blame": (
        [CORRUPT_PROPOSAL, ("UPDATE proposals SET status = 'accepted'", ())],
        ["blame", "pkg/service.py"],
    ),
    "event-rows": ([CORRUPT_EVENTS], ["logs"]),
    "event-rows-json": ([CORRUPT_EVENTS], ["logs", "--json"]),
    "run-rows": ([CORRUPT_RUNS], ["ps", "--all"]),
    "node-rows": (
        [("UPDATE nodes SET start_line = 'x', kind = 'galaxy', name = ?", (BAD_UTF8,))],
        ["nodes"],
    ),
    "ask-on-bad-rows": (
        [("UPDATE nodes SET start_line = 'x', kind = 'galaxy', name = ?", (BAD_UTF8,))],
        ["ask", "pkg/service.py::Service.helper", "hi"],
    ),
}


@pytest.mark.parametrize("case", CASES)
async def test_a_damaged_store_gets_an_answer_not_a_traceback(case, baseline, tmp_path):
    statements, args = CASES[case]
    root = damaged(baseline, tmp_path, *statements)
    with sqlite3.connect(root / ".remora" / "remora.db") as db:
        (checkpoint_id,) = db.execute("SELECT id FROM checkpoints").fetchone()
    db.close()
    args = [checkpoint_id if a == "CP" else a for a in args]
    code, out, err = await remora(root, *args, timeout=120)
    assert "Traceback" not in err, err
    assert one_line_each(err), err
    assert code in (0, 1), (code, err)
    if code == 1:  # the last line says why, in a few words
        said = err.splitlines()[-1]
        assert said.startswith("remora: ") and len(said) < 500, err
    if args[:2] == ["checkpoint", "restore"]:
        assert code == 1
        assert f"checkpoint {checkpoint_id} is damaged" in err
        assert "nothing was restored" in err
        # Nothing changed: the pending proposal is still pending.
        code, out, err = await remora(root, "proposals", "--json")
        assert code == 0, err
        assert [p["id"] for p in json.loads(out)] == [PROPOSAL]
    if "--json" in args and code == 0:
        lines = out.splitlines() if args[0] == "logs" else [out]
        assert all(json.loads(line) is not None for line in lines)


async def test_a_store_that_is_not_sqlite_and_graph_files_that_are_not_yaml(
    baseline, tmp_path
):
    root = tmp_path / "basic"
    shutil.copytree(baseline, root)
    (root / "bad.yaml").write_text("{{{{ : : ]")
    (root / "deep.yaml").write_text(NESTED)
    for name in ("bad.yaml", "deep.yaml", "missing.yaml"):
        code, _out, err = await remora(root, "graph", "run", str(root / name))
        assert "Traceback" not in err, err
        assert code == 2, err  # the FILE given is not a graph: a usage error
        assert one_line_each(err), err
    for name in ("remora.db-wal", "remora.db-shm"):
        (root / ".remora" / name).unlink(missing_ok=True)
    (root / ".remora" / "remora.db").write_bytes(b"not a database" * 100)
    for args in (["nodes"], ["logs"], ["checkpoint", "list"], ["proposals"]):
        code, _out, err = await remora(root, *args)
        assert "Traceback" not in err, err
        assert one_line_each(err), err
        assert code in (0, 1), (args, code, err)


async def test_through_a_server_a_damaged_row_is_answered_too(baseline, tmp_path):
    """The socket answers a request whose result JSON cannot carry (bytes in
    a damaged row) with an error, instead of leaving the command waiting.
    """
    root = tmp_path / "basic"
    shutil.copytree(baseline, root)
    async with session("neovim", root, {}):
        sock = root / ".remora" / "control.sock"
        await eventually(lambda: sock.exists() or sock.is_symlink())
        with sqlite3.connect(root / ".remora" / "remora.db") as db:
            db.execute(*CORRUPT_CHECKPOINTS)
        db.close()
        code, out, err = await remora(root, "checkpoint", "list")
        assert "via server" in err
        assert code == 1, (out, err)
        assert one_line_each(err), err
        [said] = [line for line in err.splitlines() if "JSON cannot carry" in line]
        assert "is the store damaged?" in said
        code, out, err = await remora(root, "nodes", "helper")  # still serving
        assert code == 0, err


async def test_through_the_language_server_a_damaged_row_is_answered_too(
    baseline, tmp_path
):
    """The editor's request gets an error saying why, not silence (pygls could
    not write bytes and never answered).
    """
    root = tmp_path / "basic"
    shutil.copytree(baseline, root)
    async with session("neovim", root, {}) as client:
        await eventually(lambda: (root / ".remora" / "control.sock").exists())
        with sqlite3.connect(root / ".remora" / "remora.db") as db:
            db.execute(*CORRUPT_CHECKPOINTS)
        db.close()
        with pytest.raises(JsonRpcException) as failure:
            await asyncio.wait_for(
                client.workspace_execute_command_async(
                    types.ExecuteCommandParams(
                        command="remora.checkpoint.list", arguments=[{}]
                    )
                ),
                30,
            )
        assert "JSON cannot carry" in str(failure.value)
        assert "is the store damaged?" in str(failure.value)
        found = await client.workspace_execute_command_async(  # still serving
            types.ExecuteCommandParams(
                command="remora.nodes.search", arguments=[{"query": "helper"}]
            )
        )
        assert found
