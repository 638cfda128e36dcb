"""Chat history per agent, bounded and persisted (DESIGN §8, table ``agent_state``).

An agent's history is the list of pydantic-ai messages of its past turns,
stored as JSON with :data:`pydantic_ai.messages.ModelMessagesTypeAdapter`. It is
kept to ``max_messages`` by dropping the oldest messages, cutting only where a
turn starts (a request carrying the person's or trigger's prompt) so the model
never sees a tool result whose call was dropped. The system prompt of the first
request, if the history had one, is carried over to the new first request:
pydantic-ai only adds system prompts to an empty history, so dropping it would
silently change how the agent is instructed.

pydantic-ai is imported on first use, not with this module: importing it takes
seconds, and the server builds its memory at start-up.

A stored history that cannot be read (damaged JSON, a message format from
another pydantic-ai version) is logged and treated as empty: an agent that
forgot is better than one that cannot run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Sequence

    from pydantic_ai.messages import ModelMessage

    from remora_core.store.database import Database

log = logging.getLogger(__name__)

_SAVE = (
    "INSERT INTO agent_state (agent_id, chat_history, last_activated) "
    "VALUES (?, ?, ?) ON CONFLICT (agent_id) DO UPDATE SET "
    "chat_history = excluded.chat_history, last_activated = excluded.last_activated"
)


@dataclasses.dataclass(frozen=True, slots=True)
class HistorySaved:
    """An agent's history as saved, and when it was last active (its row of
    ``agent_state``); written in a transaction of its own or with the turn's
    last event (``EventStore.also_write``).
    """

    agent_id: str
    chat_history: str
    """The messages as JSON."""
    last_activated: float

    def write(self, db: sqlite3.Connection) -> None:
        """Insert or update the agent's row (in the database thread)."""
        db.execute(_SAVE, (self.agent_id, self.chat_history, self.last_activated))


