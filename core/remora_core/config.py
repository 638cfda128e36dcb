"""Remora's settings: one frozen pydantic model, loaded from layered sources.

Sources, later wins (DESIGN §12): built-in defaults < the person's settings file
(``user_files.py``) < ``[tool.remora]`` in the project's ``pyproject.toml`` <
``remora.yaml`` in the project root < the editor's ``initializationOptions`` /
``workspace/configuration`` section ``remora``. Sections merge key by key, so
``remora.yaml`` can set ``swarm.max_depth`` without repeating the rest of
``swarm``.

Who set what matters (``trust.py``): the settings file and the editor are the
person's, ``pyproject.toml`` and ``remora.yaml`` the repository's.
:func:`load_settings` keeps them apart: the repository never names the key's
environment variable (``model.api_key_env`` there is dropped with one message),
its ``model`` section applies only to a trusted project, and the person's own
model settings are kept to know where their key may go.

Keys a client puts in section ``remora`` for itself (:data:`CLIENT_KEYS`: the
VS Code extension's ``server``, ``trace``, ...) are not settings: they are
dropped silently (debug log), never reported as unknown.

Bad configuration never stops the server: every invalid or unknown key is
reported in one message and replaced by its default, and the rest is kept.
"""

from __future__ import annotations

import copy
import logging
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

import yaml
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)

from remora_core.bounded_yaml import SHOWN_CHARS, load_yaml
from remora_core.globs import MAX_GLOB_CHARS
from remora_core.user_files import read_user_config, user_config_path

log = logging.getLogger(__name__)


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


MAX_ENDPOINTS = 32
"""Endpoints one model may list (``model.endpoints``)."""


def _usable_url(url: str) -> str:
    """``url`` if requests can go there (``http(s)://host[:port]/...``)."""
    try:
        parts = urlsplit(url.strip())
        usable = parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
        _port = parts.port  # a bad port raises
    except ValueError:
        usable = False
    if not usable:
        raise ValueError(
            f"{url[:SHOWN_CHARS]!r} is not an http(s) URL; give one like "
            "http://127.0.0.1:8000/v1"
        )
    return url.strip()


class EndpointSettings(_Section):
    """One server of the model (``model.endpoints``)."""

    base_url: str
    """Its OpenAI-compatible URL, e.g. ``http://gpu-1:8000/v1``."""
    max_concurrency: int | None = Field(default=None, ge=1, le=4096)
    """Requests it may answer at once (its parallel slots); ``None``:
    ``model.max_concurrency``."""

    _url = field_validator("base_url")(_usable_url)


