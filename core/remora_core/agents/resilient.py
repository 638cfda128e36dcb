"""The model as a turn sees it: an event per request, retries with backoff.

:class:`ObservedModel` wraps the pydantic-ai model of a turn. Every request
(each retry included) is announced through ``on_request`` and every answer
through ``on_response`` with its token usage — the kernel turns these into
``model_request`` / ``model_response`` events. A request that fails with a
connection error or an HTTP 5xx is retried after ``backoff_s``, doubled for each
further retry, up to ``retries`` times; 4xx answers (bad request, unknown
model, bad key) are not retried: repeating them cannot help. A streamed request
is retried only if it fails before its first chunk arrived.

With a ``route`` (``providers.Route``), each attempt takes a slot on one of
the model's servers (``endpoint_pool.py``) and gives it back when it ends; a
server that refused or timed out is set aside, and the retry goes at once
(no backoff) to another server that is up.

Cancelling the turn cancels the awaiting task, which closes the HTTP request.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from pydantic_ai.exceptions import ModelAPIError, ModelConnectionError, ModelHTTPError
from pydantic_ai.models.wrapper import WrapperModel

from remora_core.agents.endpoint_pool import refused
from remora_core.editor_first import give_way

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, ModelResponse
    from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
    from pydantic_ai.settings import ModelSettings
    from pydantic_ai.tools import RunContext
    from pydantic_ai.usage import RequestUsage

    from remora_core.agents.providers import Lease, Route

log = logging.getLogger(__name__)

OnRequest = Callable[[int, str], None]
"""(attempt, why the previous attempt failed or "")."""
OnResponse = Callable[["RequestUsage", str], None]
"""(usage, finish reason)."""


def cut_short(error: BaseException) -> bool:
    """Whether ``error`` says a streamed response ended before its final chunk."""
    return (
        isinstance(error, ModelAPIError)
        and not isinstance(error, ModelHTTPError)
        and "without a `finish_reason`" in str(error)
    )


def retryable(error: BaseException, *, http: bool = True) -> bool:
    """Whether repeating the request may help (``http``: also HTTP 5xx/429)."""
    if isinstance(error, ModelHTTPError):
        return http and (error.status_code >= 500 or error.status_code == 429)
    return isinstance(error, ModelConnectionError) or cut_short(error)


def describe_failure(error: BaseException) -> str:
    """A short reason for logs and events."""
    if isinstance(error, ModelHTTPError):
        return f"HTTP {error.status_code}"
    if isinstance(error, ModelConnectionError):
        return "connection failed"
    if cut_short(error):
        return "the streamed answer ended before its last chunk (no finish_reason)"
    return type(error).__name__


class ObservedModel(WrapperModel):
    """A model whose requests are observed and retried."""

    def __init__(
        self,
        wrapped: Model,
        *,
        on_request: OnRequest,
        on_response: OnResponse,
        retries: int,
        backoff_s: float,
        retry_http_errors: bool = True,
        route: Route | None = None,
    ) -> None:
        super().__init__(wrapped)
        self.route = route
        """The servers each attempt may go to; None: ``wrapped`` only."""
        self.retry_http_errors = retry_http_errors
        """False for a deterministic server (the embedded model at temperature
        0 answers the same request with the same HTTP 500 every time)."""
        self.on_request = on_request
        self.on_response = on_response
        self.retries = retries
        self.backoff_s = backoff_s

    async def _take(self) -> tuple[Model, Lease | None]:
        """The model an attempt goes to, and its slot (None: no route)."""
        if self.route is None:
            return self.wrapped, None
        lease, model = await self.route.acquire()
        return model, lease

    def _give_back(self, lease: Lease | None, error: BaseException | None) -> bool:
        """End an attempt's slot; whether a retry can go elsewhere at once."""
        if lease is None or self.route is None:
            return False
        self.route.release(lease, error)
        return (
            error is not None and refused(error) and self.route.another_up(lease.server)
        )

    async def _wait_before_retry(
        self, attempt: int, error: BaseException, *, elsewhere: bool = False
    ) -> str:
        reason = describe_failure(error)
        if elsewhere:
            log.info("model request failed (%s); retry %d elsewhere", reason, attempt)
            return reason
        delay = self.backoff_s * 2 ** (attempt - 1)
        log.info("model request failed (%s); retry %d in %.1fs", reason, attempt, delay)
        await asyncio.sleep(delay)
        return reason

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """One request, announced, retried after transient failures."""
        reason = ""
        for attempt in range(1, self.retries + 2):
            self.on_request(attempt, reason)
            model, lease = await self._take()
            try:
                # Building the request body and reading the answer are a
                # turn's longest steps: waiting keystrokes go first.
                await give_way()
                response = await model.request(
                    messages, model_settings, model_request_parameters
                )
            except BaseException as error:
                elsewhere = self._give_back(lease, error)
                if (
                    not isinstance(error, Exception)
                    or attempt > self.retries
                    or not retryable(error, http=self.retry_http_errors)
                ):
                    raise
                reason = await self._wait_before_retry(
                    attempt, error, elsewhere=elsewhere
                )
                continue
            self._give_back(lease, None)
            await give_way()
            self.on_response(response.usage, response.finish_reason or "")
            return response
        raise AssertionError("unreachable")  # the loop returns or raises

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        """One streamed request, read whole; retried if it fails before its end."""
        reason = ""
        for attempt in range(1, self.retries + 2):
            self.on_request(attempt, reason)
            model, lease = await self._take()
            try:
                await give_way()
                opened = model.request_stream(
                    messages, model_settings, model_request_parameters, run_context
                )
                stream = await opened.__aenter__()
                try:
                    async for _event in stream:
                        pass
                except BaseException as error:
                    await opened.__aexit__(type(error), error, error.__traceback__)
                    raise
                await opened.__aexit__(None, None, None)
            except BaseException as error:
                elsewhere = self._give_back(lease, error)
                if (
                    not isinstance(error, Exception)
                    or attempt > self.retries
                    or not retryable(error, http=self.retry_http_errors)
                ):
                    raise
                reason = await self._wait_before_retry(
                    attempt, error, elsewhere=elsewhere
                )
                continue
            self._give_back(lease, None)
            break
        else:
            raise AssertionError("unreachable")  # the last attempt breaks or raises
        response = stream.get()
        self.on_response(response.usage, response.finish_reason or "")
        # Already read: the caller's iteration ends at once, ``get()`` is whole.
        yield stream
