"""One agent turn: prompt + triggering events + bounded history → tool loop.

:meth:`AgentKernel.turn` is the swarm's turn function. For the agent's node it
picks the bundle and matching extensions, resolves the model, and runs the turn
in the endpoint's protocol:

- ``tools``: pydantic-ai's own tool loop with the core, ``.pym`` and extension
  tools; a call of an unknown tool or with bad arguments gets pydantic-ai's
  retry message and is recorded as a failed ``tool_result``;
- ``fenced``: plain replies read by ``fenced.py``; the kernel carries out what
  they ask and continues while an action needs an answer (a read, a question,
  a refused rewrite — refused once, then the refusal ends the turn). A block
  of tests or of several definitions without ``CREATE_FILE``/``CHANGE``
  lines is read by its shape (``block_shapes.py``). One reply of the
  embedded model is capped to the task (:func:`reply_cap`); a reply cut at a
  length limit keeps its whole tests, or ends the turn saying it was cut.

Before the model runs, the turn gets its intent guard (``guarding.py``): a
rewrite that changes more than a docstring / annotations / names when that is
all the request asked for is refused once with the reason; a second such
rewrite ends the turn with a message saying what was asked and what changed.
On the embedded model a fenced reply is written under a grammar: a guarded
turn's keeps the code (``guided.py``), any other ends at its code block.

Each request is an ``model_request`` / ``model_response`` pair (``resilient.py``
retries connection errors and 5xx). Limits: ``max_turns`` requests, the token
budgets of ``budgets.py``, a run timeout that does not count waits for a person.
A failure ends the turn with :class:`TurnFailed` whose message a person
understands. Triggers that are only a person's edits of the agent's own code
do not call the model unless the bundle's ``react_to_own_edits`` says so:
typing must not burn model time. The chat history is saved after a turn that completed.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import re
from typing import TYPE_CHECKING, Any

from pydantic_ai import Agent, Tool
from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelConnectionError,
    ModelHTTPError,
    ModelTimeoutError,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
)
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.toolsets import FunctionToolset
from pydantic_ai.usage import UsageLimits

from remora_core.agents import tools as core
from remora_core.agents.block_shapes import read_block, whole_prefixes
from remora_core.agents.budgets import LIMIT_REACHED, allowance, limit_failure
from remora_core.agents.context import AgentContext
from remora_core.agents.fenced import FENCED_GRAMMAR, FencedError, parse_reply
from remora_core.agents.guarding import refused_twice, turn_guard
from remora_core.agents.guided import keep_code_grammar
from remora_core.agents.instructions import instructions_of
from remora_core.agents.overlay_proposals import propose_overlay
from remora_core.agents.project_rules import read_rules
from remora_core.agents.prompt import system_prompt, turn_input
from remora_core.agents.providers import (
    Endpoint,
    ModelNotConfigured,
    openai_client_class,
)
from remora_core.agents.resilient import ObservedModel, cut_short, retryable
from remora_core.agents.sandbox import PymError, PymTool
from remora_core.agents.toolset import core_tools, extension_tool, pym_tool
from remora_core.editor_first import give_way
from remora_core.events.models import HumanChat, ToolCalled, ToolResult
from remora_core.events.models import ModelRequest as ModelRequestEvent
from remora_core.events.models import ModelResponse as ModelResponseEvent
from remora_core.review.definition_edits import NO_CHANGE
from remora_core.store.runs import RunUsageAdded
from remora_core.swarm.turns import TurnFailed

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.settings import ModelSettings

    from remora_core.agents.context import AgentServices
    from remora_core.swarm.turns import Turn

log = logging.getLogger(__name__)

# The model's client modules load with the kernel, which is imported in a
# thread (``runtime.py``): the first request of a session would otherwise
# import them (~1.5 s: the OpenAI SDK) on the event loop, holding every turn.
# So does the ``.pym`` sandbox's native module (``sandbox._monty``), left out
# of the server's start-up.
for _module in (
    "pydantic_ai.providers.openai",
    "remora_core.agents.chat_model",
    "pydantic_monty",
):
    importlib.import_module(_module)
openai_client_class()


class AgentKernel:
    """Runs agent turns for one project."""

    def __init__(self, services: AgentServices) -> None:
        self.services = services
        self.agent: Agent[AgentContext, str] = Agent(deps_type=AgentContext, retries=2)
        """Shared by every turn; model, prompt and tools are given per run."""

    async def turn(self, turn: Turn) -> str:
        """One turn of ``turn.agent_id``; the swarm's turn function."""
        services = self.services
        node = services.graph.get(turn.agent_id)
        if node is None:
            raise TurnFailed(f"node {turn.agent_id} no longer exists")
        step = graph_step(turn)
        bundle = (
            services.bundles.get(step.bundle)
            if step is not None and step.bundle
            else services.bundles.for_node(node)
        )
        base = step.base_proposal_id if step is not None else None
        context = AgentContext(
            turn=turn,
            services=services,
            bundle=bundle,
            extensions=services.extensions.matching(node),
            base=services.proposals.get(base) if base else None,
        )
        context.guard = turn_guard(bundle, turn.events, services.proposals)
        context.project_rules = read_rules(services.root, services.config)
        context.instructions = await instructions_of(services.kv, node.id)
        try:
            endpoint = await services.models.endpoint(bundle)
        except ModelNotConfigured as error:
            raise TurnFailed(str(error)) from None
        limits = bundle.limits
        timeout_s = (
            limits and limits.timeout_s
        ) or services.config.agents.run_timeout_s
        allowed = await allowance(turn, bundle, services.config.agents)
        if allowed.tokens <= 0:
            raise limit_failure(turn, allowed, before=True)
        usage_limits = self._limits(context, allowed.tokens)
        history = await services.memory.load(turn.agent_id)
        # The turn's setup and its first request are the longest steps of a
        # turn on the loop: the editor's waiting keystrokes go first.
        await give_way()
        try:
            async with asyncio.timeout(timeout_s) as deadline:
                context.deadline = deadline
                run = self._fenced if endpoint.protocol == "fenced" else self._tools
                answer, messages = await run(context, endpoint, history, usage_limits)
        except TimeoutError:
            raise TurnFailed(
                f"The run took longer than {timeout_s:g} s (agents.run_timeout_s) "
                f"talking to {endpoint.describe()}."
            ) from None
        except ModelAPIError as error:  # HTTP errors, connection errors, garbage
            raise TurnFailed(describe_model_error(error, endpoint, self)) from None
        except UsageLimitExceeded as error:
            if "token" in str(error):
                raise limit_failure(turn, allowed, before=False) from None
            raise TurnFailed(describe_limit(context), LIMIT_REACHED) from None
        except UnexpectedModelBehavior as error:
            hint = (
                " A model better at tool calling, or model.protocol: fenced, may help."
                if endpoint.protocol == "tools"
                else ""
            )
            raise TurnFailed(
                f"The model ({endpoint.describe()}) gave answers that could not be "
                f"used: {_without_advice(error.message)}.{hint}"
            ) from None
        await give_way()
        # A script's overlay writes become a proposal (a failed turn keeps
        # them in the overlay: proposed after the next turn a script writes).
        await propose_overlay(context)
        # The history rides in the transaction of the turn's last event.
        await services.memory.save(
            turn.agent_id, messages, write=turn.swarm.events.also_write
        )
        return answer

    # ---- shared ----------------------------------------------------------------

    def _run_options(
        self, context: AgentContext, endpoint: Endpoint, tools: list[Tool[Any]]
    ) -> dict[str, Any]:
        """What one run of the shared agent takes: model, prompt, tools, settings.

        One pydantic-ai ``Agent`` serves every turn; what differs per turn is
        passed per run (building agents and tool schemas per turn cost ~10 ms).
        """
        services, turn = self.services, context.turn
        settings = services.config.model

        def on_request(attempt: int, reason: str) -> None:
            turn.emit_nowait(
                ModelRequestEvent(
                    agent_id=turn.agent_id,
                    model=endpoint.model_name,
                    attempt=attempt,
                    retry_reason=reason,
                )
            )

        def on_response(usage: Any, finish_reason: str) -> None:
            spent = tokens_of(usage)
            # The run's totals ride in the transaction of its response.
            turn.swarm.events.also_write(RunUsageAdded(turn.run_id, *spent))
            turn.emit_nowait(
                ModelResponseEvent(
                    agent_id=turn.agent_id,
                    usage={
                        "input_tokens": spent[0],
                        "output_tokens": spent[1],
                        **({"cached_tokens": spent[2]} if spent[2] else {}),
                    },
                    finish_reason=finish_reason,
                )
            )

        model = ObservedModel(
            services.models.model(endpoint),
            on_request=on_request,
            on_response=on_response,
            retries=settings.retries,
            backoff_s=settings.retry_backoff_s,
            retry_http_errors=not (endpoint.local and endpoint.temperature == 0),
            route=services.models.route(endpoint),
        )
        return {
            "model": model,
            "instructions": system_prompt(context, endpoint.protocol),
            "toolsets": [FunctionToolset(tools)] if tools else None,
            "model_settings": self._settings(context, endpoint),
            "deps": context,
        }

    def _settings(self, context: AgentContext, endpoint: Endpoint) -> ModelSettings:
        settings: ModelSettings = {"timeout": self.services.config.model.timeout_s}
        if endpoint.temperature is not None:
            settings["temperature"] = endpoint.temperature
        extra = dict(endpoint.extra_body)
        if endpoint.local:
            # A small model can write on and on (a test file past 1,000
            # tokens, ~60 s on two cores): one reply is capped to the task.
            cap = reply_cap(context)
            settings["max_tokens"] = cap
            extra.setdefault("n_predict", cap)  # llama.cpp's own name for it
        if endpoint.protocol == "fenced":
            grammar = context.bundle.grammar or (
                _local_grammar(context) if endpoint.local else None
            )
            if grammar:
                extra.setdefault("grammar", grammar)
        if extra:
            settings["extra_body"] = extra
        return settings

    def _limits(self, context: AgentContext, tokens: int) -> UsageLimits:
        """The run's limits: its requests, and the ``tokens`` its budgets
        allow (``budgets.py``).
        """
        agents, limits = self.services.config.agents, context.bundle.limits
        return UsageLimits(
            request_limit=(limits and limits.max_turns) or agents.max_turns,
            total_tokens_limit=tokens,
        )

    # ---- the tools protocol ----------------------------------------------------------

    def _tools_for(self, context: AgentContext) -> list[Tool[Any]]:
        bundle = context.bundle
        wanted = set(bundle.tool_names)
        tools: list[Tool[Any]] = [
            tool for name, tool in core_tools().items() if name in wanted
        ]
        for path in bundle.active_pym_tools:
            try:
                tools.append(pym_tool(PymTool.load(path)))
            except PymError as error:  # a broken script costs its tool, not the turn
                log.warning("tool script skipped: %s", error)
        taken = {tool.name for tool in tools}
        for extension in context.extensions:
            for method in extension.tools():
                if method.__name__ not in taken:  # the first extension wins
                    taken.add(method.__name__)
                    tools.append(extension_tool(method))
        return tools

    async def _tools(
        self,
        context: AgentContext,
        endpoint: Endpoint,
        history: list[ModelMessage],
        limits: UsageLimits,
    ) -> tuple[str, list[ModelMessage]]:
        options = self._run_options(context, endpoint, self._tools_for(context))
        prompt = turn_input(context)
        await give_way()  # the prompt is built; pydantic-ai's run starts
        stream = self.services.config.model.stream
        calls: dict[str, tuple[str, Any]] = {}
        async with self.agent.iter(
            prompt,
            message_history=history,
            usage_limits=limits,
            **options,
        ) as run:
            async for step in run:
                await give_way()  # between pydantic-ai's steps of the run
                if Agent.is_model_request_node(step):
                    self._note_refused_calls(context, step.request, calls)
                    if stream:
                        async with step.stream(run.ctx) as events:
                            async for _event in events:
                                pass
                elif Agent.is_call_tools_node(step):
                    calls = _tool_calls(step.model_response)
            result = run.result
        assert result is not None
        return result.output, result.all_messages()

    def _note_refused_calls(
        self,
        context: AgentContext,
        request: ModelRequest,
        calls: dict[str, tuple[str, Any]],
    ) -> None:
        """Record calls pydantic-ai refused (unknown tool, bad arguments)."""
        turn = context.turn
        for part in request.parts:
            refused = _refusal(part)
            if refused is None:
                continue
            call_id, tool_name, refusal = refused
            name, arguments = calls.get(call_id, (tool_name, {}))
            turn.emit_nowait(
                ToolCalled(agent_id=turn.agent_id, tool=name, arguments=arguments)
            )
            turn.emit_nowait(
                ToolResult(
                    agent_id=turn.agent_id,
                    tool=name,
                    ok=False,
                    summary=refusal[: core.MAX_SUMMARY],
                )
            )

    # ---- the fenced protocol ---------------------------------------------------------

    async def _fenced(
        self,
        context: AgentContext,
        endpoint: Endpoint,
        history: list[ModelMessage],
        limits: UsageLimits,
    ) -> tuple[str, list[ModelMessage]]:
        options = self._run_options(context, endpoint, [])
        prompt, messages = turn_input(context), list(history)
        await give_way()  # the prompt is built; pydantic-ai's run starts
        retried, answer = False, ""
        used_requests = used_tokens = 0
        for _step in range(limits.request_limit or 8):
            result = await self.agent.run(
                prompt,
                message_history=messages,
                usage_limits=_remaining(limits, used_requests, used_tokens),
                **options,
            )
            usage = result.usage
            used_requests += usage.requests
            used_tokens += usage.total_tokens or 0
            output = result.output
            if result.response.finish_reason == "length":
                output = _cut_reply(context, output, options["model_settings"])
            try:
                reply = parse_reply(output)
            except FencedError as error:
                if retried:
                    raise TurnFailed(
                        f"The model's reply did not follow the fenced protocol: {error}"
                    ) from None
                retried, prompt = True, _asked_again(prompt, str(error))
                continue
            answer = reply.text
            follow_up, retry = await self._act(context, reply, retried)
            retried = retried or retry
            if retry:
                # The refused reply is left out of the retry: a small model at
                # temperature 0 shown its own reply sends it again, whatever it
                # is told; asked again with the reason, it may not.
                prompt = _asked_again(prompt, "\n\n".join(follow_up))
                continue
            messages = result.all_messages()
            if not follow_up:
                return answer or _summary(context), messages
            prompt = "\n\n".join(follow_up)
        return answer or _summary(context), messages

    async def _act(
        self, context: AgentContext, reply: Any, retried: bool
    ) -> tuple[list[str], bool]:
        """Carry out a fenced reply; (what to tell the model next, retry used).

        Every line goes through :func:`_offered`: a fenced reply is text, and a
        line naming a tool the agent's bundle does not give it (a docstring
        agent's ``MESSAGE:``, say) is refused as a tool call would be.
        """
        follow_up: list[str] = []
        retry = False
        if reply.code is not None or reply.changes:
            tool, arguments = _edit_call(context, reply)
            violations = len(context.record.violations)
            ok, text = await _offered(context, tool, arguments)
            if not ok and text.removeprefix("Error: ").startswith(NO_CHANGE):
                # Its own code sent back: the model saw nothing to change (or
                # not how). Asked again it sends the same (the embedded model
                # at temperature 0, six wordings tried: bench/README.md,
                # ``docstring_update``), and pressing for a change where it
                # saw none invites a needless one: said at once instead.
                raise TurnFailed(
                    "No proposal: the model sent the code back unchanged. Ask "
                    "for the change in other words, or ask a question for an "
                    "answer in words."
                )
            if not ok and retried and len(context.record.violations) > violations:
                raise TurnFailed(refused_twice(context.record.violations[-1]))
            if not ok and not retried:
                retry = True
                follow_up.append(
                    f"{text.removeprefix('Error: ')}\nReply again with your "
                    "corrected complete source in one ```python block."
                )
            elif not ok:  # refused again: say so, rather than "completed"
                raise TurnFailed(
                    "No proposal: the agent's new source was refused twice; the "
                    f"last reason: {text.removeprefix('Error: ')}"
                )
        for node_id in reply.reads:
            _ok, text = await _offered(context, "read_node", {"node_id": node_id})
            follow_up.append(text)
        for query in reply.searches:
            _ok, text = await _offered(context, "search_nodes", {"query": query})
            follow_up.append(text)
        for node_id in reply.references:
            arguments = {"node_id": node_id}
            _ok, text = await _offered(context, "find_references", arguments)
            follow_up.append(text)
        for node_id, request in reply.messages:
            arguments = {"node_id": node_id, "request": request}
            await _offered(context, "message_node", arguments)
        for request in reply.ask_parent:
            await _offered(context, "ask_parent", {"request": request})
        if reply.question is not None:
            question, options = reply.question
            arguments = {"question": question, "options": list(options)}
            _ok, text = await _offered(context, "ask_user", arguments)
            follow_up.append(text)
        return follow_up, retry


