"""Graph specs and attribution, engine tier (no server, no model)."""

from __future__ import annotations

import subprocess

import pytest
from remora_core.globs import path_matches
from remora_core.graphs.spec import GraphInvalid, parse_graph, step_order
from remora_core.history.attribution import (
    Accepted,
    attribute,
    attribution_json,
    line_owners,
    trailers,
)
from remora_core.store.database import Database

from tests.gitrepo import commit_all

YAML = """
name: document-pricing
max_concurrency: 2
error_policy: skip_downstream
steps:
  - id: docs
    bundle: docstring
    after: [hints]
    targets: {path: "inventory/**/*.py", kind: [function, method], name: "*"}
    retries: 1
  - id: hints
    bundle: type_hints
    targets: {path: "inventory/**/*.py", kind: function}
"""


def test_the_yaml_of_the_design_parses_and_orders_steps_by_after():
    spec = parse_graph(YAML)
    assert spec.steps[0].retries == 1
    assert [k.value for k in spec.steps[1].targets.kind or ()] == ["function"]
    assert step_order(spec) == ["hints", "docs"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"error_policy": "maybe"}, "error_policy: must be one of stop_graph"),
        ({"max_concurrency": 0}, "max_concurrency: Input should be greater"),
        ({"colour": "red"}, "colour: is not a graph field"),
        ({"steps": []}, "steps: needs at least 1 entry"),
    ],
)
def test_each_problem_is_one_readable_line(change, message):
    data = {"name": "g", "steps": [{"id": "a", "bundle": "b", "targets": {}}]}
    with pytest.raises(GraphInvalid) as problem:
        parse_graph({**data, **change})
    assert any(p.startswith(message) for p in problem.value.problems), problem.value


def test_unknown_after_and_duplicate_ids_are_all_reported():
    steps = [
        {"id": "a", "bundle": "b", "targets": {}, "after": ["zz"]},
        {"id": "a", "bundle": "b", "targets": {}},
    ]
    with pytest.raises(GraphInvalid) as problem:
        parse_graph({"name": "g", "steps": steps})
    assert problem.value.problems == [
        "step id 'a' is used twice",
        "step 'a' comes after unknown step 'zz'",
    ]


def test_path_globs_span_folders_only_with_two_stars():
    assert path_matches("inventory/a/b/c.py", "inventory/**/*.py")
    assert path_matches("inventory/c.py", "inventory/**/*.py")
    assert not path_matches("inventory/a/c.py", "inventory/*.py")


def accepted(pid: str, old: str, new: str, when: float) -> Accepted:
    return Accepted(pid, f"rm_{pid[-8:]}", "f.py", old, new, when)


def test_attribution_keeps_the_lines_still_there_and_the_latest_writer():
    first = accepted(
        "pr_000000000001", "def f(x):\n    return x", "def f(x: int):\n    return x", 1
    )
    second = accepted(
        "pr_000000000002",
        "def f(x: int):\n    return x",
        'def f(x: int):\n    """Doc."""\n    return x',
        2,
    )
    text = 'a = 1\ndef f(x: int):\n    """Doc."""\n    return x\n'
    found = attribute(text, [first, second])
    assert [(a.start_line, a.end_line, a.proposal_id) for a in found] == [
        (1, 1, "pr_000000000001"),
        (2, 2, "pr_000000000002"),
    ]
    edited = text.replace("x: int", "x: float")
    assert [a.proposal_id for a in attribute(edited, [first, second])] == [
        "pr_000000000002"
    ]


# ---- attribution from the store: every accepted proposal counts -----------------


def _insert_accepted(db, rows) -> None:
    db.executemany(
        "INSERT INTO proposals (id, node_id, kind, file_path, base_hash, start_byte, "
        "end_byte, old_source, new_source, diff, status, created_at, decided_at) "
        "VALUES (?, ?, 'rewrite', ?, '', 0, 0, ?, ?, '', 'accepted', ?, ?)",
        rows,
    )


