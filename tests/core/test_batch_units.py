"""Graph specs and attribution, engine tier (no server, no model)."""

from __future__ import annotations

import pytest
from remora_core.attribution import Accepted, attribute
from remora_core.graphs.spec import GraphInvalid, parse_graph, path_glob, step_order

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
    assert [k.value for k in spec.steps[1].targets.kind] == ["function"]
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
    assert path_glob("inventory/**/*.py").match("inventory/a/b/c.py")
    assert path_glob("inventory/**/*.py").match("inventory/c.py")
    assert not path_glob("inventory/*.py").match("inventory/a/c.py")


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