async def _offered(
    context: AgentContext, tool: str, arguments: dict[str, Any]
) -> tuple[bool, str]:
    """A fenced line's tool call, when the agent's bundle offers that tool;
    otherwise an error for the model and nothing done.
    """
    if tool not in context.bundle.tool_names:
        return False, f"Error: {tool} is not one of your tools."
    return await core.call_tool(context, tool, arguments, core.IMPLEMENTATIONS[tool])


def _edit_call(context: AgentContext, reply: Any) -> tuple[str, dict[str, Any]]:
    """The tool a fenced reply's code asks for, and its arguments: a rewrite
    of the agent's node, a new file (``CREATE_FILE``) or a change set
    (``CHANGE`` blocks) — or, a block of tests or of several definitions
    without those lines, what its shape says (``block_shapes.py``).
    """
    if reply.changes:
        changes = [
            {
                "node_id" if target.startswith("rm_") else "path": target,
                "new_source": code,
            }
            for target, code in reply.changes
        ]
        return "propose_changes", {"changes": changes, "summary": reply.summary}
    if reply.new_file is not None:
        arguments = {
            "path": reply.new_file,
            "content": reply.code,
            "reason": reply.text,
        }
        return "create_file", arguments
    if (shaped := read_block(context, reply.code, reply.text)) is not None:
        return shaped
    return "rewrite_self", {"new_source": reply.code, "reasoning": reply.text}


