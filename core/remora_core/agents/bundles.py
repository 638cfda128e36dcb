"""Bundles: what kind of agent a node gets (``bundle.yaml``, DESIGN §8).

A bundle is a directory holding ``bundle.yaml`` (name, description, model
override, custom instructions, tool list, limits, grammar) and optionally
``tools/*.pym`` sandboxed tool scripts. The defaults ship in the ``bundles/``
directory next to this module; a project may add its own, or override a
shipped one of the same name, in ``<root>/.remora/bundles/<name>/``. The
``bundles`` setting maps node kinds to bundle names; every kind not mapped gets
``code_agent``.

Decisions:

* ``tools`` omitted means every core tool plus every ``.pym`` script of the
  bundle; a listed name must be a core tool or a script's stem.
* ``guard`` (``docstring``, ``type_hints``, ``rename`` or a list of them)
  binds every proposal of the bundle's agents: anything else that changes is
  refused (``guards.py``). Without one, the request's words choose
  (``intent.py``).
* ``react_to_own_edits`` is off by default: a person typing in a node's code is
  only noted in the agent's memory, so typing never burns model time.
* A broken project bundle is reported once per change of its files and skipped:
  the shipped bundle of the same name is used, or else ``code_agent``.
* Project bundles are the repository's code (their ``.pym`` tools run, their
  ``model.base_url`` receives requests): they are loaded only in a trusted
  project (``trust.py``); otherwise only the shipped bundles exist.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from remora_core.bounded_yaml import load_yaml
from remora_core.model import CodeNode, NodeKind

log = logging.getLogger(__name__)

CORE_TOOLS: tuple[str, ...] = (
    "rewrite_self",
    "propose_new_node",
    "create_file",
    "propose_changes",
    "read_node",
    "get_my_callers",
    "get_my_callees",
    "message_node",
    "ask_parent",
    "send_message",
    "subscribe",
    "unsubscribe",
    "kv_get",
    "kv_set",
    "ask_user",
    "search_nodes",
    "find_references",
)
"""Every core tool an agent can be given (DESIGN §8, §15)."""

DEFAULT_BUNDLE = "code_agent"
"""The bundle of every node kind the ``bundles`` setting does not map."""

SHIPPED_DIR = Path(__file__).with_name("bundles")
"""Where the shipped default bundles live (package data)."""

_FILE = "bundle.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class BundleModel(_Strict):
    """Overrides of the project's model settings for one bundle's agents."""

    name: str | None = None
    base_url: str | None = None
    protocol: Literal["tools", "fenced"] | None = None
    extra_body: dict[str, Any] = Field(default_factory=dict)
    temperature: float | None = Field(default=None, ge=0)


class BundleLimits(_Strict):
    """Per-turn limits; ``None`` uses the project's settings."""

    max_turns: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)
    timeout_s: float | None = Field(default=None, gt=0)


class Bundle(_Strict):
    """One loaded bundle: the fields of its ``bundle.yaml`` and where it lives."""

    name: str
    description: str = ""
    model: BundleModel | None = None
    system_prompt: str = ""
    """Custom instructions appended to the node's system prompt."""
    tools: tuple[str, ...] | None = None
    """Tool names as written; ``None`` (omitted) means all of them."""
    limits: BundleLimits = Field(default_factory=BundleLimits)
    grammar: str | None = None
    """A GBNF grammar for llama.cpp-style servers; used with ``fenced`` only."""
    react_to_own_edits: bool = False
    """Whether a person editing the node's own code runs the model."""
    guard: tuple[Literal["docstring", "type_hints", "rename"], ...] = ()
    """What alone its proposals may change (``guards.py``); one name or a
    list. Empty: the guard the request implies (``intent.py``)."""
    directory: Path | None = None
    """The bundle's directory, ``None`` for one built in code."""
    pym_tools: tuple[Path, ...] = ()
    """The ``.pym`` scripts found in ``<directory>/tools/``, sorted."""

    @field_validator("guard", mode="before")
    @classmethod
    def _one_or_more(cls, value: object) -> object:
        return (value,) if isinstance(value, str) else value

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The tools this bundle's agents get: core tool names and script stems."""
        if self.tools is not None:
            return self.tools
        return CORE_TOOLS + tuple(path.stem for path in self.pym_tools)

    @property
    def active_pym_tools(self) -> tuple[Path, ...]:
        """The scripts among :attr:`tool_names`."""
        wanted = set(self.tool_names)
        return tuple(path for path in self.pym_tools if path.stem in wanted)