class ModelSettings(_Section):
    """Which model the agents talk to."""

    provider: Literal["openai_compatible", "local"] | None = None
    """``None`` picks: an endpoint if ``base_url`` is set, else the local model."""
    base_url: str | None = None
    """An OpenAI-compatible endpoint, e.g. ``http://127.0.0.1:8000/v1`` (vLLM)
    or ``http://127.0.0.1:11434/v1`` (Ollama); ``None``: the embedded model."""
    name: str | None = None
    """The model the endpoint should run (its name there)."""
    endpoints: list[EndpointSettings] = Field(
        default_factory=list, max_length=MAX_ENDPOINTS
    )
    """Several servers of the same model (replicas behind no router, or
    several routers): each request goes to the one with the fewest requests
    in flight that has a free slot; one that refuses a connection or times
    out is set aside and tried again later. When set, ``base_url`` is not
    used. The key goes to each only under the rules of ``base_url``."""
    max_concurrency: int | None = Field(default=None, ge=1, le=4096)
    """Requests one endpoint may answer at once (its parallel slots, e.g.
    vLLM's ``--max-num-seqs``), for each endpoint without its own; ``None``:
    no limit but ``agents.max_concurrency``. When every endpoint has a limit,
    runs beyond their sum wait as queued."""
    api_key_env: str | None = None
    """Name of the environment variable holding the key (never the key itself)."""
    protocol: Literal["tools", "fenced"] | None = None
    """``None``: ``fenced`` for the embedded local model, ``tools`` otherwise."""
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Extra JSON fields for every request (vLLM ``structured_outputs``, ...)."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    """``None``: the server's default (0 for the embedded local model)."""
    timeout_s: float = Field(default=120.0, gt=0)
    """How long one model request may take."""
    retries: int = Field(default=3, ge=0, le=10)
    """Retries of a request after a connection error, an HTTP 5xx or a 429."""
    retry_backoff_s: float = Field(default=1.0, ge=0)
    """First wait before a retry; doubled for each further retry."""
    stream: bool = False
    """Ask for streamed responses (server-sent events; read whole: a stream that
    ends without a ``finish_reason`` is retried, then fails)."""
    threads: int | None = Field(default=None, ge=1, le=64)
    """Threads of the embedded model; ``None``: one less than the CPU count
    (at least 1, at most 8), leaving a core to the editor and this server."""
    priority: Literal["idle", "low", "normal"] = "idle"
    """How the embedded model shares the CPU. ``idle``: it runs only when
    nothing else wants the core (Linux ``SCHED_IDLE``; elsewhere ``low``): the
    editor and this server take a core from it at once; your own busy
    programs slow it most (and more threads than cores − 1 wait for each
    other). ``low``: niceness 10. ``normal``: as this server."""
    pause_for_editor: Literal["generating", "always", "off"] = "generating"
    """Stop the embedded model for the moment the server answers a message
    from the editor (at most 0.1 s at a time, and at most half the time
    beyond a 2 s burst): a stopped model shares neither the CPU's caches nor
    its memory bandwidth with the answer. ``generating``: only while it
    answers an agent (stopping an idle model costs a wake-up of each of its
    threads). ``always``: whenever it runs. ``off``: never. Other doors
    (CLI, MCP, dashboard) never pause it."""
    preload: bool = True
    """Get the first ask's waits out of its way once the project is indexed:
    import the agent kernel and, when agents use the embedded model, start it
    (~0.7 GB of memory while the server runs). An endpoint is never contacted
    before an agent runs."""

    @field_validator("endpoints")
    @classmethod
    def _distinct(cls, endpoints: list[EndpointSettings]) -> list[EndpointSettings]:
        urls = [endpoint.base_url.rstrip("/") for endpoint in endpoints]
        twice = sorted({url for url in urls if urls.count(url) > 1})
        if twice:
            raise ValueError(f"lists {', '.join(twice)} more than once")
        return endpoints

    def servers(self) -> list[tuple[str, int | None]]:
        """(URL, slots) of every endpoint: ``endpoints`` if set, else
        ``base_url`` (none when neither is set).
        """
        if self.endpoints:
            return [
                (e.base_url, e.max_concurrency or self.max_concurrency)
                for e in self.endpoints
            ]
        return [(self.base_url, self.max_concurrency)] if self.base_url else []

    def slots(self) -> int | None:
        """Requests the model's servers answer at once together (None: no
        limit known: the embedded model, or a server without one).
        """
        servers = self.servers()
        if self.provider == "local" or not servers:
            return None
        limits = [slots for _url, slots in servers if slots is not None]
        return sum(limits) if len(limits) == len(servers) else None