def reply_cap(context: AgentContext) -> int:
    """Tokens one reply of the embedded model may have: room for the node's
    source twice over (~3.5 characters a token) plus a test file's worth,
    within :data:`MAX_REPLY_TOKENS`.
    """
    room = MIN_REPLY_TOKENS + 2 * len(context.own_source()) // 3
    return min(MAX_REPLY_TOKENS, room)


MIN_REPLY_TOKENS = 512
"""A small function's rewrite takes 20-150 tokens, a few tests 60-200."""
MAX_REPLY_TOKENS = 2048
"""At ~16-40 tokens a second on two cores: a minute or two, no more."""


def _cut_reply(context: AgentContext, output: str, settings: Any) -> str:
    """A reply the cap cut: its block of tests up to its last whole line that
    leaves whole Python (a model that writes tests on and on has written the
    first ones), or a :class:`TurnFailed` saying the reply was cut.
    """
    cap = settings.get("max_tokens")
    opened = re.search(r"^[ \t]*```[ \t]*(?:python3?|py)?[ \t]*\n", output, re.M)
    if opened is not None and "```" not in output[opened.end() :]:
        for code in whole_prefixes(output[opened.end() :]):
            shaped = read_block(context, code, "")
            if shaped is not None and shaped[0] == "create_file":
                return f"{output[: opened.end()]}{code}\n```\n"
    limit = f"its limit of {cap} tokens" if cap else "the server's length limit"
    raise TurnFailed(
        f"No proposal: the model's reply reached {limit} before it ended, so it "
        "was not used. Ask for less at a time, e.g. one test or one change."
    )


