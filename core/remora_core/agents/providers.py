"""Which model a turn talks to, built from settings (DESIGN §12).

``model.provider``:

- ``openai_compatible``: any chat-completions endpoint (vLLM, llama.cpp,
  Ollama, OpenAI) at ``model.base_url``, model ``model.name``, key read from
  the environment variable named by ``model.api_key_env``;
- ``local``: the embedded llama.cpp model (extra ``local``), started on first
  use and kept while the server lives;
- unset: the endpoint when ``model.base_url`` is set, else the local model when
  the extra is installed, else a run fails with :class:`ModelNotConfigured`
  telling the user what to set.

A bundle may override the model's name, URL, protocol, extra body and
temperature. The OpenAI client's own retries are off (``max_retries=0``): it
would resend identical requests; ``resilient.py`` retries with backoff instead.

Several servers (``model.endpoints``) and their slots (``max_concurrency``):
each request of a turn asks :meth:`ModelResolver.route` for a server
(``endpoint_pool.py``: least outstanding, failover, backpressure). Each
server gets one HTTP client per :data:`SHARD_SLOTS` requests it may carry at
once: the connection pool of one client looks at every connection it holds
for each request (httpcore); with 64 in flight, 8 clients took 0.4–0.6 ms
less CPU per request than one (``bench/scale_model.py --levers``).

The key goes only where the person sent it (``trust.py``): it is read from the
variable the person's settings name, and sent only to an origin the person
configured or approved for the project; a request to any other origin (a
trusted repository's ``base_url`` or ``model.endpoints``, a bundle's) goes
without it. Each server of ``model.endpoints`` is judged on its own. A key read is
registered with ``redact.py``, so no text that leaves the model layer shows it;
:class:`Endpoint` keeps it out of ``repr``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from remora_core.agents.endpoint_pool import EndpointPool, Server
from remora_core.redact import register_secret
from remora_core.trust import Trust, host_of
from remora_core.user_files import user_config_path

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from remora_core.agents.bundles import Bundle
    from remora_core.agents.chat_model import ChatModel
    from remora_core.agents.local import LocalModel
    from remora_core.config import ModelSettings

log = logging.getLogger(__name__)

HOW_TO_CONFIGURE = (
    "Configure a model: set model.base_url and model.name (and model.api_key_env "
    "if the server needs a key) in the editor's remora settings or in your settings "
    "file {user_file} (remora.yaml and [tool.remora] in pyproject.toml count only "
    "in a trusted project) — or install the embedded local model with "
    "pip install 'remora-lsp[local]'."
)


def how_to_configure() -> str:
    """:data:`HOW_TO_CONFIGURE` naming the person's settings file."""
    return HOW_TO_CONFIGURE.format(user_file=user_config_path())


SHARD_SLOTS = 8
"""Requests one HTTP client carries at once (see the module docs)."""

NO_KEY = "not-needed"
"""What is sent when no key may be: local servers ignore it; the SDK wants one."""


class ModelNotConfigured(RuntimeError):
    """No model can be reached with the current settings; says how to fix it."""


@dataclass(frozen=True)
class Endpoint:
    """Everything needed to talk to one model."""

    base_url: str
    model_name: str
    protocol: Literal["tools", "fenced"]
    local: bool = False
    extra_body: dict[str, Any] = field(default_factory=dict)
    temperature: float | None = None
    api_key: str = field(default=NO_KEY, repr=False)
    """Never logged: excluded from ``repr``."""
    key_withheld: str | None = None
    """The variable whose key was *not* sent here (the person did not configure
    or approve this origin), for messages about a refused request."""
    servers: tuple[str, ...] = ()
    """Every server of the model (``model.endpoints``); empty: ``base_url``."""

    def describe(self) -> str:
        """A short, key-free description for messages and events."""
        where = "embedded local model" if self.local else self.base_url
        if len(self.servers) > 1:
            where = " or ".join(self.servers)
        return f"{self.model_name} at {where}"


