"""Trust and keys: what a repository may do, and where the person's key may go.

A repository is untrusted input (DESIGN §12). Until the person trusts it:

- its code does not run: ``.remora/models/*.py`` extensions, bundles from
  ``.remora/bundles/`` and their ``.pym`` tools are not loaded (the shipped
  bundles are used);
- its ``model`` settings (``remora.yaml``, ``[tool.remora]``) are ignored:
  agents run on the person's own model settings.

Trusted or not, the repository can never name the environment variable the
key is read from (``config.py`` drops ``model.api_key_env`` from its files), and
the key is sent only to an origin (``scheme://host:port``) the person
configured outside the repository (``model.base_url`` or one of
``model.endpoints`` in their own settings), or one the person approved for this
project (:class:`KeyApprovals`: asked once, remembered per project and origin
in :class:`TrustStore`, revocable). A request to any other origin goes without
the key.

:class:`TrustStore` is ``trust.json`` in the person's state directory
(``user_files.py``): ``{"projects": {"/abs/root": {"trusted": bool,
"hosts": {"https://host:443": bool}}}}``, written atomically under a lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

import yaml

from remora_core.bounded_yaml import load_yaml
from remora_core.user_files import state_dir

if TYPE_CHECKING:
    from remora_core.config import ModelSettings

log = logging.getLogger(__name__)

STATE_FILE = "trust.json"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str | None) -> str | None:
    """``scheme://host:port`` of ``url`` (no userinfo, no path), None if unusable."""
    if not url:
        return None
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if not scheme or not host:
        return None
    if port is None:
        port = _DEFAULT_PORTS.get(scheme)
    if ":" in host:  # IPv6
        host = f"[{host}]"
    return f"{scheme}://{host}" + (f":{port}" if port is not None else "")


def model_origins(model: ModelSettings) -> frozenset[str]:
    """The origins of every URL ``model`` names: ``base_url`` and each of
    ``endpoints`` (the person's own settings: their key may go to each).
    """
    urls = [model.base_url, *(endpoint.base_url for endpoint in model.endpoints)]
    return frozenset(found for url in urls if (found := origin(url)) is not None)


def host_of(url_or_origin: str) -> str:
    """``host:port`` of an origin or URL, as questions and messages name it."""
    found = origin(url_or_origin) or url_or_origin
    return found.split("://", 1)[-1]


# ---- what a repository wants ------------------------------------------------------


@dataclass(frozen=True)
class RepositoryWants:
    """What of a repository only runs or applies in a trusted project."""

    extensions: tuple[str, ...] = ()
    """``.remora/models/*.py`` files (Python run inside the server)."""
    bundles: tuple[str, ...] = ()
    """Bundle names under ``.remora/bundles/``."""
    tools: tuple[str, ...] = ()
    """``.pym`` tool scripts of those bundles (``bundle/tools/x.pym``)."""
    model_keys: tuple[str, ...] = ()
    """``model.*`` keys the repository's settings files set."""
    hosts: tuple[str, ...] = ()
    """``host:port`` of every URL the repository wants requests sent to."""

    def __bool__(self) -> bool:
        return bool(self.extensions or self.bundles or self.model_keys)

    def describe(self) -> str:
        """One sentence naming what the repository wants to run and where to."""
        parts: list[str] = []
        if self.extensions:
            parts.append(f"run its Python code ({', '.join(self.extensions)})")
        if self.bundles:
            bundles = f"use its bundles ({', '.join(self.bundles)})"
            if self.tools:
                bundles += f" with tool scripts ({', '.join(self.tools)})"
            parts.append(bundles)
        if self.hosts:
            parts.append(f"send agents' requests to {', '.join(self.hosts)}")
        elif self.model_keys:
            parts.append(f"choose the model ({', '.join(self.model_keys)})")
        return "; ".join(parts)


def repository_wants(root: Path | None, settings: dict[str, Any]) -> RepositoryWants:
    """What of ``root`` needs trust: its ``.remora`` code and bundles, and the
    ``model`` section of its raw settings (``remora.yaml``, ``[tool.remora]``).
    """
    if root is None:
        return RepositoryWants()
    remora = root / ".remora"
    extensions = _listed(remora / "models", "*.py")
    bundles: list[str] = []
    tools: list[str] = []
    hosts: list[str] = []
    model = settings.get("model")
    model_keys = sorted(model) if isinstance(model, dict) else []
    if isinstance(model, dict) and isinstance(model.get("base_url"), str):
        hosts.append(host_of(model["base_url"]))
    endpoints = model.get("endpoints") if isinstance(model, dict) else None
    for endpoint in endpoints if isinstance(endpoints, list) else ():
        if isinstance(endpoint, dict) and isinstance(endpoint.get("base_url"), str):
            hosts.append(host_of(endpoint["base_url"]))
    bundle_root = remora / "bundles"
    for directory in _listed(bundle_root, "*"):
        path = bundle_root / directory
        if not (path / "bundle.yaml").is_file():
            continue
        bundles.append(directory)
        tools += [f"{directory}/tools/{t}" for t in _listed(path / "tools", "*.pym")]
        url = _bundle_base_url(path / "bundle.yaml")
        if url:
            hosts.append(host_of(url))
    return RepositoryWants(
        extensions=tuple(f".remora/models/{name}" for name in extensions),
        bundles=tuple(bundles),
        tools=tuple(tools),
        model_keys=tuple(f"model.{key}" for key in model_keys),
        hosts=tuple(dict.fromkeys(hosts)),
    )


