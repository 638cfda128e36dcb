"""Change sets and new files in the engine: stored, reloaded, planned, written.

Store round trips (a set's members and what was accepted survive a restart;
a proposal written before sets existed loads as what it was), which parts of
a set may be accepted alone, planning all-or-nothing against changed texts,
and the disk writer creating a new file without ever replacing one.
"""

from __future__ import annotations

import dataclasses

import pytest
from remora_core.front.disk_editor import DiskEditor
from remora_core.review.change_sets import (
    Stale,
    dependencies,
    new_file_member,
    plan_members,
    refuse_partial,
    refuse_rejecting,
    without,
)
from remora_core.review.proposals import Member, ProposalStore, text_hash
from remora_core.review.source_checks import ProposalError
from remora_core.store import Database

from tests.core.test_proposals import proposal

SERVICE = b"def order(name):\n    return name\n"


def a_set(n: int = 9) -> object:
    rewrite = Member(
        "pkg/service.py",
        "rewrite",
        "rm_order000",
        text_hash(SERVICE),
        0,
        len(SERVICE) - 1,
        SERVICE.decode()[:-1],
        "def order(name):\n    return convert(name)",
        "diff",
    )
    created = new_file_member(
        "pkg/currency.py", "def convert(x):\n    return x\n", False
    )
    members = (rewrite, created)
    return proposal(
        n,
        kind="change_set",
        file_path="pkg/service.py",
        reasoning="add currency",
        members=members,
        depends_on=dependencies(members),
    )


async def test_a_set_survives_a_restart_with_what_was_accepted(tmp_path):
    database = await Database.open(tmp_path)
    store = ProposalStore(database)
    made = a_set()
    await store.add(made)
    assert made.depends_on == ((0, 1),)  # order calls the new module's convert
    await store.decide(made.id, "accepted", members=(1,))
    await database.close()

    database = await Database.open(tmp_path)
    try:
        reopened = ProposalStore(database)
        await reopened.load()
        loaded = reopened.get(made.id)
        assert loaded is not None
        assert loaded.members == made.members
        assert loaded.depends_on == ((0, 1),)
        assert loaded.accepted_members == (1,)
        assert loaded.to_json()["summary"] == "add currency"
        # Listed under each of its files.
        assert reopened.list(path="pkg/currency.py") == [loaded]
    finally:
        await database.close()


async def test_a_proposal_stored_before_sets_loads_as_it_was(tmp_path):
    database = await Database.open(tmp_path)
    old = proposal(1)
    columns = (
        "id, node_id, run_id, kind, file_path, base_version, base_hash, "
        "start_byte, end_byte, old_source, new_source, diff, reasoning, status, "
        "feedback, created_at, decided_at"
    )
    row = dataclasses.astuple(old)[:17]

    def work(db) -> None:  # the columns a store had before migration 8 and 11
        db.execute(
            f"INSERT INTO proposals ({columns}) VALUES ({', '.join('?' * 17)})", row
        )

    await database.transaction(work, "an old proposal")
    try:
        store = ProposalStore(database)
        await store.load()
        assert store.get(old.id) == old
        assert store.get(old.id).kind == "rewrite"
    finally:
        await database.close()


def test_a_part_of_a_set_needs_what_it_depends_on():
    made = a_set()
    assert refuse_partial(made, [1]) == (1,)  # the new module alone is fine
    # Counted from 1, as the editors show members.
    with pytest.raises(
        ValueError,
        match=r"member 1 \(rewrite order\) needs member 2 \(pkg/currency\.py\)",
    ):
        refuse_partial(made, [0])
    with pytest.raises(ValueError, match=r"members 1 to 2; there is no member 6"):
        refuse_partial(made, [5])
    with pytest.raises(ValueError, match="only a change set"):
        refuse_partial(proposal(2), [0])


