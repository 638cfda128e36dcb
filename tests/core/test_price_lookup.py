"""The cost of a model's answer with genai-prices' misses remembered
(``agents/price_lookup.py``): a model with a known price costs what it did;
one without stays unpriced, every time it answers.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from genai_prices.data_snapshot import DataSnapshot, get_snapshot, set_custom_snapshot
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.usage import RequestUsage
from remora_core.agents.price_lookup import RememberedMisses, remember_unpriced_models

LOCAL = "http://127.0.0.1:8000/v1"
CLOUD = "https://api.openai.com/v1"


def cost(model: str, url: str = LOCAL, provider: str = "openai") -> Decimal | None:
    """What pydantic-ai's public ``ModelResponse.cost`` says of an answer."""
    answer = ModelResponse(
        parts=[TextPart("ok")],
        usage=RequestUsage(input_tokens=1_000_000, output_tokens=100_000),
        model_name=model,
        provider_name=provider,
        provider_url=url,
    )
    try:
        return answer.cost().total_price
    except LookupError:
        return None  # unknown: no price


def costs() -> dict[str, Decimal | None]:
    return {
        "gpt-4o": cost("gpt-4o"),
        "gpt-4o at OpenAI's URL": cost("gpt-4o", CLOUD, "other"),
        "scripted": cost("scripted"),
        "qwen2.5-coder": cost("qwen2.5-coder", LOCAL, "vllm"),
    }


@pytest.fixture
def bundled_prices():
    set_custom_snapshot(None)
    yield get_snapshot()
    set_custom_snapshot(None)


def test_known_prices_stay_and_unknown_models_stay_unpriced(bundled_prices):
    before = costs()
    assert before["gpt-4o"] is not None and before["gpt-4o"] > 0
    assert before["gpt-4o at OpenAI's URL"] == before["gpt-4o"]
    assert before["scripted"] is None and before["qwen2.5-coder"] is None
    assert remember_unpriced_models()
    remembering = get_snapshot()
    assert isinstance(remembering, RememberedMisses)
    for _ in range(3):  # the misses answered from memory: the same answers
        assert costs() == before
    assert remembering.misses, "the unknown models were remembered"
    assert not remember_unpriced_models(), "installed once"


def test_price_data_refreshed_by_genai_prices_is_kept(bundled_prices):
    refreshed = DataSnapshot(providers=bundled_prices.providers, from_auto_update=True)
    set_custom_snapshot(refreshed)
    assert not remember_unpriced_models()
    assert get_snapshot() is refreshed