def _listed(directory: Path, pattern: str) -> list[str]:
    try:
        return sorted(p.name for p in directory.glob(pattern))
    except OSError:
        return []


def _bundle_base_url(path: Path) -> str | None:
    """The ``model.base_url`` a bundle file asks for (None if none or unreadable)."""
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    model = data.get("model") if isinstance(data, dict) else None
    url = model.get("base_url") if isinstance(model, dict) else None
    return url if isinstance(url, str) else None


# ---- the person's remembered decisions ----------------------------------------------


@dataclass(frozen=True)
class Decision:
    """What the person decided for one project."""

    trusted: bool | None = None
    """None: never asked (or the question was dismissed)."""
    hosts: dict[str, bool] = field(default_factory=dict)
    """Origin → whether the key may go there."""


class TrustStore:
    """The person's decisions per project, in ``trust.json`` (user-level state).

    Reading a damaged or unreadable file gives "undecided" (logged), never an
    error; a write that fails is logged and the decision holds for the session.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or state_dir() / STATE_FILE

    @staticmethod
    def key(root: Path) -> str:
        """How a project is named in the file: its real absolute path."""
        return os.path.realpath(root)

    def get(self, root: Path) -> Decision:
        """The person's decisions for ``root``."""
        entry = self._read().get(self.key(root))
        if not isinstance(entry, dict):
            return Decision()
        trusted = entry.get("trusted")
        hosts = entry.get("hosts")
        return Decision(
            trusted if isinstance(trusted, bool) else None,
            {
                str(k): v
                for k, v in (hosts.items() if isinstance(hosts, dict) else ())
                if isinstance(v, bool)
            },
        )

    def set_trusted(self, root: Path, trusted: bool) -> None:
        """Remember whether the person trusts ``root``."""
        with self._changing(root) as entry:
            entry["trusted"] = trusted
            entry["decided_at"] = time.time()

    def set_host(self, root: Path, host_origin: str, allowed: bool) -> None:
        """Remember whether the key may go to ``host_origin`` for ``root``."""
        with self._changing(root) as entry:
            entry.setdefault("hosts", {})[host_origin] = allowed

    def revoke(self, root: Path) -> bool:
        """Forget every decision about ``root``; whether there was any."""
        with self._locked():
            projects = self._read()
            found = projects.pop(self.key(root), None) is not None
            if found:
                self._write(projects)
        return found

    # ---- the file ---------------------------------------------------------------

    @contextlib.contextmanager
    def _changing(self, root: Path) -> Iterator[dict[str, Any]]:
        with self._locked():
            projects = self._read()
            entry = projects.get(self.key(root))
            if not isinstance(entry, dict):
                entry = projects[self.key(root)] = {}
            yield entry
            self._write(projects)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Serialise read-modify-write with other servers (best effort)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            handle = open(self.path.with_suffix(".lock"), "a")  # noqa: SIM115
        except OSError as error:
            log.warning("cannot lock %s: %s", self.path, error)
            yield
            return
        try:
            try:
                import fcntl

                fcntl.flock(handle, fcntl.LOCK_EX)
            except (ImportError, OSError):  # no fcntl (Windows): last writer wins
                pass
            yield
        finally:
            handle.close()

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            log.warning("ignoring unreadable %s: %s", self.path, error)
            return {}
        projects = data.get("projects") if isinstance(data, dict) else None
        return projects if isinstance(projects, dict) else {}

    def _write(self, projects: dict[str, Any]) -> None:
        text = json.dumps({"version": 1, "projects": projects}, indent=2)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, temporary = tempfile.mkstemp(
                prefix=".trust-", dir=self.path.parent, text=True
            )
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(temporary, self.path)
        except OSError as error:
            log.warning("cannot remember a trust decision in %s: %s", self.path, error)


# ---- keys ----------------------------------------------------------------------------

AskHost = Callable[[str, str], Awaitable[bool | None]]
"""Asks the person whether their key (from the variable named second) may go to
an origin (first); None when the question was dismissed."""