def _asked_again(asked: str, reason: str) -> str:
    """The input of a fenced retry: what was asked, then why the reply was not
    taken and what to send instead.
    """
    return f"{asked}\n\nYour last reply was refused: {reason}"


def _local_grammar(context: AgentContext) -> str:
    """The grammar of a fenced turn on the embedded model (llama.cpp; another
    server may not take one): a guarded turn's reply keeps the code
    (``guided.py``), any other ends at its code block (``FENCED_GRAMMAR``).
    """
    if context.guard is not None:
        grammar = keep_code_grammar(context.guard, context.shown_own_source())
        if grammar is not None:
            return grammar
    return FENCED_GRAMMAR


REFUSED_BY_PYDANTIC_AI = ("validation_error", "unknown_tool", "unavailable_tool")
"""Retry causes of calls refused before a tool ran; a tool's own failures are
recorded by ``call_tool``."""


def graph_step(turn: Turn) -> HumanChat | None:
    """The graph step request among the turn's triggers (its bundle and base)."""
    for stored in turn.events:
        event = stored.event
        if isinstance(event, HumanChat) and event.graph_run_id is not None:
            return event
    return None


def _refusal(part: object) -> tuple[str, str, str] | None:
    """The tool call pydantic-ai refused, if ``part`` is such a refusal: the
    call's id, its tool, and why.

    pydantic-ai 2 sends a refusal as a ``ToolReturnPart`` whose ``outcome`` is
    ``retried`` (``retry.cause`` says why); older versions as a ``RetryPromptPart``.
    """
    if isinstance(part, RetryPromptPart):
        if part.tool_name is None:
            return None
        return part.tool_call_id, part.tool_name, part.model_response()
    if not isinstance(part, ToolReturnPart) or part.outcome != "retried":
        return None
    if part.retry is None or part.retry.cause not in REFUSED_BY_PYDANTIC_AI:
        return None
    content = part.content
    if isinstance(content, list):  # pydantic validation errors
        why = "Invalid arguments: " + "; ".join(
            f"{'.'.join(str(x) for x in e.get('loc', ())) or 'arguments'}: "
            f"{e.get('msg', e)}"
            if isinstance(e, dict)
            else str(e)
            for e in content
        )
    else:
        why = str(content)
    return part.tool_call_id, part.tool_name, why


