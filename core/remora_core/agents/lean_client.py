"""The OpenAI client of every endpoint, minus a walk of each request's body.

Before each chat completion the OpenAI SDK walks the whole request body
against its TypedDict declarations (``openai._utils._transform``: aliases,
date and base64 formats), every message and every tool's JSON schema, in
Python, on the event loop: with the 13 core tools, 1–1.5 ms of CPU per
request, ~40 % of what the client spends (``bench/scale_model.py
--levers``), the largest single cost of a request in the engine's profile.
Chat completions declare no alias or format that applies to what
pydantic-ai sends (plain JSON it built itself), so :class:`LeanOpenAI`
posts the body as given, leaving out the arguments not given, as the walk
would. Headers, auth, timeouts, errors and the response are the SDK's own.

Imported with the kernel (the SDK takes a while to import).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from openai import AsyncOpenAI, AsyncStream
from openai._base_client import make_request_options
from openai._types import NOT_GIVEN
from openai._utils import is_given
from openai.resources.chat import AsyncChat
from openai.resources.chat.completions import AsyncCompletions
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from remora_core.editor_first import give_way


async def _give_way(_message: object) -> None:
    await give_way()


class LeanCompletions(AsyncCompletions):
    """Chat completions posted without the SDK's walk of the body."""

    async def create(  # type: ignore[override]  # one signature for all overloads
        self,
        *,
        extra_headers: Any = None,
        extra_query: Any = None,
        extra_body: Any = None,
        timeout: Any = NOT_GIVEN,
        **params: Any,
    ) -> ChatCompletion | AsyncStream[ChatCompletionChunk]:
        """What ``AsyncCompletions.create`` sends, with the body as given."""
        body = {key: value for key, value in params.items() if is_given(value)}
        # Between pydantic-ai's messages and the SDK's request: waiting
        # keystrokes go first (``remora_core/editor_first.py``).
        await give_way()
        answer = await self._post(
            "/chat/completions",
            body=body,
            options=make_request_options(
                extra_headers=extra_headers,
                extra_query=extra_query,
                extra_body=extra_body,
                timeout=timeout,
                security={"bearer_auth": True},
            ),
            cast_to=ChatCompletion,
            stream=bool(body.get("stream")),
            stream_cls=AsyncStream[ChatCompletionChunk],
        )
        if not body.get("stream"):  # (an open stream is not left to a wait)
            await give_way()  # the SDK parsed the answer; pydantic-ai reads it next
        return answer


class LeanChat(AsyncChat):
    """The ``chat`` resource whose completions are :class:`LeanCompletions`."""

    @cached_property
    def completions(self) -> AsyncCompletions:  # type: ignore[override]  # a cached_property over the SDK's
        """Chat completions without the walk."""
        return LeanCompletions(self._client)


class LeanOpenAI(AsyncOpenAI):
    """An ``AsyncOpenAI`` whose chat completions skip the body's walk, and
    whose HTTP client lets the editor's waiting keystrokes go first once the
    request is built and once the answer's headers are in (the SDK's
    serialising and parsing are a turn's longest steps on the loop).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        http = getattr(self, "_client", None)  # the SDK's HTTP client
        hooks = getattr(http, "event_hooks", None)
        if http is None or not isinstance(hooks, dict):  # another SDK: requests
            return  # still go, without these two points to give way
        hooks.setdefault("request", []).append(_give_way)
        hooks.setdefault("response", []).append(_give_way)
        http.event_hooks = hooks

    @cached_property
    def chat(self) -> AsyncChat:  # type: ignore[override]  # a cached_property over the SDK's
        """The chat resource."""
        return LeanChat(self)
