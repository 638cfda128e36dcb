"""genai-prices' price data, remembering the models it has no price for.

pydantic-ai prices every model response with genai-prices (the cost in a
response's usage; unknown stays ``None``). genai-prices remembers the models
it found, not those it did not: for a model it has no price for (a local or
self-hosted one: ``qwen2.5-coder``, a vLLM deployment's name) every response
matches the name against every model of the provider again, pattern by
pattern, twice (by the endpoint's URL, then by the provider's name): ~0.1 ms
of the event loop per response (``bench/scale_model.py``).

:func:`remember_unpriced_models` installs, with genai-prices' public
``set_custom_snapshot``, the same price data (``DataSnapshot`` is genai-prices'
public class, ``find_provider_model`` its lookup) with the misses remembered
too: the same price where one is known, the same ``LookupError`` where none
is, the second time from memory.

Left alone when the current data came from genai-prices' ``UpdatePrices``
(newer data, refreshed by it) or is already of this kind; other data (the
bundled one, or one somebody set) is kept, its misses remembered.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from genai_prices.data_snapshot import DataSnapshot, get_snapshot, set_custom_snapshot

if TYPE_CHECKING:
    from genai_prices import types

log = logging.getLogger(__name__)

MAX_MISSES = 1024
"""Misses remembered; beyond it the memory starts afresh (model names come
from settings and answers: a handful in practice)."""

_Key = tuple[str, str | None, str | None, str | None]


@dataclass
class RememberedMisses(DataSnapshot):
    """Price data whose lookups also remember what they did not find."""

    misses: dict[_Key, str] = field(default_factory=dict, init=False)
    """(model, provider's id, provider id, URL) → the lookup error's text."""

    def find_provider_model(
        self,
        model_ref: str,
        provider: types.Provider | None,
        provider_id: str | None,
        provider_api_url: str | None,
    ) -> tuple[types.Provider, types.ModelInfo]:
        """genai-prices' lookup; a miss seen before answered at once."""
        key = (
            model_ref.lower(),
            provider.id if provider is not None else None,
            provider_id,
            provider_api_url,
        )
        if (missed := self.misses.get(key)) is not None:
            raise LookupError(missed)
        try:
            return super().find_provider_model(
                model_ref, provider, provider_id, provider_api_url
            )
        except LookupError as error:
            if len(self.misses) >= MAX_MISSES:
                self.misses.clear()
            self.misses[key] = str(error)
            raise


def remember_unpriced_models() -> bool:
    """Install the current price data with misses remembered; whether it was."""
    current = get_snapshot()
    if type(current) is not DataSnapshot or current.from_auto_update:
        return False
    set_custom_snapshot(
        RememberedMisses(providers=current.providers, from_auto_update=False)
    )
    log.debug("genai-prices: misses remembered")
    return True