def test_a_set_is_planned_all_or_nothing():
    made = a_set()
    texts: dict[str, bytes] = {"pkg/service.py": SERVICE}
    files = plan_members(made, None, texts.get, lambda _path: 4)
    assert [(f.path, f.create, f.version) for f in files] == [
        ("pkg/service.py", False, 4),
        ("pkg/currency.py", True, None),
    ]
    assert files[1].after() == b"def convert(x):\n    return x\n"
    # One file changed: nothing is planned, not even the other member.
    texts["pkg/service.py"] = SERVICE + b"# edited\n"
    with pytest.raises(Stale, match=r"pkg/service\.py changed"):
        plan_members(made, [1], texts.get, lambda _path: 4)
    # An editor accepting through a code action creates the file empty before
    # its text arrives (Neovim's buffer says "\n"): not a reason to be stale.
    texts["pkg/service.py"] = SERVICE
    for empty in (b"", b"\n"):
        texts["pkg/currency.py"] = empty
        assert len(plan_members(made, None, texts.get, lambda _path: 4)) == 2
    # The new file appeared meanwhile, with text of its own.
    texts["pkg/currency.py"] = b"x = 1\n"
    with pytest.raises(Stale, match=r"pkg/currency\.py exists now"):
        plan_members(made, None, texts.get, lambda _path: 4)


def test_an_existing_file_is_not_proposed_as_new():
    with pytest.raises(ProposalError, match="exists already; to change it"):
        new_file_member("pkg/service.py", "x = 1\n", True)
    with pytest.raises(ProposalError, match="empty"):
        new_file_member("pkg/empty.py", "  \n", False)


async def test_the_disk_writer_creates_a_file_and_never_replaces_one(tmp_path):
    made = a_set()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "service.py").write_bytes(SERVICE)
    files = plan_members(
        made,
        None,
        lambda p: (tmp_path / p).read_bytes() if (tmp_path / p).exists() else None,
        lambda _p: None,
    )
    writer = DiskEditor(tmp_path)
    assert (await writer.apply(files, "accept")).applied
    assert (tmp_path / "pkg" / "currency.py").read_text() == (
        "def convert(x):\n    return x\n"
    )
    assert b"convert(name)" in (tmp_path / "pkg" / "service.py").read_bytes()
    # Planned again while the file exists: refused, nothing overwritten.
    (tmp_path / "pkg" / "service.py").write_bytes(SERVICE)
    (tmp_path / "pkg" / "currency.py").write_text("mine = 1\n")
    refused = await writer.apply(files, "accept")
    assert not refused.applied and "pkg/currency.py exists now" in refused.reason
    assert (tmp_path / "pkg" / "currency.py").read_text() == "mine = 1\n"
    assert (tmp_path / "pkg" / "service.py").read_bytes() == SERVICE


def test_a_new_python_file_must_parse():
    with pytest.raises(ProposalError, match=r"does not parse \(near line 2\)"):
        new_file_member("pkg/broken.py", "x = 1\ndef f(:\n    pass\n", False)
    # Any text for other files; a newline ends the last line.
    assert new_file_member("docs/notes.md", "# (\n", False).new_source == "# (\n"
    assert new_file_member("pkg/ok.py", "x = 1", False).new_source == "x = 1\n"


def test_rejecting_a_member_another_needs_is_refused_naming_it():
    made = a_set()
    with pytest.raises(
        ValueError,
        match=r"member 2 \(pkg/currency\.py\) is needed by member 1 \(rewrite "
        r"order\): reject members 1 and 2 together, or the whole set",
    ):
        refuse_rejecting(made, [1])
    assert refuse_rejecting(made, [0]) == (0,)  # what it needed stays, unused
    assert refuse_rejecting(made, [1, 0]) == (0, 1)
    with pytest.raises(ValueError, match="no member 3"):
        refuse_rejecting(made, [2])


async def test_a_set_without_a_rejected_member_stays_pending_across_a_restart(
    tmp_path,
):
    database = await Database.open(tmp_path)
    store = ProposalStore(database)
    made = a_set()
    await store.add(made)
    texts = {"pkg/service.py": SERVICE}
    rest = without(made, [0], texts.get, "pkg/service.py")
    assert [m.path for m in rest.members] == ["pkg/currency.py"]
    assert rest.depends_on == () and rest.rejected_members == made.members[:1]
    assert rest.file_path == "pkg/currency.py"
    assert rest.anchor_path == "pkg/service.py"  # still shown on the asker
    assert "+++ b/pkg/currency.py" in rest.diff and "service.py" not in rest.diff
    await store.replace_members(rest)
    await database.close()

    database = await Database.open(tmp_path)
    try:
        reopened = ProposalStore(database)
        await reopened.load()
        loaded = reopened.get(made.id)
        assert loaded == rest and loaded.status == "pending"
        assert [p.id for p in reopened.pending(path="pkg/currency.py")] == [made.id]
    finally:
        await database.close()
