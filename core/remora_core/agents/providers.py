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

The key goes only where the person sent it (``trust.py``): it is read from the
variable the person's settings name, and sent only to an origin the person
configured or approved for the project; a request to any other origin (a
trusted repository's ``base_url``, a bundle's) goes without it. A key read is
registered with ``redact.py``, so no text that leaves the model layer shows it;
:class:`Endpoint` keeps it out of ``repr``.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

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

    def describe(self) -> str:
        """A short, key-free description for messages and events."""
        where = "embedded local model" if self.local else self.base_url
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
    ) -> None:
        self.settings = settings
        self.trust = trust or Trust.for_settings(settings)
        """Where the key may go; without one, ``settings`` are the caller's own."""
        self.cache_dir = cache_dir
        self.log_path = log_path
        self.local: LocalModel | None = None
        self._clients: dict[tuple[str, str], AsyncOpenAI] = {}
        self._models: dict[tuple[str, str, str], ChatModel] = {}
        self._lock = asyncio.Lock()

    async def endpoint(self, bundle: Bundle | None = None) -> Endpoint:
        """The endpoint a turn with ``bundle`` uses; :class:`ModelNotConfigured`."""
        settings = self.settings
        override = bundle.model if bundle is not None else None
        base_url = (override and override.base_url) or settings.base_url
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
                )
        try:
            url = await self.local.ensure_started()
        except LocalModelUnavailable as error:
            raise ModelNotConfigured(str(error)) from error
        return url, self.local.model_name

    def model(self, endpoint: Endpoint) -> ChatModel:
        """A pydantic-ai model for ``endpoint`` (HTTP clients are reused)."""
        from openai import AsyncOpenAI
        from pydantic_ai.providers.openai import OpenAIProvider

        from remora_core.agents.chat_model import ChatModel

        model = self._models.get(
            (endpoint.base_url, endpoint.api_key, endpoint.model_name)
        )
        if model is not None:
            return model
        key = (endpoint.base_url, endpoint.api_key)
        client = self._clients.get(key)
        if client is None:
            client = self._clients[key] = AsyncOpenAI(
                base_url=endpoint.base_url,
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
        self._models[(*key, endpoint.model_name)] = model
        return model

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


def _local_installed() -> bool:
    from remora_core.agents.local import local_extra_installed

    return local_extra_installed()