class KeyApprovals:
    """Whether the key may go to an origin the person did not configure.

    The remembered answer if there is one; else the person is asked once (one
    question per origin however many turns wait for it). A dismissed question
    counts as "no" for the rest of the session, and is asked again next time.
    """

    def __init__(
        self, root: Path | None, store: TrustStore | None, ask: AskHost | None
    ) -> None:
        self.root = root
        self.store = store
        self.ask = ask
        self._session: dict[str, bool] = {}
        self._asking: dict[str, asyncio.Future[bool | None]] = {}

    async def allowed(self, host_origin: str, variable: str) -> bool:
        """Whether the key from ``variable`` may be sent to ``host_origin``."""
        if host_origin in self._session:
            return self._session[host_origin]
        if self.store is not None and self.root is not None:
            remembered = self.store.get(self.root).hosts.get(host_origin)
            if remembered is not None:
                return remembered
        if self.ask is None:
            return False
        question = self._asking.get(host_origin)
        if question is None:
            question = asyncio.ensure_future(self.ask(host_origin, variable))
            self._asking[host_origin] = question
        try:
            answer = await asyncio.shield(question)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the editor could not ask
            log.warning("could not ask about sending the key: %s", error)
            answer = None
        finally:
            if question.done():
                self._asking.pop(host_origin, None)
        if answer is not None and self.store is not None and self.root is not None:
            self.store.set_host(self.root, host_origin, answer)
        self._session[host_origin] = bool(answer)
        return bool(answer)


@dataclass(frozen=True)
class Trust:
    """What one project's repository may do, and where the key may go."""

    trusted: bool = False
    """Whether the repository's code, bundles and model settings are used."""
    person_origins: frozenset[str] = frozenset()
    """Origins the person configured outside the repository (the key goes there)."""
    approvals: KeyApprovals | None = None
    """Asks about (and remembers) other origins; None: never send the key there."""

    @classmethod
    def for_settings(cls, model: ModelSettings, *, trusted: bool = False) -> Trust:
        """Trust for settings that are all the caller's own (an API, a test):
        the key may go to their ``base_url`` and ``endpoints``.
        """
        return cls(trusted, model_origins(model))

    async def may_send_key(self, url: str, variable: str) -> bool:
        """Whether the key from ``variable`` may go with a request to ``url``."""
        found = origin(url)
        if found is None:
            return False
        if found in self.person_origins:
            return True
        if self.approvals is None:
            return False
        return await self.approvals.allowed(found, variable)


# ---- who decides ------------------------------------------------------------------


class TrustDecisions(Protocol):
    """Who decides whether a project is trusted, as a door knows it.

    The language server's (``remora_lsp/trust.py``) also takes the client's own
    workspace trust and asks the person; without an editor
    (:class:`RememberedTrust`) only the person's remembered answers count.
    """

    def describe(self, root: Path) -> dict[str, Any]:
        """``{trusted, decided_by, wants, hosts}`` of the project at ``root``."""
        ...

    async def set(self, root: Path, trusted: bool) -> None:
        """The person trusts ``root`` (or not): remember it and apply it."""
        ...

    async def revoke(self, root: Path) -> None:
        """Forget every answer about ``root``: untrusted until asked again."""
        ...


class RememberedTrust:
    """Decisions without an editor: the person's answers in :class:`TrustStore`.

    Nobody is asked; an undecided project is untrusted, and a change applies
    from the project's next start.
    """

    def __init__(self, store: TrustStore | None = None) -> None:
        self.store = store or TrustStore()
        self.wants: dict[Path, RepositoryWants] = {}
        """What each project's repository wants that needs trust."""

    def for_project(
        self,
        root: Path,
        model: ModelSettings,
        repository: dict[str, Any] | None = None,
    ) -> Trust:
        """The trust of ``root`` whose person's model settings are ``model``
        (``repository``: the repository's raw settings, for what it wants);
        the key goes to the person's own endpoint or one approved before.
        """
        self.wants[root] = repository_wants(root, repository or {})
        return Trust(
            trusted=self.store.get(root).trusted is True,
            person_origins=model_origins(model),
            approvals=KeyApprovals(root, self.store, None),
        )

    def describe(self, root: Path) -> dict[str, Any]:
        """The remembered decision about ``root``."""
        decision = self.store.get(root)
        return {
            "trusted": decision.trusted is True,
            "decided_by": "undecided" if decision.trusted is None else "person",
            "wants": wants.describe() if (wants := self.wants.get(root)) else "",
            "hosts": {host_of(o): allowed for o, allowed in decision.hosts.items()},
        }

    async def set(self, root: Path, trusted: bool) -> None:
        """Remember the answer."""
        self.store.set_trusted(root, trusted)

    async def revoke(self, root: Path) -> None:
        """Forget every answer about ``root``."""
        self.store.revoke(root)
