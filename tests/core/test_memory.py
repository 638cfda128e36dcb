"""Chat history per agent: bounded at clean turn boundaries, persisted, forgiving.

What matters to the model is that a history it is handed always starts with a
prompt it can make sense of, never with the answer to a tool call it cannot see.
"""

from __future__ import annotations

import logging
import sqlite3

import pytest
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryInfo,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from remora_core.agents.memory import ChatMemory, bounded
from remora_core.store import Database

AGENT = "rm_aaaaaaaa"


def turn(n: int, *, tools: int = 0, system: bool = False) -> list:
    """One agent turn: a prompt, ``tools`` tool round trips, a final answer."""
    parts = [SystemPromptPart("you are a node")] if system else []
    messages: list = [ModelRequest(parts=[*parts, UserPromptPart(f"request {n}")])]
    for t in range(tools):
        call = f"call_{n}_{t}"
        messages.append(
            ModelResponse(parts=[ToolCallPart("read_node", {"id": "x"}, call)])
        )
        messages.append(
            ModelRequest(parts=[ToolReturnPart("read_node", "source", call)])
        )
    messages.append(ModelResponse(parts=[TextPart(f"answer {n}")]))
    return messages


def prompts(messages: list) -> list[str]:
    return [
        part.content
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart)
    ]


@pytest.mark.parametrize("persisted", [False, True])
async def test_a_history_round_trips(database, persisted):
    memory = ChatMemory(database if persisted else None)
    history = turn(1, tools=1, system=True) + turn(2)
    await memory.save(AGENT, history)
    assert await memory.load(AGENT) == history
    assert await memory.load("rm_unknown0") == []


async def test_a_history_survives_a_restart(tmp_path):
    database = await Database.open(tmp_path)
    memory = ChatMemory(database)
    await memory.save(AGENT, turn(1, tools=2))
    await memory.close()  # saves are written in the background; close waits
    await database.close()
    database = await Database.open(tmp_path)
    try:
        loaded = await ChatMemory(database).load(AGENT)
        assert prompts(loaded) == ["request 1"]
        assert len(loaded) == 6
        assert isinstance(loaded[2].parts[0], ToolReturnPart)
    finally:
        await database.close()


async def test_the_oldest_turns_are_dropped_whole(database):
    memory = ChatMemory(database, max_messages=7)
    # Turns of 2, 4 and 4 messages: the last 7 start inside the second turn,
    # so the whole second turn goes.
    history = turn(1, system=True) + turn(2, tools=1) + turn(3, tools=1)
    await memory.save(AGENT, history)
    kept = await memory.load(AGENT)
    assert prompts(kept) == ["request 3"]
    assert len(kept) == 4
    # The system prompt of the first request is carried over to the new first one.
    assert isinstance(kept[0].parts[0], SystemPromptPart)
    assert isinstance(kept[0].parts[1], UserPromptPart)


def test_a_cut_never_starts_with_a_tool_return_or_retry():
    retry = ModelRequest(
        parts=[RetryFeedbackPart("answer in JSON", retry=RetryInfo("validation_error"))]
    )
    history = [
        *turn(1),
        *turn(2, tools=3),
        retry,
        ModelResponse(parts=[TextPart("ok")]),
    ]
    for limit in range(1, len(history) + 1):
        kept = bounded(history, limit)
        assert len(kept) <= limit
        if kept:
            first = kept[0]
            assert isinstance(first, ModelRequest)
            assert any(isinstance(p, UserPromptPart) for p in first.parts)
            assert not any(
                isinstance(p, ToolReturnPart | RetryFeedbackPart) for p in first.parts
            )
    assert bounded(history, 3) == []  # the last turn alone is longer than 3
    assert bounded(history, len(history)) == history


async def test_saving_records_when_the_agent_was_last_active(database):
    memory = ChatMemory(database)
    await memory.save(AGENT, turn(1))
    await memory.close()  # the write happens in the background
    async with database.connection.execute(
        "SELECT last_activated FROM agent_state WHERE agent_id = ?", (AGENT,)
    ) as cursor:
        (first,) = await cursor.fetchone()
    assert first > 0


async def test_clearing_forgets_the_conversation_but_keeps_the_custom_prompt(tmp_path):
    database = await Database.open(tmp_path)
    memory = ChatMemory(database)
    await memory.save(AGENT, turn(1))
    await memory.close()  # the write happens in the background
    await database.connection.execute(
        "UPDATE agent_state SET custom_prompt = 'be brief' WHERE agent_id = ?", (AGENT,)
    )
    await memory.clear(AGENT)
    assert await memory.load(AGENT) == []
    await database.close()
    with sqlite3.connect(tmp_path / ".remora" / "remora.db") as connection:
        row = connection.execute(
            "SELECT chat_history, custom_prompt FROM agent_state WHERE agent_id = ?",
            (AGENT,),
        ).fetchone()
    assert row == ("[]", "be brief")


async def test_a_damaged_history_is_logged_and_treated_as_empty(database, caplog):
    await database.connection.execute(
        "INSERT INTO agent_state (agent_id, chat_history) VALUES (?, ?)",
        (AGENT, '[{"kind": "request", "parts": [{"part_kind": "nonsense'),
    )
    memory = ChatMemory(database)
    with caplog.at_level(logging.WARNING, logger="remora_core.agents.memory"):
        assert await memory.load(AGENT) == []
    assert f"the chat history of {AGENT} cannot be read" in caplog.text
    await memory.save(AGENT, turn(2))
    await memory.close()  # the write happens in the background
    assert prompts(await ChatMemory(database).load(AGENT)) == ["request 2"]