def _tool_calls(response: ModelResponse) -> dict[str, tuple[str, Any]]:
    calls: dict[str, tuple[str, Any]] = {}
    for part in response.parts:
        if isinstance(part, ToolCallPart):  # part_kind "tool-call", not built-in
            try:
                arguments = part.args_as_dict()
            except Exception:  # invalid JSON from the model: keep it as text
                arguments = {"raw": str(part.args)}
            calls[part.tool_call_id] = (part.tool_name, arguments)
    return calls


def _remaining(limits: UsageLimits, requests: int, tokens: int) -> UsageLimits:
    request_limit = limits.request_limit
    total = limits.total_tokens_limit
    if request_limit is not None and requests >= request_limit:
        raise UsageLimitExceeded(f"the request limit of {request_limit} was reached")
    if total is not None and tokens >= total:
        raise UsageLimitExceeded(f"the limit of {total} tokens was reached")
    return UsageLimits(
        request_limit=None if request_limit is None else request_limit - requests,
        total_tokens_limit=None if total is None else total - tokens,
    )


def _summary(context: AgentContext) -> str:
    record = context.record
    if record.proposals:
        return f"Proposed {', '.join(p.id for p in record.proposals)}."
    if record.messages_sent:
        return f"Messaged {', '.join(record.messages_sent)}."
    return ""