class ChatMemory:
    """Every agent's conversation so far, at most ``max_messages`` long."""

    def __init__(
        self,
        database: Database | None,
        max_messages: int = 40,
        max_bytes: int | None = None,
    ) -> None:
        self.database = database
        self.max_messages = max_messages
        self.max_bytes = max_bytes
        """Largest history kept (JSON bytes, limits.history_bytes): the oldest
        turns go first, so one huge reply cannot grow every later prompt."""
        """How many messages a history keeps (requests and responses each count)."""
        self._cache: dict[str, bytes] = {}
        """Agent id → its history as JSON, for agents loaded or saved so far."""
        self._stored: set[str] | None = None
        """Agents with a non-empty history in the store, read once: most agents
        never talked, and their first turn then costs no query."""
        self._writes: set[asyncio.Task[None]] = set()
        """Saves being written: a turn does not wait for its history's commit
        (the cache answers the next load); :meth:`close` waits for them."""

    async def load(self, agent_id: str) -> list[ModelMessage]:
        """The agent's history, oldest first ([] if none or unreadable)."""
        stored = self._cache.get(agent_id)
        if stored is None:
            if self._stored is None:
                self._stored = await self._read_agents()
            stored = await self._read(agent_id) if agent_id in self._stored else b"[]"
            self._cache.setdefault(agent_id, stored)
        if stored == b"[]":
            return []
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        try:
            return list(ModelMessagesTypeAdapter.validate_json(stored))
        except Exception as error:  # never let memory stop an agent
            log.warning(
                "the chat history of %s cannot be read (%s); starting afresh",
                agent_id,
                str(error).splitlines()[0] if str(error) else type(error).__name__,
            )
            self._cache[agent_id] = b"[]"
            return []

    async def save(
        self,
        agent_id: str,
        messages: Sequence[ModelMessage],
        *,
        write: Callable[[HistorySaved], None] | None = None,
    ) -> None:
        """Store the agent's history, cut to the limit, and note it was active now.

        ``write``, when given, takes the saved history instead of a transaction
        of its own (the event log's ``also_write``: the history is then stored
        with the turn's last event).
        """
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        kept = bounded(messages, self.max_messages)
        encoded = ModelMessagesTypeAdapter.dump_json(kept)
        while self.max_bytes is not None and len(encoded) > self.max_bytes and kept:
            kept = bounded(kept, len(kept) - 1)
            encoded = ModelMessagesTypeAdapter.dump_json(kept)
        self._cache[agent_id] = encoded
        if self.database is None:
            return
        saved = HistorySaved(agent_id, encoded.decode("utf-8"), time.time())
        if write is not None:
            write(saved)
            return
        # Writes queue on the database's lock in order, so the last save wins.
        task = asyncio.ensure_future(
            self.database.transaction(saved.write, "saving an agent's chat history")
        )
        self._writes.add(task)
        task.add_done_callback(self._written)

    def _written(self, task: asyncio.Task[None]) -> None:
        self._writes.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("saving a chat history failed", exc_info=task.exception())

    async def close(self) -> None:
        """Wait for the saves still being written."""
        if self._writes:
            await asyncio.gather(*list(self._writes), return_exceptions=True)

    def forget_cached(self) -> None:
        """Drop what is cached: the store changed under it (a restore)."""
        self._cache.clear()
        self._stored = None

    async def clear(self, agent_id: str) -> None:
        """Forget the agent's conversation (its other state stays)."""
        await self.close()  # a save still queued must not land after this
        self._cache[agent_id] = b"[]"
        if self.database is None:
            return

        def work(db: sqlite3.Connection) -> None:
            db.execute(
                "UPDATE agent_state SET chat_history = '[]' WHERE agent_id = ?",
                (agent_id,),
            )

        await self.database.transaction(work, "clearing an agent's chat history")

    async def _read_agents(self) -> set[str]:
        if self.database is None:
            return set()

        def work(db: sqlite3.Connection) -> set[str]:
            rows = db.execute(
                "SELECT agent_id FROM agent_state WHERE chat_history != '[]'"
            )
            return {row[0] for row in rows}

        found = await self.database.read(work, "reading the agents' chat histories")
        return set() if found is None else found

    async def _read(self, agent_id: str) -> bytes:
        if self.database is None:
            return b"[]"

        def work(db: sqlite3.Connection) -> str | None:
            row = db.execute(
                "SELECT chat_history FROM agent_state WHERE agent_id = ?", (agent_id,)
            ).fetchone()
            return row[0] if row else None

        stored = await self.database.read(work, "reading an agent's chat history")
        if isinstance(stored, bytes):
            return stored
        return stored.encode("utf-8", "replace") if stored else b"[]"


def starts_turn(message: ModelMessage) -> bool:
    """Whether a history may begin with ``message``: a request with a prompt that
    answers nothing from a response before it.
    """
    from pydantic_ai.messages import (
        BaseToolReturnPart,
        ModelRequest,
        RetryFeedbackPart,
        RetryPromptPart,
        UserPromptPart,
    )

    replies = (BaseToolReturnPart, RetryPromptPart, RetryFeedbackPart)
    return (
        isinstance(message, ModelRequest)
        and any(isinstance(part, UserPromptPart) for part in message.parts)
        and not any(isinstance(part, replies) for part in message.parts)
    )


def bounded(messages: Sequence[ModelMessage], limit: int) -> list[ModelMessage]:
    """The latest messages, at most ``limit``, starting where a turn starts.

    [] when no turn starts within the last ``limit`` messages (one turn longer
    than the limit).
    """
    from pydantic_ai.messages import ModelRequest, SystemPromptPart

    messages = list(messages)
    if len(messages) <= limit:
        return messages
    start = next(
        (
            i
            for i in range(len(messages) - limit, len(messages))
            if starts_turn(messages[i])
        ),
        None,
    )
    if start is None:
        log.debug("no turn starts in the last %d messages; history dropped", limit)
        return []
    kept = messages[start:]
    first = messages[0]
    system = [p for p in first.parts if isinstance(p, SystemPromptPart)]
    head = kept[0]
    if (
        system
        and isinstance(head, ModelRequest)
        and not any(isinstance(p, SystemPromptPart) for p in head.parts)
    ):
        kept[0] = dataclasses.replace(head, parts=[*system, *head.parts])
    return kept
