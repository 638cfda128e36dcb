"""Replies by rule for the scripted model server: "when the person asks for X,
answer Y", independent of how many requests a run makes or in which order
agents run.

A rule matches a request by the text of its last user message (a substring,
or any predicate over the request body). A run is a conversation: its first
request ends with the person's message, and each later request of the same
turn adds the model's tool call and the tool's result. The rule answers the
n-th request of the turn with its n-th reply (counted by the model messages
after the last user message), and every request past the last reply with
``"Done."``, so a rewrite is two replies — the ``rewrite_self`` call, then a
closing text::

    model.on("docstring", rewrite('def f():\\n    \"\"\"Doc.\"\"\"'))
    model.on("explain", text("It adds two numbers."))
    model.on("search", tool_call("read_node", {"node_id": "rm_abcdefgh"}),
             text("Found it."))
    model.on(lambda request: True, error(503, "overloaded"))

Rules are tried in the order they were added; a request no rule matches
takes the next scripted reply (or the default).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)


@dataclass
class Reply:
    """One scripted answer."""

    text: str | None = None
    tool_calls: list[tuple[str, Any]] = field(default_factory=list)
    """(tool name, arguments); arguments given as a string are sent verbatim."""
    status: int = 200
    body: bytes | None = None
    """Raw response body (overrides everything but ``status``)."""
    delay_s: float = 0.0
    usage: tuple[int, int] = (10, 5)
    """(prompt, completion) tokens the server reports."""
    cached: int = 0
    """Of the prompt tokens, those read from the server's cache (reported as
    ``prompt_tokens_details.cached_tokens`` when not 0)."""
    echo_headers: bool = False
    """Answer ``status`` with an error message quoting the request's headers
    (as careless servers and proxies do)."""
    cut_short: bool = False
    """Streamed: send the content, then close the connection without the final
    chunk (no ``finish_reason``) and without ``[DONE]``."""
    finish_reason: str | None = None
    """What the server says ended the reply; ``None``: ``tool_calls`` or
    ``stop`` (``length``: a reply cut at its token cap)."""


Match = str | Callable[[dict[str, Any]], bool]
"""A substring of the last user message, or a predicate over the request."""

CLOSING = "Done."
"""What the model says once a rule's replies are used up in a turn."""


def text(content: str, **kwargs: Any) -> list[Reply]:
    """A plain answer (no tool call): the run ends with it."""
    return [Reply(text=content, **kwargs)]


def tool_call(name: str, arguments: Any, **kwargs: Any) -> list[Reply]:
    """One call of tool ``name`` (arguments as a dict, or a raw string)."""
    return [Reply(tool_calls=[(name, arguments)], **kwargs)]


def rewrite(
    new_source: str, *, fenced: bool = False, then: str = CLOSING
) -> list[Reply]:
    """The agent rewrites its node to ``new_source``.

    With the ``tools`` protocol (the kit's default) that is a ``rewrite_self``
    call followed by ``then``; with ``fenced=True`` (the ``fenced`` protocol of
    small models) one reply holding the code in a fenced python block.
    """
    if fenced:
        return [Reply(text=f"{then}\n```python\n{new_source}\n```")]
    return [*tool_call("rewrite_self", {"new_source": new_source}), Reply(text=then)]


def error(status: int = 500, message: str = "error") -> list[Reply]:
    """An HTTP error answer (e.g. 500, 503, 429) with an OpenAI-style body."""
    body = json.dumps({"error": {"message": message, "type": "server_error"}})
    return [Reply(status=status, body=body.encode())]


def last_user_text(request: dict[str, Any]) -> str:
    """The text of the last user message of a chat-completions request."""
    for message in reversed(request.get("messages") or []):
        if message.get("role") == "user":
            return _content(message)
    return ""


def replies_since_user(request: dict[str, Any]) -> int:
    """How many model messages follow the last user message (the turn's step)."""
    count = 0
    for message in reversed(request.get("messages") or []):
        role = message.get("role")
        if role == "user":
            break
        if role == "assistant":
            count += 1
    return count


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content)
    return str(content or "")


@dataclass(frozen=True)
class Rule:
    """When ``match`` holds, answer step n of the turn with ``replies[n]``."""

    match: Match
    replies: tuple[Reply, ...]

    def matches(self, request: dict[str, Any]) -> bool:
        """Whether this rule answers ``request``."""
        if isinstance(self.match, str):
            return self.match in last_user_text(request)
        try:
            return bool(self.match(request))
        except Exception:  # a broken predicate is the test's bug: say so, skip
            log.exception("model rule predicate failed; rule skipped")
            return False

    def reply(self, request: dict[str, Any]) -> Reply:
        """The reply for this request's step of the turn."""
        step = replies_since_user(request)
        if step < len(self.replies):
            return self.replies[step]
        return Reply(text=CLOSING)


def make_rule(match: Match, replies: Sequence[Reply | Sequence[Reply]]) -> Rule:
    """A :class:`Rule` from builders' outputs (each a reply or a list of them)."""
    flat: list[Reply] = []
    for item in replies:
        flat.extend([item] if isinstance(item, Reply) else item)
    if not flat:
        raise ValueError("a model rule needs at least one reply")
    return Rule(match=match, replies=tuple(flat))