def describe_model_error(
    error: BaseException, endpoint: Endpoint, kernel: AgentKernel
) -> str:
    """A message a person understands for a failed model request."""
    settings = kernel.services.config.model
    # Only what ``resilient.py`` retries was tried more than once.
    tried = (
        f" (tried {settings.retries + 1} times)"
        if settings.retries
        and retryable(error, http=not (endpoint.local and endpoint.temperature == 0))
        else ""
    )
    where = endpoint.describe()
    if isinstance(error, ModelHTTPError):
        withheld = (
            f" Your key (from {endpoint.key_withheld}) was not sent there: you did "
            "not configure or approve that server for this project."
            if endpoint.key_withheld and error.status_code in (401, 403)
            else ""
        )
        return (
            f"The model server ({where}) answered HTTP {error.status_code}{tried}: "
            f"{_error_detail(error)[:400]}{withheld}"
        )[:600]
    if isinstance(error, ModelTimeoutError) or "timed out" in str(error).lower():
        return (
            f"The model ({where}) did not answer within "
            f"{settings.timeout_s:g} s (model.timeout_s){tried}."
        )
    if isinstance(error, ModelConnectionError):
        return (
            f"Cannot reach the model server ({where}){tried}: {_root_cause(error)}. "
            + (
                "Are they running, and is model.endpoints right?"
                if len(endpoint.servers) > 1
                else "Is it running, and is model.base_url right?"
            )
        )
    if cut_short(error):
        return (
            f"The model server ({where}) cut its streamed answer short{tried}: the "
            "stream ended without its last chunk (no finish_reason, no [DONE]), so "
            "the answer was not used. A proxy or the server closed the connection "
            "mid-answer; if this server never sends finish_reason, set "
            "model.stream: false."
        )
    return (
        f"The model server ({where}) sent an answer that is not a chat completion: "
        f"{_error_detail(error)}. Is model.base_url an OpenAI-compatible endpoint "
        "(usually ending in /v1)?"
    )[:600]