class ModelResolver:
    """Turns settings (and a bundle's override) into endpoints and models."""

    def __init__(
        self,
        settings: ModelSettings,
        *,
        trust: Trust | None = None,
        cache_dir: Path | None = None,
        log_path: Path | None = None,
        concurrency: int = SHARD_SLOTS,
    ) -> None:
        self.settings = settings
        self.trust = trust or Trust.for_settings(settings)
        """Where the key may go; without one, ``settings`` are the caller's own."""
        self.cache_dir = cache_dir
        self.log_path = log_path
        self.concurrency = concurrency
        """Turns at once (``agents.max_concurrency``): the most requests a
        server without a limit of its own carries."""
        self.local: LocalModel | None = None
        self.pool = EndpointPool(settings.servers())
        """The servers of the settings (bundles' own URLs: :attr:`_pools`)."""
        self._pools: dict[str, EndpointPool] = {}
        self._clients: dict[tuple[str, str, int], AsyncOpenAI] = {}
        self._models: dict[tuple[str, str, str, int], ChatModel] = {}
        self._lock = asyncio.Lock()

    async def endpoint(self, bundle: Bundle | None = None) -> Endpoint:
        """The endpoint a turn with ``bundle`` uses; :class:`ModelNotConfigured`."""
        settings = self.settings
        override = bundle.model if bundle is not None else None
        servers = tuple(url for url, _slots in settings.servers())
        if override is not None and override.base_url:
            servers = ()
        base_url = (override and override.base_url) or (
            servers[0] if servers else settings.base_url
        )
        provider = settings.provider
        if override is not None and override.base_url:
            provider = "openai_compatible"
        if provider is None:
            provider = "openai_compatible" if base_url else "local"
            if provider == "local" and not _local_installed():
                raise ModelNotConfigured(
                    f"No model is configured. {how_to_configure()}"
                )
        protocol = (override and override.protocol) or settings.protocol
        temperature = settings.temperature
        if override is not None and override.temperature is not None:
            temperature = override.temperature
        extra_body = {
            **settings.extra_body,
            **(override.extra_body if override else {}),
        }
        if provider == "local":
            url, name = await self._start_local()
            return Endpoint(
                base_url=url,
                model_name=name,
                protocol=protocol or "fenced",
                local=True,
                extra_body=extra_body,
                temperature=0.0 if temperature is None else temperature,
            )
        if not base_url:
            raise ModelNotConfigured(
                f"model.provider is openai_compatible but model.base_url is not set. "
                f"{how_to_configure()}"
            )
        name = (override and override.name) or settings.name
        if not name:
            raise ModelNotConfigured(
                f"model.name is not set: say which model {base_url} should run. "
                f"{how_to_configure()}"
            )
        key, withheld = await self._api_key(base_url)
        return Endpoint(
            base_url=base_url,
            model_name=name,
            protocol=protocol or "tools",
            extra_body=extra_body,
            temperature=temperature,
            api_key=key,
            key_withheld=withheld,
            servers=servers,
        )

    async def _api_key(self, base_url: str) -> tuple[str, str | None]:
        """The key for a request to ``base_url``, and the variable of a key that
        may not go there (None if sent, or if there is no key).
        """
        variable = self.settings.api_key_env
        if not variable:
            return NO_KEY, None
        key = os.environ.get(variable)
        if not key:
            raise ModelNotConfigured(
                f"model.api_key_env names the environment variable {variable}, "
                "but it is not set in the environment the server was started in."
            )
        register_secret(key)
        if await self.trust.may_send_key(base_url, variable):
            return key, None
        log.info(
            "not sending the key from %s to %s: you did not configure or approve it",
            variable,
            host_of(base_url),
        )
        return NO_KEY, variable

    async def preload(self) -> None:
        """Start the embedded model now if agents will use it (``model.preload``).

        A failure is only logged: the first ask reports it, with how to fix it.
        """
        settings = self.settings
        if settings.provider == "openai_compatible" or (
            settings.provider is None and (settings.base_url or not _local_installed())
        ):
            return
        try:
            await self._start_local()
        except ModelNotConfigured as error:
            log.warning("the embedded model could not be started ahead: %s", error)

    async def read_ahead(self, system: str) -> None:
        """Have the embedded model, if it runs, read ``system`` into its prompt
        cache (a prompt that starts with it is then read from there on).
        Best effort: a failure is only logged.
        """
        if self.local is not None and self.local.running:
            await self.local.read_ahead(system)

    async def _start_local(self) -> tuple[str, str]:
        from remora_core.agents.local import LocalModel, LocalModelUnavailable

        async with self._lock:
            if self.local is None:
                self.local = LocalModel(
                    cache_dir=self.cache_dir,
                    log_path=self.log_path,
                    threads=self.settings.threads,
                    priority=self.settings.priority,
                    pause_for_editor=self.settings.pause_for_editor,
                )
        try:
            url = await self.local.ensure_started()
        except LocalModelUnavailable as error:
            raise ModelNotConfigured(str(error)) from error
        return url, self.local.model_name

    def model(
        self, endpoint: Endpoint, *, url: str | None = None, shard: int = 0
    ) -> ChatModel:
        """A pydantic-ai model for ``endpoint`` (at ``url``, one of its
        servers, through its HTTP client ``shard``; clients are reused).
        """
        from pydantic_ai.providers.openai import OpenAIProvider

        from remora_core.agents.chat_model import ChatModel

        url = url or endpoint.base_url
        found = (url, endpoint.api_key, endpoint.model_name, shard)
        model = self._models.get(found)
        if model is not None:
            return model
        key = (url, endpoint.api_key, shard)
        client = self._clients.get(key)
        if client is None:
            client = self._clients[key] = openai_client_class()(
                base_url=url,
                api_key=endpoint.api_key,
                max_retries=0,  # retried with backoff by resilient.py
                timeout=self.settings.timeout_s,
            )
        model = ChatModel(
            endpoint.model_name,
            provider=OpenAIProvider(openai_client=client),
            # A stream without a finish_reason was cut short: a failure to retry
            # (resilient.py), not a complete answer.
            profile={"openai_chat_streaming_requires_finish_reason": True},
        )
        self._models[found] = model
        return model

    def route(self, endpoint: Endpoint) -> Route:
        """Where the requests of one turn on ``endpoint`` go."""
        if endpoint.servers:
            pool = self.pool
        else:  # a bundle's own URL, the embedded model: one server, no limit
            pool = self._pools.get(endpoint.base_url)
            if pool is None:
                pool = self._pools[endpoint.base_url] = EndpointPool(
                    [(endpoint.base_url, None)]
                )
        return Route(self, endpoint, pool)

    async def close(self) -> None:
        """Close HTTP clients and stop the local model."""
        clients, self._clients = list(self._clients.values()), {}
        self._models = {}
        for client in clients:
            try:
                await client.close()
            except Exception as error:  # closing is best effort
                log.debug("closing a model client: %s", error)
        if self.local is not None:
            await self.local.stop()