async def test_an_old_accepted_line_is_attributed_behind_a_thousand_newer_ones(
    tmp_path,
):
    """A line written long ago still shows, however many proposals of the same
    file were accepted after it (no "newest 500" that drops it silently).
    """
    database = await Database.open(tmp_path)
    try:
        rows = [
            (
                "pr_old000000001",
                "rm_oldoldol",
                "f.py",
                "def f():\n    pass",
                'def f():\n    """Written first."""',
                1.0,
                1.0,
            )
        ]
        # 1,200 later proposals of the same file rewrite g again and again.
        for i in range(1, 1201):
            rows.append(
                (
                    f"pr_{i:012x}",
                    "rm_gggggggg",
                    "f.py",
                    f"def g():\n    return {i - 1}",
                    f"def g():\n    return {i}",
                    1.0 + i,
                    1.0 + i,
                )
            )
        await database.transaction(lambda db: _insert_accepted(db, rows), "test")
        text = 'def f():\n    """Written first."""\n\n\ndef g():\n    return 1200\n'
        found = await attribution_json(database, "f.py", text.encode())
        assert [(b["range"]["start"]["line"], b["proposal_id"]) for b in found] == [
            (1, "pr_old000000001"),
            (5, f"pr_{1200:012x}"),
        ]
        # A hand edit of g's line: it is nobody's; an older g proposal whose
        # line equals it again takes it back.
        found = await attribution_json(
            database, "f.py", text.replace("1200", "7").encode()
        )
        assert [b["proposal_id"] for b in found] == ["pr_old000000001", f"pr_{7:012x}"]
    finally:
        await database.close()


def test_newest_first_claims_give_what_later_ones_win_gives():
    old = accepted("pr_000000000001", "def f():\n    pass", "def f():\n    x = 1", 1)
    new = accepted("pr_000000000002", "def f():\n    x = 1", "def f():\n    x = 1", 2)
    same = accepted(
        "pr_000000000003",
        "def f():\n    x = 1\n    y = 0",
        "def f():\n    x = 1\n    y = 2",
        3,
    )
    text = "def f():\n    x = 1\n    y = 2\n"
    # new wrote nothing (same source); same's x line is kept from its old
    # source, so x = 1 is still old's; y = 2 is same's.
    owners = line_owners(text, [old, new, same])
    assert {n: p.proposal_id for n, p in owners.items()} == {
        1: "pr_000000000001",
        2: "pr_000000000003",
    }


async def test_trailers_in_a_project_below_the_repository_top(tmp_path):
    """The project is a folder of a bigger repository: what HEAD holds is read
    at the project's paths, so committed lines give no trailer.
    """
    project = tmp_path / "repo" / "service"
    project.mkdir(parents=True)
    source = project / "f.py"
    source.write_text('def f():\n    """Written by an agent."""\n')
    commit_all(tmp_path / "repo", "i")
    git = ["git", "-C", str(tmp_path / "repo")]
    database = await Database.open(project)
    try:
        row = (
            "pr_000000000001",
            "rm_ffffffff",
            "f.py",
            "def f():\n    pass",
            'def f():\n    """Written by an agent."""',
            1.0,
            1.0,
        )
        await database.transaction(lambda db: _insert_accepted(db, [row]), "test")

        def read(path: str) -> bytes | None:
            return (project / path).read_bytes()

        assert await trailers(project, database, read) == []  # committed
        source.write_text('"""A module."""\n\n\n' + source.read_text())
        assert await trailers(project, database, read) == []  # still committed
        source.write_text('def f():\n    """Written by an agent."""\n    return 1\n')
        subprocess.run([*git, "rm", "-q", "--cached", "service/f.py"], check=True)
        subprocess.run(
            [*git, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "r"],
            check=True,
        )
        # Untracked now: its agent lines are not in any commit.
        assert await trailers(project, database, read) == [
            "Remora-Agent: rm_ffffffff (pr_000000000001)"
        ]
    finally:
        await database.close()