def _without_advice(text: str) -> str:
    """pydantic-ai's message without its advice for programmers (docs links)."""
    return re.split(r"\.\s+(?:Consider|See)\b", text, maxsplit=1)[0].rstrip(".")


def _root_cause(error: BaseException) -> str:
    """The innermost cause's message, not the SDK's "Connection error."."""
    text = str(error)
    cause = error.__cause__ or error.__context__
    while cause is not None:
        text = str(cause) or text
        cause = cause.__cause__ or cause.__context__
    return text.strip().rstrip(".") or type(error).__name__


def describe_limit(context: AgentContext) -> str:
    """The run reached its limit of model requests, and where it is set (a
    token budget says so itself: ``budgets.limit_failure``).
    """
    agents, bundle = context.services.config.agents, context.bundle
    own = bundle.limits and bundle.limits.max_turns
    value = own or agents.max_turns
    where = f"limits.max_turns of bundle {bundle.name}" if own else "agents.max_turns"
    return (
        f"The run stopped at its limit of {value} model requests ({where}) before "
        "the model finished; raise the limit or ask for less."
    )


def tokens_of(usage: Any) -> tuple[int, int, int]:
    """(input, output, cached input) tokens of one response, as the server
    reported them (0 where it did not).
    """
    return (
        usage.input_tokens or 0,
        usage.output_tokens or 0,
        getattr(usage, "cache_read_tokens", 0) or 0,
    )


def _error_detail(error: BaseException) -> str:
    """The server's own message if it sent one, else the error's."""
    body = getattr(error, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]  # {"error": {"message": ...}}
    if isinstance(body, dict) and body.get("message"):
        return str(body["message"])
    if isinstance(body, str) and body.strip():
        return body.strip()
    return str(getattr(error, "message", "") or error)