class BundleError(ValueError):
    """A ``bundle.yaml`` that cannot be used; the message names file and problem."""


def load_bundle(directory: Path, shown: str | None = None) -> Bundle:
    """The bundle in ``directory``, or :class:`BundleError` saying what is wrong.

    ``shown`` is how messages name the ``bundle.yaml`` (default: its full path).
    """
    path = shown or str(directory / _FILE)
    try:
        data = load_yaml((directory / _FILE).read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise BundleError(f"{path}: invalid YAML: {_yaml_problem(error)}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise BundleError(f"{path}: cannot read: {error}") from None
    if data is None:  # an empty file: every field at its default
        data = {}
    if not isinstance(data, dict):
        raise BundleError(f"{path}: the top level must be a mapping of fields")
    tools_dir = directory / "tools"
    scripts = tuple(sorted(tools_dir.glob("*.pym"))) if tools_dir.is_dir() else ()
    data.setdefault("name", directory.name)
    try:
        bundle = Bundle.model_validate(
            {**data, "directory": directory, "pym_tools": scripts}
        )
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in item['loc']) or '(top level)'}: {item['msg']}"
            for item in error.errors()
        )
        raise BundleError(f"{path}: {problems}") from None
    if bundle.name != directory.name:
        raise BundleError(
            f"{path}: name {bundle.name!r} differs from its directory "
            f"{directory.name!r}; bundles are named by their directory"
        )
    _check_tools(path, bundle)
    return bundle