@dataclass(frozen=True)
class Lease:
    """One request's slot: its server and the HTTP client (shard) it uses."""

    server: Server
    shard: int


class Route:
    """The servers the requests of one turn go to, and the key for each."""

    def __init__(
        self, resolver: ModelResolver, endpoint: Endpoint, pool: EndpointPool
    ) -> None:
        self.resolver = resolver
        self.endpoint = endpoint
        self.pool = pool
        self.last: Server | None = None
        """The server of the turn's previous request (preferred on a tie:
        its prompt cache holds the conversation)."""
        self._endpoints: dict[str, Endpoint] = {}
        """Per server: the endpoint with the key that may go there."""

    async def acquire(self) -> tuple[Lease, ChatModel]:
        """A server with a free slot (waiting for one), and the model there."""
        server = await self.pool.acquire(self.last)
        try:
            endpoint = await self._endpoint_at(server.url)
        except BaseException:
            self.pool.release(server)
            raise
        self.last = server
        if not server.shards:
            slots = min(server.slots or self.resolver.concurrency, SHARD_SLOTS * 64)
            server.shards = [0] * max(1, math.ceil(slots / SHARD_SLOTS))
        load = server.shards
        shard = load.index(min(load))
        load[shard] += 1
        model = self.resolver.model(endpoint, url=server.url, shard=shard)
        if (local := self._local()) is not None:
            local.requests += 1  # generating: the editor may pause it
        return Lease(server, shard), model

    def release(self, lease: Lease, error: BaseException | None = None) -> None:
        """The request of ``lease`` ended (failed with ``error``)."""
        lease.server.shards[lease.shard] -= 1
        self.pool.release(lease.server, error)
        if (local := self._local()) is not None:
            local.requests = max(0, local.requests - 1)

    def _local(self) -> LocalModel | None:
        """The embedded model this route's requests go to, if they do."""
        return self.resolver.local if self.endpoint.local else None

    def another_up(self, server: Server) -> bool:
        """Whether a retry can go to another server at once."""
        return self.pool.another_up(server)

    async def _endpoint_at(self, url: str) -> Endpoint:
        if url == self.endpoint.base_url:
            return self.endpoint
        endpoint = self._endpoints.get(url)
        if endpoint is None:
            key, withheld = await self.resolver._api_key(url)
            endpoint = self._endpoints[url] = replace(
                self.endpoint, base_url=url, api_key=key, key_withheld=withheld
            )
        return endpoint


def _local_installed() -> bool:
    from remora_core.agents.local import local_extra_installed

    return local_extra_installed()


def openai_client_class() -> type[Any]:
    """The OpenAI client class endpoints use: the lean one, or the SDK's own
    when a newer SDK moved the internals the lean one builds on (it would
    otherwise fail every request; only the body's walk is lost).
    """
    try:
        from remora_core.agents.lean_client import LeanOpenAI
    except ImportError as error:
        from openai import AsyncOpenAI

        log.warning("the OpenAI SDK's own client is used (%s)", error)
        return AsyncOpenAI
    return LeanOpenAI
