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
The API key is never logged nor put in an event: :class:`Endpoint` hides it.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from remora_core.agents.bundles import Bundle
    from remora_core.agents.chat_model import ChatModel
    from remora_core.agents.local import LocalModel
    from remora_core.config import ModelSettings

log = logging.getLogger(__name__)

HOW_TO_CONFIGURE = (
    "Configure a model: set model.base_url and model.name (and model.api_key_env "
    "if the server needs a key) in remora.yaml, [tool.remora] in pyproject.toml or "
    "the editor's remora settings — or install the embedded local model with "
    "pip install 'remora-lsp[local]'."
)


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
    api_key: str = field(default="not-needed", repr=False)
    """Never logged: excluded from ``repr``."""

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
        cache_dir: Path | None = None,
        log_path: Path | None = None,
    ) -> None:
        self.settings = settings
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
                raise ModelNotConfigured(f"No model is configured. {HOW_TO_CONFIGURE}")
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
                f"{HOW_TO_CONFIGURE}"
            )
        name = (override and override.name) or settings.name
        if not name:
            raise ModelNotConfigured(
                f"model.name is not set: say which model {base_url} should run. "
                f"{HOW_TO_CONFIGURE}"
            )
        return Endpoint(
            base_url=base_url,
            model_name=name,
            protocol=protocol or "tools",
            extra_body=extra_body,
            temperature=temperature,
            api_key=self._api_key(),
        )

    def _api_key(self) -> str:
        variable = self.settings.api_key_env
        if not variable:
            return "not-needed"  # local servers ignore it; the SDK insists on one
        key = os.environ.get(variable)
        if not key:
            raise ModelNotConfigured(
                f"model.api_key_env names the environment variable {variable}, "
                "but it is not set in the environment the server was started in."
            )
        return key

    async def _start_local(self) -> tuple[str, str]:
        from remora_core.agents.local import LocalModel, LocalModelUnavailable

        async with self._lock:
            if self.local is None:
                self.local = LocalModel(
                    cache_dir=self.cache_dir, log_path=self.log_path
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
            endpoint.model_name, provider=OpenAIProvider(openai_client=client)
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