class AgentSettings(_Section):
    """Limits on agent runs."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    max_concurrency: int = Field(default=2, ge=1)
    """Agent turns (and proposals' test runs) running at once."""
    max_turns: int = Field(default=8, ge=1)
    """Model requests one run may make."""
    max_tokens_per_run: int = Field(
        default=60_000,
        ge=100,
        validation_alias=AliasChoices("max_tokens_per_run", "max_tokens"),
    )
    """Tokens (prompt + completion, summed over requests) one run may use; at
    the limit the run ends with reason ``limit_reached`` (formerly
    ``max_tokens``, still read)."""
    max_tokens_per_graph_run: int | None = Field(default=None, ge=100)
    """Tokens all the runs of one graph run may use together (its cascade);
    ``None``: no limit but each run's."""
    max_tokens_per_day: int | None = Field(default=None, ge=100)
    """Tokens all runs started on one (local) day may use together; at the
    limit further runs end at once with reason ``limit_reached``. ``None``: no
    limit."""
    run_timeout_s: float = Field(default=600.0, gt=0)
    """How long one run may take, not counting waits for a person's answer."""
    question_timeout_s: float = Field(default=900.0, gt=0)
    """How long ``ask_user`` waits for an answer."""
    history_messages: int = Field(default=40, ge=0)
    """Chat history kept per agent (messages); older ones are dropped."""


class SwarmSettings(_Section):
    """Cascade rules for agents triggering agents."""

    max_depth: int = Field(default=5, ge=1)
    """How many agent turns deep a cascade may go; deeper triggers are refused."""
    cooldown_ms: int = Field(default=1000, ge=0)
    """After a turn starts, triggers for the same agent wait this long and are
    coalesced into one turn (deferred, never dropped)."""
    turn_budget: int = Field(default=20, ge=1)
    """Agent turns one cascade (one correlation id) may run in all."""
    chain_ttl_s: float = Field(default=3600.0, gt=0)
    """How long a cascade's chain is remembered (cycle and budget rules)."""


Glob = Annotated[str, StringConstraints(max_length=MAX_GLOB_CHARS)]
"""A glob of a setting: globs.py matches it in linear time, up to a length."""


class DiscoverySettings(_Section):
    """Which files are indexed and how."""

    include: list[Glob] = Field(default_factory=lambda: ["**/*.py", "**/*.pyi"])
    """Files to index (gitignore-style patterns)."""
    exclude: list[Glob] = Field(
        default_factory=lambda: [
            ".venv",
            ".git",
            "node_modules",
            ".remora",
            "__pycache__",
            ".tox",
            ".mypy_cache",
        ]
    )
    """Files and folders never indexed (gitignore-style patterns); folders
    holding a virtual environment (``pyvenv.cfg``) are skipped as well."""
    max_file_bytes: int = Field(default=2_000_000, ge=1)
    """Larger files are skipped, with one line in the log."""
    workers: int | None = Field(default=None, ge=1)
    """Worker processes for start-up indexing; ``None``: one per CPU."""
    poll_interval_ms: int = Field(default=2000, ge=0)
    """Disk polling when the editor cannot watch files for us; 0 turns it off."""
    debounce_ms: int = Field(default=300, ge=0)
    """Quiet time after typing before a document's changes are persisted."""


class IdSettings(_Section):
    """Node ids."""

    inline_comments: bool = False
    """Read ids from ``# rm_…`` comments on definition lines (such an id wins
    over matching by name) and offer a code action adding missing ones."""


class SecretSettings(_Section):
    """Files never shown to a model."""

    exclude: list[Glob] = Field(
        default_factory=lambda: [".env*", "*.pem", "*.key", "id_rsa*"]
    )
    """Globs matched against a file's name and its project path: such files are
    never shown to a model and their nodes' agents do not run."""


class StoreSettings(_Section):
    """The project database (``.remora/remora.db``)."""

    max_mb: float | None = Field(default=None, gt=0)
    """Largest size the database may grow to (MB); beyond it writes fail like
    on a full disk (the person is told, work goes on in memory). ``None``: no
    limit but the disk's."""


class LimitSettings(_Section):
    """Bounds on what one model reply can create (docs: security, "Bounds"): a hostile
    or broken model must not exhaust the editor or the disk.
    """

    event_argument_chars: int = Field(default=4_000, ge=200)
    """Tool arguments shown in a ``tool_called`` event (JSON characters);
    of larger ones the store keeps the size, the sha256 and the first 16 KiB
    (``tool_arguments``, once per hash), and the event says so."""
    tool_calls_per_run: int = Field(default=50, ge=1)
    """Tool calls one run may make; the rest are refused."""
    subscriptions_per_agent: int = Field(default=20, ge=0)
    """Custom subscriptions one agent may hold."""
    kv_bytes_per_agent: int = Field(default=262_144, ge=0)
    """Bytes (JSON) of all values one agent may remember."""
    answer_chars: int = Field(default=20_000, ge=100)
    """Characters of a run's answer kept in its ``agent_completed`` event."""
    proposal_chars: int = Field(default=200_000, ge=1_000)
    """Characters of new source one proposal may carry (its diff rides in
    ``rewrite_proposed``, its text in the store)."""
    message_chars: int = Field(default=20_000, ge=100)
    """Characters of one message to another agent (a broadcast copies it to
    every recipient)."""
    history_bytes: int = Field(default=1_000_000, ge=1_000)
    """Chat history kept per agent (JSON bytes; oldest turns dropped first),
    on top of ``agents.history_messages``."""
    project_rules_chars: int = Field(default=8_000, ge=0)
    """Characters of the project's rules (``AGENTS.md``, ``.remora/rules.md``)
    put in every agent's prompt; the rest is cut with a note (0: none)."""
    node_instructions_chars: int = Field(default=4_000, ge=100)
    """Characters of a person's standing instructions for one node
    (``remora.node.instructions.set``); longer ones are refused."""


class ReviewSettings(_Section):
    """What is checked about a proposal before a person sees its outcome."""

    run_tests: Literal["affected", "off"] = "affected"
    """``affected``: run the project's tests that reach the proposal's node
    (a project without tests gets "no tests in this project"); ``off``."""
    test_timeout_s: float = Field(default=120.0, gt=0)
    """How long one proposal's test run may take before it is killed."""


class RemoraConfig(_Section):
    """Every setting of one project."""

    model: ModelSettings = Field(default_factory=ModelSettings)
    agents: AgentSettings = Field(default_factory=AgentSettings)
    swarm: SwarmSettings = Field(default_factory=SwarmSettings)
    discovery: DiscoverySettings = Field(default_factory=DiscoverySettings)
    ids: IdSettings = Field(default_factory=IdSettings)
    secrets: SecretSettings = Field(default_factory=SecretSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    review: ReviewSettings = Field(default_factory=ReviewSettings)
    bundles: dict[str, str] = Field(default_factory=dict)
    """Node kind → bundle name."""


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge two raw settings dicts; ``override`` wins key by key."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _drop(raw: dict[str, Any], location: tuple[Any, ...]) -> None:
    """Remove the key at ``location`` (as pydantic reports it) from ``raw``."""
    target: Any = raw
    for depth, key in enumerate(location[:-1]):
        if isinstance(target, list):
            # Inside a list item (``model.endpoints.1.base_url``): a bad
            # item invalidates the list, which falls back to its default.
            _drop(raw, location[:depth])
            return
        if not isinstance(target, dict) or key not in target:
            return
        target = target[key]
    if isinstance(target, dict):
        target.pop(location[-1], None)
    elif isinstance(target, list) and isinstance(location[-1], int):
        # A bad list item invalidates the list: fall back to its default.
        _drop(raw, location[:-1])


def validate(raw: dict[str, Any]) -> tuple[RemoraConfig, list[str]]:
    """Validate ``raw``; invalid keys fall back to defaults and are reported."""
    problems: list[str] = []
    current = copy.deepcopy(raw)  # invalid keys are dropped from this copy only
    for _attempt in range(50):
        try:
            return RemoraConfig.model_validate(current), problems
        except ValidationError as error:
            for item in error.errors():
                where = ".".join(str(part) for part in item["loc"]) or "(top level)"
                # A key of the file may be long: quote its start only.
                problems.append(f"{where[:SHOWN_CHARS]}: {item['msg']}")
                if not item["loc"]:
                    return RemoraConfig(), problems
                _drop(current, tuple(item["loc"]))
    return RemoraConfig(), problems


def read_project_sources(root: Path) -> tuple[dict[str, Any], list[str]]:
    """Raw settings from ``pyproject.toml`` and ``remora.yaml`` in ``root``."""
    raw: dict[str, Any] = {}
    problems: list[str] = []
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            section = data.get("tool", {}).get("remora", {})
            if isinstance(section, dict):
                raw = merge(raw, section)
            else:
                problems.append("pyproject.toml: [tool.remora] must be a table")
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            problems.append(f"pyproject.toml: {error}")
    remora_yaml = root / "remora.yaml"
    if remora_yaml.is_file():
        try:
            data = load_yaml(remora_yaml.read_text(encoding="utf-8"))
            if isinstance(data, dict):
                raw = merge(raw, data)
            elif data is not None:
                problems.append("remora.yaml: the top level must be a mapping")
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
            problems.append(f"remora.yaml: {error}")
    return raw, problems


CLIENT_KEYS = frozenset({"server", "trace", "initializationOptions", "workspaceTrust"})
"""Keys of a client's own in section ``remora`` (the VS Code extension's
settings); not Remora's settings, ignored without a message."""

TRUSTED_ONLY = ("model",)
"""Sections of the repository's settings used only in a trusted project."""

REFUSED_MESSAGE = (
    "Remora: {where} sets model.api_key_env; ignored: only your own settings "
    "(the editor's, or {user_file}) may name the environment variable your API "
    "key is read from."
)


def without_client_keys(editor: dict[str, Any]) -> dict[str, Any]:
    """``editor`` without :data:`CLIENT_KEYS` (logged at debug level)."""
    found = CLIENT_KEYS.intersection(editor)
    if not found:
        return editor
    log.debug("ignoring the client's own keys in section remora: %s", sorted(found))
    return {key: value for key, value in editor.items() if key not in found}


@dataclass(frozen=True)
class ProjectSettings:
    """A project's settings, kept apart by who set them (see the module docs)."""

    trusted: RemoraConfig
    """Every source: the settings of a trusted project."""
    untrusted: RemoraConfig
    """Without the repository's :data:`TRUSTED_ONLY` sections."""
    person_model: ModelSettings
    """The model settings of the person's sources alone (where the key may go)."""
    repository: dict[str, Any]
    """The repository's raw settings (``pyproject.toml`` + ``remora.yaml``)."""
    problems: list[str]
    """Invalid and unknown keys, unreadable files."""
    refused: list[str]
    """Messages about settings the repository may never set."""

    def config(self, trusted: bool) -> RemoraConfig:
        """The settings of the project, trusted or not."""
        return self.trusted if trusted else self.untrusted


def load_settings(
    root: Path | None,
    editor: dict[str, Any] | None = None,
    *,
    user: tuple[dict[str, Any], list[str]] | None = None,
) -> ProjectSettings:
    """A project's settings from every source (``user``: the person's file as
    :func:`~remora_core.user_files.read_user_config` gives it; read if None).
    """
    user_raw, problems = user if user is not None else read_user_config()
    problems = list(problems)
    repository, found = read_project_sources(root) if root is not None else ({}, [])
    problems += found
    refused: list[str] = []
    model = repository.get("model")
    if isinstance(model, dict) and "api_key_env" in model:
        where = "remora.yaml or [tool.remora] in pyproject.toml"
        refused.append(
            REFUSED_MESSAGE.format(where=where, user_file=user_config_path())
        )
        repository = {
            **repository,
            "model": {k: v for k, v in model.items() if k != "api_key_env"},
        }
    user_layer = user_raw if isinstance(user_raw, dict) else {}
    editor_layer: dict[str, Any] = {}
    if editor is not None:
        if isinstance(editor, dict):
            editor_layer = without_client_keys(editor)
        else:
            problems.append("editor settings for 'remora' must be an object")
    limited = {k: v for k, v in repository.items() if k not in TRUSTED_ONLY}
    # The person's file sits below the repository's files, the editor above.
    trusted, invalid = validate(merge(merge(user_layer, repository), editor_layer))
    untrusted, _ = validate(merge(merge(user_layer, limited), editor_layer))
    own, _ = validate(merge(user_layer, editor_layer))
    return ProjectSettings(
        trusted=_limits_at_most(trusted, own.limits),
        untrusted=_limits_at_most(untrusted, own.limits),
        person_model=own.model,
        repository=repository,
        problems=problems + invalid,
        refused=refused,
    )


def _limits_at_most(config: RemoraConfig, own: LimitSettings) -> RemoraConfig:
    """``config`` with no bound above the person's own (defaults included).

    The bounds protect the person from a hostile model a repository may choose:
    the repository's files may tighten them, never loosen them, trusted or not.
    """
    limits = config.limits
    lowered = {
        name: min(getattr(limits, name), getattr(own, name))
        for name in LimitSettings.model_fields
    }
    return config.model_copy(update={"limits": LimitSettings(**lowered)})


def load_config(
    root: Path | None, editor: dict[str, Any] | None = None
) -> tuple[RemoraConfig, list[str]]:
    """The settings of a *trusted* project and every problem found on the way.

    The language server uses :func:`load_settings`, which also knows who set
    what; this is the short form for callers that trust the project.
    """
    settings = load_settings(root, editor)
    return settings.trusted, settings.problems + settings.refused


def describe_problems(problems: list[str]) -> str:
    """One message for the user listing every configuration problem."""
    listed = "; ".join(problems)
    return f"Remora: ignoring invalid settings, using defaults for them: {listed}"