def _yaml_problem(error: yaml.YAMLError) -> str:
    """A YAML error as "line L, column C: problem"."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error)
    if mark is None:
        return problem
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}"


def _check_tools(path: str, bundle: Bundle) -> None:
    """Refuse unknown tool names and scripts that cannot be tools."""
    stems = [script.stem for script in bundle.pym_tools]
    for stem in stems:
        if not stem.isidentifier():
            raise BundleError(f"{path}: tools/{stem}.pym: not a valid tool name")
        if stem in CORE_TOOLS:
            raise BundleError(
                f"{path}: tools/{stem}.pym has the name of a core tool; rename it"
            )
    unknown = [name for name in bundle.tools or () if name not in (*CORE_TOOLS, *stems)]
    if unknown:
        raise BundleError(
            f"{path}: unknown tool(s) {', '.join(map(repr, unknown))}; known: "
            f"{', '.join(CORE_TOOLS)}"
            + (f", and scripts {', '.join(stems)}" if stems else "")
        )


def _signature(directory: Path) -> tuple[int, int, int] | None:
    """What changes when a bundle is edited: its yaml's mtime/size, tools' mtime."""
    try:
        stat = (directory / _FILE).stat()
    except OSError:
        return None
    try:
        tools = (directory / "tools").stat().st_mtime_ns
    except OSError:
        tools = 0
    return stat.st_mtime_ns, stat.st_size, tools


@cache
def _load_shipped() -> dict[str, Bundle]:
    """Every shipped bundle; a broken one is a bug in Remora, logged and skipped.

    Read once per process, when a bundle is first asked for: they are part of
    the installed package, and parsing their YAML cost every project's start.
    """
    shipped: dict[str, Bundle] = {}
    for directory in sorted(SHIPPED_DIR.iterdir()):
        if (directory / _FILE).is_file():
            try:
                shipped[directory.name] = load_bundle(directory)
            except BundleError:
                log.exception("shipped bundle %s is broken", directory.name)
    if DEFAULT_BUNDLE not in shipped:  # never without a default, even if damaged
        shipped[DEFAULT_BUNDLE] = Bundle(name=DEFAULT_BUNDLE)
    return shipped


class BundleRegistry:
    """The bundles of one project: shipped defaults, project overrides, mapping.

    ``mapping`` is the ``bundles`` setting (node kind → bundle name). Project
    bundles are looked up on every call with one ``stat`` and reloaded when their
    files change; without ``trusted`` they are not loaded at all. Problems go to
    ``notify`` once per change (and to the log).
    """

    def __init__(
        self,
        root: Path | None,
        mapping: dict[str, str],
        notify: Callable[[str], None] | None = None,
        *,
        trusted: bool = False,
    ) -> None:
        directory = root / ".remora" / "bundles" if root is not None else None
        self._project_dir = directory if trusted else None
        self._untrusted_dir = None if trusted else directory
        """The repository's bundles, not loaded (to say so when one is asked for)."""
        self._notify = notify
        self._cache: dict[str, tuple[tuple[int, int, int], Bundle | None]] = {}
        self._reported: dict[object, str] = {}
        kinds = {kind.value for kind in NodeKind}
        self._mapping = {k: v for k, v in mapping.items() if k in kinds}
        wrong = sorted(set(mapping) - kinds)
        if wrong:
            self._report(
                ("mapping",),
                f"Remora: the bundles setting names unknown node kind(s) "
                f"{', '.join(map(repr, wrong))}; kinds are {', '.join(sorted(kinds))}",
            )

    @property
    def _shipped(self) -> dict[str, Bundle]:
        return _load_shipped()

    def names(self) -> list[str]:
        """Every bundle name available in this project, sorted."""
        names = set(self._shipped)
        if self._project_dir is not None and self._project_dir.is_dir():
            names.update(
                d.name for d in self._project_dir.iterdir() if (d / _FILE).is_file()
            )
        return sorted(names)

    def for_node(self, node: CodeNode) -> Bundle:
        """The bundle of ``node``'s agent, chosen by its kind."""
        return self.for_kind(node.kind.value)

    def for_kind(self, kind: str) -> Bundle:
        """The bundle of the agents of nodes of ``kind`` (``function``…)."""
        return self.get(self._mapping.get(kind, DEFAULT_BUNDLE))

    def get(self, name: str) -> Bundle:
        """The bundle called ``name``; an unknown name gives ``code_agent``."""
        found = self._project(name) or self._shipped.get(name)
        if found is not None:
            return found
        if name in self._cache:  # the project's bundle exists but is broken
            return self._project(DEFAULT_BUNDLE) or self._shipped[DEFAULT_BUNDLE]
        untrusted = self._untrusted_dir
        if untrusted is not None and (untrusted / name / _FILE).is_file():
            self._report(
                ("untrusted", name),
                f"Remora: bundle {name!r} is the repository's and the project is "
                f"not trusted; using {DEFAULT_BUNDLE!r}",
            )
            return self._shipped[DEFAULT_BUNDLE]
        self._report(
            ("unknown", name),
            f"Remora: no bundle named {name!r} (known: {', '.join(self.names())}); "
            f"using {DEFAULT_BUNDLE!r}",
        )
        return self._project(DEFAULT_BUNDLE) or self._shipped[DEFAULT_BUNDLE]

    def _project(self, name: str) -> Bundle | None:
        """The project's bundle ``name`` if it exists and loads, reloaded on change."""
        if self._project_dir is None or not name or "/" in name or "\\" in name:
            return None
        directory = self._project_dir / name
        signature = _signature(directory)
        if signature is None:
            self._cache.pop(name, None)
            return None
        cached = self._cache.get(name)
        if cached is not None and cached[0] == signature:
            return cached[1]
        shown = f".remora/bundles/{name}/{_FILE}"
        try:
            bundle: Bundle | None = load_bundle(directory, shown)
            log.info("loaded project bundle %s", name)
        except BundleError as error:
            bundle = None
            instead = (
                f"the shipped {name!r}"
                if name in self._shipped
                else repr(DEFAULT_BUNDLE)
            )
            self._report(
                ("broken", name, signature),
                f"Remora: bundle {name!r} ignored: {error}; using {instead} instead",
            )
        self._cache[name] = (signature, bundle)
        return bundle

    def _report(self, key: object, message: str) -> None:
        """Log and notify ``message`` unless ``key`` was already reported."""
        if key in self._reported:
            return
        self._reported[key] = message
        log.warning("%s", message)
        if self._notify is not None:
            try:
                self._notify(message)
            except Exception:
                log.exception("notify failed")
