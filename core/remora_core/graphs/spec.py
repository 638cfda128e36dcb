"""Batch graphs as data: the YAML/inline format of DESIGN §10, validated.

A graph names steps; each step runs one bundle over the nodes its ``targets``
select (``path`` glob over the project path — ``**`` spans folders —, ``kind``,
``name`` glob over the name or qualified name, explicit ``ids``), after the
steps it lists in ``after``. :func:`parse_graph` turns a YAML text or a JSON
object into a :class:`GraphSpec`; :func:`plan_graph` checks it against the
project (bundles that exist, targets that match something) and says, per node,
which steps run in which order. Every problem is reported at once, one readable
line each (:class:`GraphInvalid`), before anything runs.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from remora_core import globs
from remora_core.bounded_yaml import SHOWN_CHARS, load_yaml, shown
from remora_core.model import NodeKind

if TYPE_CHECKING:
    from collections.abc import Iterable

    from remora_core.model import CodeNode

log = logging.getLogger(__name__)

POLICIES = ("stop_graph", "skip_downstream", "continue")
MAX_GRAPH_CHARS = 256 * 1024
"""The largest graph text parsed (a real graph is a few hundred bytes)."""
GRAPH_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")


class GraphInvalid(ValueError):
    """A graph that cannot run; ``problems`` holds one readable line each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("the graph cannot run: " + "; ".join(problems))


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Targets(_Strict):
    """Which nodes a step runs on: every given field must match."""

    path: str | None = None
    """A glob over the project path (``inventory/**/*.py``)."""
    kind: tuple[NodeKind, ...] | None = None
    name: str | None = None
    """A glob over the node's name or qualified name."""
    ids: tuple[str, ...] | None = None

    @field_validator("kind", mode="before")
    @classmethod
    def _one_kind(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("path", "name")
    @classmethod
    def _usable_glob(cls, value: str | None) -> str | None:
        return value if value is None else globs.check(value)

    def matches(self, node: CodeNode) -> bool:
        """Whether ``node`` (one of ``ids`` when given: the caller looks
        those up) is one of the targets.
        """
        if self.kind is not None and node.kind not in self.kind:
            return False
        if self.path is not None and not globs.path_matches(node.file_path, self.path):
            return False
        return self.name is None or any(
            globs.name_matches(n, self.name) for n in (node.name, node.qualified_name)
        )


class Step(_Strict):
    """One bundle run once per target node."""

    id: str = Field(pattern=r"^[A-Za-z0-9_-]{1,40}$")
    bundle: str
    targets: Targets
    after: tuple[str, ...] = ()
    instruction: str | None = Field(default=None, max_length=4000)
    retries: int = Field(default=0, ge=0, le=5)
    """Further attempts per node after a failed run."""


class GraphSpec(_Strict):
    """A whole graph (DESIGN §10)."""

    name: str = Field(pattern=GRAPH_NAME.pattern)
    max_concurrency: int = Field(default=2, ge=1, le=64)
    error_policy: Literal["stop_graph", "skip_downstream", "continue"] = (
        "skip_downstream"
    )
    steps: tuple[Step, ...] = Field(min_length=1, max_length=50)


@dataclass(frozen=True)
class GraphPlan:
    """What a graph run does: per node, its steps in dependency order."""

    spec: GraphSpec
    order: tuple[str, ...]
    """Every step id, dependencies first."""
    nodes: dict[str, tuple[Step, ...]]
    """Node id → the steps that run on it, in order."""

    @property
    def total(self) -> int:
        """Steps × nodes: the N of the progress "k/N"."""
        return sum(len(steps) for steps in self.nodes.values())

    def targets(self) -> dict[str, tuple[str, ...]]:
        """Step id → the nodes it runs on (every step of ``order``)."""
        found: dict[str, list[str]] = {step: [] for step in self.order}
        for node, steps in self.nodes.items():
            for step in steps:
                found[step.id].append(node)
        return {step: tuple(nodes) for step, nodes in found.items()}


def _describe(error: ValidationError) -> list[str]:
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "graph"
        problem = item["msg"]
        if item["type"] == "literal_error" and item["loc"][-1] == "error_policy":
            problem = (
                f"must be one of {', '.join(POLICIES)}, not {shown(item['input'])}"
            )
        elif item["type"] == "extra_forbidden":
            problem = "is not a graph field"
        elif item["type"] == "too_short" and "ctx" in item:
            problem = f"needs at least {item['ctx']['min_length']} entry"
        # A field name or message may quote the file: a few hundred chars.
        problems.append(f"{where[:SHOWN_CHARS]}: {problem[:SHOWN_CHARS]}")
    return problems


def parse_graph(source: str | dict[str, Any]) -> GraphSpec:
    """A graph from YAML text or a JSON object; GraphInvalid if malformed."""
    data: Any = source
    if isinstance(source, str):
        try:
            data = load_yaml(source, max_chars=MAX_GRAPH_CHARS)
        except yaml.YAMLError as error:
            raise GraphInvalid([f"not valid YAML: {error}"]) from None
    if not isinstance(data, dict):
        raise GraphInvalid(["a graph is an object with name and steps"])
    try:
        spec = GraphSpec.model_validate(data)
    except ValidationError as error:
        raise GraphInvalid(_describe(error)) from None
    problems = _structure_problems(spec)
    if problems:
        raise GraphInvalid(problems)
    return spec


def _structure_problems(spec: GraphSpec) -> list[str]:
    ids = [step.id for step in spec.steps]
    problems = [
        f"step id {i!r} is used twice" for i in sorted(set(ids)) if ids.count(i) > 1
    ]
    for step in spec.steps:
        for before in step.after:
            if before not in ids:
                problems.append(f"step {step.id!r} comes after unknown step {before!r}")
    if not problems:
        cycle = _cycle(spec)
        if cycle:
            problems.append("the steps' after lists form a cycle: " + " → ".join(cycle))
    return problems


def _cycle(spec: GraphSpec) -> list[str]:
    """A cycle among ``after`` links (as a path), or [] if there is none."""
    after = {step.id: step.after for step in spec.steps}
    done: set[str] = set()

    def visit(step: str, path: list[str]) -> list[str]:
        if step in path:
            return [*path[path.index(step) :], step]
        if step in done:
            return []
        for before in after[step]:
            if found := visit(before, [*path, step]):
                return found
        done.add(step)
        return []

    for step in after:
        if found := visit(step, []):
            return found
    return []


def step_order(spec: GraphSpec) -> list[str]:
    """Step ids with every step after those it comes after (declaration order
    otherwise); the spec has no cycle.
    """
    done: list[str] = []
    remaining = list(spec.steps)
    while remaining:
        for step in remaining:
            if all(before in done for before in step.after):
                done.append(step.id)
                remaining.remove(step)
                break
    return done


def plan_graph(
    spec: GraphSpec, nodes: Iterable[CodeNode], bundles: Iterable[str]
) -> GraphPlan:
    """Check ``spec`` against the project; GraphInvalid lists every problem."""
    known = set(bundles)
    active = {node.id: node for node in nodes}
    problems: list[str] = []
    by_step: dict[str, list[str]] = {}
    for step in spec.steps:
        if step.bundle not in known:
            problems.append(
                f"step {step.id!r}: no bundle named {step.bundle!r} "
                f"(known: {', '.join(sorted(known))})"
            )
        ids = step.targets.ids
        # Explicit ids are looked up, not searched for among every node.
        candidates = (
            [active[i] for i in dict.fromkeys(ids) if i in active]
            if ids is not None
            else active.values()
        )
        matched = [node.id for node in candidates if step.targets.matches(node)]
        if not matched:
            problems.append(f"step {step.id!r}: its targets match no node")
        by_step[step.id] = matched
    if problems:
        raise GraphInvalid(problems)
    order = step_order(spec)
    steps = {step.id: step for step in spec.steps}
    per_node: dict[str, list[Step]] = {}
    for step_id in order:
        for node_id in by_step[step_id]:
            per_node.setdefault(node_id, []).append(steps[step_id])
    return GraphPlan(
        spec, tuple(order), {node: tuple(s) for node, s in per_node.items()}
    )


def resumed_plan(spec: GraphSpec, targets: dict[str, Any]) -> GraphPlan:
    """The plan of a run going on: ``spec``'s steps on the nodes the run
    recorded for each (``graph_started.targets``), not matched again.
    """
    order = step_order(spec)
    steps = {step.id: step for step in spec.steps}
    per_node: dict[str, list[Step]] = {}
    for step_id in order:
        for node_id in targets.get(step_id, ()):
            per_node.setdefault(node_id, []).append(steps[step_id])
    return GraphPlan(
        spec, tuple(order), {node: tuple(s) for node, s in per_node.items()}
    )
