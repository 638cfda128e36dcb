"""Secrets never leave the model layer (DESIGN §12): the scrubbing function and
the boundaries it is applied at — the event log, the runs table, logging.
"""

from __future__ import annotations

import logging
import sqlite3

import pytest
from remora_core.events.models import AgentFailed, HumanChat
from remora_core.redact import REDACTED, RedactingFilter, register_secret, scrub
from remora_core.store import Database
from remora_core.swarm.pipeline import Swarm
from remora_core.swarm.turns import TurnFailed

from tests.core.swarm_support import all_events, build_graph, node, quiet, settings

KEY = "sk-redact-test-0123456789"


@pytest.fixture(autouse=True)
def key() -> str:
    register_secret(KEY)
    return KEY


@pytest.mark.parametrize(
    ("text", "gone", "kept"),
    [
        (f"the key is {KEY}.", KEY, "the key is"),
        ("{'authorization': 'Bearer abc.def-123'}", "abc.def-123", "'Bearer "),
        ('{\\"Authorization\\": \\"Bearer tok_123456\\"}', "tok_123456", "Bearer"),
        ("Authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz", "Basic"),
        ("x-api-key=abcdef; next", "abcdef", "; next"),
        ("token Bearer eyJhbGciOiJIUzI1 here", "eyJhbGciOiJIUzI1", " here"),
        ("at http://me:hunter2@host:8/v1 now", "hunter2", "@host:8/v1 now"),
        ("at https://only-user@host/v1", "only-user", "https://"),
    ],
)
def test_scrub_removes_the_secret_and_keeps_the_rest(text, gone, kept):
    clean = scrub(text)
    assert gone not in clean and kept in clean and REDACTED in clean
    assert scrub(clean) == clean  # scrubbing twice changes nothing more


@pytest.mark.parametrize(
    "text",
    [
        "model.api_key_env names the environment variable MY_KEY",
        "the bearer of bad news",
        "see https://example.com/docs and a@b.c",
        "",
    ],
)
def test_ordinary_text_is_left_alone(text):
    assert scrub(text) is text


def test_short_values_are_not_registered():
    register_secret("abc")
    assert scrub("abc abc") == "abc abc"


def test_the_logging_filter_scrubs_message_args_and_traceback(tmp_path):
    path = tmp_path / "log.txt"
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger("tests.redact")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        logger.debug("sending %s to %s", KEY, "http://u:pw-998877@h/v1")
        try:
            raise RuntimeError(f"Authorization: Bearer {KEY}")
        except RuntimeError:
            logger.exception("request failed")
    finally:
        logger.removeHandler(handler)
        handler.close()
    text = path.read_text(encoding="utf-8")
    assert KEY not in text and "pw-998877" not in text
    assert "RuntimeError" in text and text.count(REDACTED) >= 3


async def test_events_and_run_errors_are_stored_and_published_scrubbed(tmp_path):
    graph = build_graph({"w.py": "def f():\n    pass\n"})
    agent = node(graph, "w.py", "f").id

    async def leaky(turn):
        raise TurnFailed(f"HTTP 401: headers {{'authorization': 'Bearer {KEY}'}}")

    database = await Database.open(tmp_path)
    swarm = Swarm(database, graph, settings(), turn_function=leaky)
    published = []
    swarm.bus.subscribe("test", published.append)
    await swarm.start()
    try:
        stored = await swarm.emit(
            AgentFailed(agent_id=agent, error=f"at http://u:pw-445566@h/v1 {KEY}")
        )
        assert KEY not in stored.event.error and "pw-445566" not in stored.event.error
        await swarm.emit(HumanChat(to_agent=agent, message="go"))
        await quiet(swarm)
        await swarm.events.settled()
    finally:
        await swarm.close()
        await database.close()
    events = _reopened_events(tmp_path)
    failures = [e for e in events if '"agent_failed"' in e]
    assert len(failures) == 2
    for payload in events:
        assert KEY not in payload and "pw-445566" not in payload
    assert all(REDACTED in f for f in failures)
    assert all(KEY not in s.event.model_dump_json() for s in published)
    with sqlite3.connect(tmp_path / ".remora" / "remora.db") as db:
        (error,) = [row[0] for row in db.execute("SELECT error FROM runs")]
    assert KEY not in error and "Bearer [redacted]" in error


def _reopened_events(root) -> list[str]:
    with sqlite3.connect(root / ".remora" / "remora.db") as db:
        return [row[0] for row in db.execute("SELECT payload FROM events")]


async def test_memory_only_logs_are_scrubbed_too():
    graph = build_graph({"w.py": "def f():\n    pass\n"})
    swarm = Swarm(None, graph, settings())
    await swarm.start()
    try:
        await swarm.emit(AgentFailed(agent_id=node(graph, "w.py", "f").id, error=KEY))
        (stored,) = [
            s for s in await all_events(swarm) if s.event.type == "agent_failed"
        ]
    finally:
        await swarm.close()
    assert stored.event.error == REDACTED
