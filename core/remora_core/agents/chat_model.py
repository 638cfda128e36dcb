"""The chat-completions model of every endpoint: pydantic-ai's, minus repeated work.

pydantic-ai prepares a request's tool definitions for the model's JSON-schema
dialect on every request (``Model.customize_request_parameters``: a deep copy
and a walk of each schema; ~0.05 ms per tool, so ~0.6 ms per request for the
13 core tools — half of what a bare one-tool run spends in pydantic-ai). An
agent offers the same tool definitions turn after turn, so :class:`ChatModel`
prepares each definition once and reuses the result while the definition is
unchanged. pydantic-ai documents the method as the hook for subclasses.
Importing it also makes genai-prices remember the models it has no price for
(``price_lookup.py``): pydantic-ai prices every response.

Imported on first use by ``providers.py`` (importing pydantic-ai takes seconds).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic_ai.models.openai import OpenAIChatModel

from remora_core.agents.price_lookup import remember_unpriced_models

if TYPE_CHECKING:
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.tools import ToolDefinition

remember_unpriced_models()

MAX_REMEMBERED = 512
"""Prepared definitions kept per model (the core tools, ``.pym`` and extension
tools of every bundle fit many times over); beyond it the memory starts afresh."""


class ChatModel(OpenAIChatModel):
    """An OpenAI-compatible chat model that prepares each tool definition once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._prepared: dict[int, tuple[ToolDefinition, ToolDefinition]] = {}
        """id of a definition's schema → (the definition, its prepared form).

        Keyed by the schema's identity: tools are built once (``toolset.py``), so
        their definitions, or at least their schemas, are the same objects every
        turn. The entry holds the definition, so the id cannot be reused while it
        is remembered; a hit also needs an equal definition."""

    def customize_request_parameters(
        self, model_request_parameters: ModelRequestParameters
    ) -> ModelRequestParameters:
        """pydantic-ai's preparation, done only for definitions not seen before."""
        tools = model_request_parameters.function_tools
        known: list[ToolDefinition | None] = [self._known(tool) for tool in tools]
        unseen = [tool for tool, ready in zip(tools, known, strict=True) if not ready]
        prepared = super().customize_request_parameters(
            replace(model_request_parameters, function_tools=unseen)
        )
        fresh = iter(prepared.function_tools)
        result: list[ToolDefinition] = []
        for tool, ready in zip(tools, known, strict=True):
            if ready is None:
                ready = next(fresh)
                self._remember(tool, ready)
            result.append(ready)
        return replace(prepared, function_tools=result)

    def _known(self, tool: ToolDefinition) -> ToolDefinition | None:
        entry = self._prepared.get(id(tool.parameters_json_schema))
        if entry is None:
            return None
        original, ready = entry
        return ready if original is tool or original == tool else None

    def _remember(self, tool: ToolDefinition, ready: ToolDefinition) -> None:
        if len(self._prepared) >= MAX_REMEMBERED:
            self._prepared.clear()
        self._prepared[id(tool.parameters_json_schema)] = (tool, ready)
