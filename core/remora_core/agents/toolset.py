"""The tools a turn offers the model in the ``tools`` protocol.

Core tools (``tools.py``) are exposed with signatures and docstrings written
for the model — pydantic-ai builds each JSON schema from them and validates
the model's arguments before the tool runs (a bad call gets pydantic-ai's retry
message). A bundle's ``tools`` list narrows the core set; its ``.pym`` scripts
run in the sandbox; extensions add their ``@tool`` methods.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from pydantic_ai import RunContext, Tool
from pydantic_ai.messages import ToolReturn

from remora_core.agents import looking
from remora_core.agents import tools as core
from remora_core.agents.context import AgentContext

if TYPE_CHECKING:
    from remora_core.agents.sandbox import PymTool

Ctx = RunContext[AgentContext]


async def _run(ctx: Ctx, tool: str, /, **arguments: Any) -> ToolReturn:
    # Positional-only: a tool's own argument may be called ``name`` or ``ctx``.
    ok, text = await core.call_tool(
        ctx.deps, tool, arguments, core.IMPLEMENTATIONS[tool]
    )
    return ToolReturn(return_value=text, metadata={"ok": ok})


async def rewrite_self(ctx: Ctx, new_source: str) -> ToolReturn:
    """Propose your complete new source (the whole definition). A person reviews it.

    Args:
        new_source: your entire new definition, from its `def`/`class` line
            (or first decorator) to its end.

    """
    return await _run(ctx, "rewrite_self", new_source=new_source)


async def propose_new_node(
    ctx: Ctx,
    kind: Literal["function", "class", "method"],
    name: str,
    source: str,
    insert_after: str | None = None,
) -> ToolReturn:
    """Propose a new definition next to you (or inside you, if you are a file or class).

    Args:
        kind: what to create.
        name: its name.
        source: its complete source.
        insert_after: id of a sibling definition to put it after.

    """
    return await _run(
        ctx,
        "propose_new_node",
        kind=kind,
        name=name,
        source=source,
        insert_after=insert_after,
    )


async def create_file(ctx: Ctx, path: str, content: str, reason: str) -> ToolReturn:
    """Propose a new file (e.g. tests/test_<module>.py); a person reviews it.

    Args:
        path: the new file's path, relative to the project root; it must not exist.
        content: the file's whole content.
        reason: one line saying why.

    """
    return await _run(ctx, "create_file", path=path, content=content, reason=reason)


async def propose_changes(
    ctx: Ctx, changes: list[dict[str, str]], summary: str
) -> ToolReturn:
    """Propose several edits (in several files, new files) reviewed as one.

    Args:
        changes: each {"node_id": id, "new_source": whole new definition}, or
            {"path": file, "new_source": a whole definition} (replaces the
            definition of that name in the file, else adds it), or
            {"path": new file, "new_source": its whole content}.
        summary: one line saying what the changes do together.

    """
    return await _run(ctx, "propose_changes", changes=changes, summary=summary)


# ---- looking around the project (looking.py) ------------------------------------


async def search_nodes(
    ctx: Ctx,
    query: str,
    kind: Literal["file", "class", "function", "method"] | None = None,
    limit: int = looking.DEFAULT_RESULTS,
) -> ToolReturn:
    """Find nodes of the project by name, qualified name or path: one line
    each with its id, kind, name, place and first line. At most
    {MAX_RESULTS} results of {LINE_CHARS} characters, {ANSWER_CHARS} in all;
    files matching secrets.exclude are never listed.

    Args:
        query: words of a name, qualified name or path (e.g. "parse_order").
        kind: only nodes of this kind.
        limit: how many results (1-{MAX_RESULTS}).

    """
    return await _run(ctx, "search_nodes", query=query, kind=kind, limit=limit)


async def read_node(ctx: Ctx, node_id: str) -> ToolReturn:
    """Read any node's source and location (at most {READ_CHARS} characters:
    a longer one is cut and its parts listed by id). Files matching
    secrets.exclude are refused.

    Args:
        node_id: the node's id (rm_xxxxxxxx), or path::qualified.name.

    """
    return await _run(ctx, "read_node", node_id=node_id)


async def find_references(ctx: Ctx, node_id: str) -> ToolReturn:
    """List who calls a node and which files import its file (at most
    {MAX_REFERENCES} of each, {ANSWER_CHARS} characters in all).

    Args:
        node_id: the node's id (rm_xxxxxxxx), or path::qualified.name.

    """
    return await _run(ctx, "find_references", node_id=node_id)


for _tool in (search_nodes, read_node, find_references):
    # The bounds, from looking.py, in the description the model reads.
    _tool.__doc__ = (_tool.__doc__ or "").format(
        MAX_RESULTS=looking.MAX_RESULTS,
        LINE_CHARS=looking.LINE_CHARS,
        ANSWER_CHARS=f"{looking.ANSWER_CHARS:,}",
        READ_CHARS=f"{looking.READ_CHARS:,}",
        MAX_REFERENCES=looking.MAX_REFERENCES,
    )


async def get_my_callers(ctx: Ctx) -> ToolReturn:
    """List the nodes that call you."""
    return await _run(ctx, "get_my_callers")


async def get_my_callees(ctx: Ctx) -> ToolReturn:
    """List the nodes you call."""
    return await _run(ctx, "get_my_callees")


async def message_node(ctx: Ctx, node_id: str, request: str) -> ToolReturn:
    """Ask another node's agent to do something (for example, to change itself).

    Args:
        node_id: the node's id (rm_xxxxxxxx).
        request: what you ask.

    """
    return await _run(ctx, "message_node", node_id=node_id, request=request)


async def ask_parent(ctx: Ctx, request: str) -> ToolReturn:
    """Ask your parent node's agent (your class or file).

    Args:
        request: what you ask.

    """
    return await _run(ctx, "ask_parent", request=request)


async def send_message(ctx: Ctx, to: str, content: str) -> ToolReturn:
    """Send a message.

    Args:
        to: a node id, "parent", "broadcast:children" or "broadcast:siblings".
        content: the message.

    """
    return await _run(ctx, "send_message", to=to, content=content)


async def subscribe(
    ctx: Ctx,
    event_types: list[str] | None = None,
    from_agents: list[str] | None = None,
    path_glob: str | None = None,
    tags: list[str] | None = None,
    nodes: list[str] | None = None,
) -> ToolReturn:
    """Be woken up by matching events from now on (all given fields must match).

    Args:
        event_types: e.g. ["content_changed"].
        from_agents: sender ids (globs allowed).
        path_glob: files the event is about, e.g. "src/*.py".
        tags: message tags.
        nodes: ids of nodes the event must concern.

    """
    return await _run(
        ctx,
        "subscribe",
        event_types=event_types,
        from_agents=from_agents,
        path_glob=path_glob,
        tags=tags,
        nodes=nodes,
    )


async def unsubscribe(ctx: Ctx, subscription_id: str) -> ToolReturn:
    """Remove one of your subscriptions.

    Args:
        subscription_id: the id subscribe returned.

    """
    return await _run(ctx, "unsubscribe", subscription_id=subscription_id)


async def kv_get(ctx: Ctx, key: str) -> ToolReturn:
    """Read a value from your memory (null if unset).

    Args:
        key: the key.

    """
    return await _run(ctx, "kv_get", key=key)


async def kv_set(ctx: Ctx, key: str, value: Any) -> ToolReturn:
    """Remember a JSON value under a key.

    Args:
        key: the key.
        value: any JSON value.

    """
    return await _run(ctx, "kv_set", key=key, value=value)


async def ask_user(
    ctx: Ctx, question: str, options: list[str] | None = None
) -> ToolReturn:
    """Ask the person a question and wait for the answer.

    Args:
        question: the question.
        options: possible answers to choose from, if any.

    """
    return await _run(ctx, "ask_user", question=question, options=options)


CORE_TOOLS: dict[str, Callable[..., Any]] = {
    fn.__name__: fn
    for fn in (
        rewrite_self,
        propose_new_node,
        create_file,
        propose_changes,
        read_node,
        search_nodes,
        find_references,
        get_my_callers,
        get_my_callees,
        message_node,
        ask_parent,
        send_message,
        subscribe,
        unsubscribe,
        kv_get,
        kv_set,
        ask_user,
    )
}


@functools.cache
def core_tools() -> dict[str, Tool[AgentContext]]:
    """The core tools, built once: a tool's schema takes ~1 ms to build."""
    return {name: Tool(fn, takes_ctx=True) for name, fn in CORE_TOOLS.items()}


def pym_tool(tool: PymTool) -> Tool[AgentContext]:
    """A sandboxed ``.pym`` script as a tool (its ``Input()`` are the parameters)."""

    async def run(ctx: Ctx, **arguments: Any) -> ToolReturn:
        async def implementation(context: AgentContext, **args: Any) -> str:
            from remora_core.agents.host import host_functions
            from remora_core.agents.sandbox import PymError

            try:
                result = await context.services.sandbox.run(
                    tool, args, host_functions(context, tool.name)
                )
            except PymError as error:  # the script's failure, told to the model
                raise core.ToolError(str(error)) from None
            printed = f"\n(printed: {result.printed.strip()})" if result.printed else ""
            return json.dumps(result.value, default=str) + printed

        ok, text = await core.call_tool(ctx.deps, tool.name, arguments, implementation)
        return ToolReturn(return_value=text, metadata={"ok": ok})

    return Tool.from_schema(
        run,
        name=tool.name,
        description=tool.description,
        json_schema=tool.parameters,
        takes_ctx=True,
    )


def extension_tool(method: Callable[..., Any]) -> Tool[AgentContext]:
    """An extension's ``@tool`` method as a tool, recorded like the core ones.

    The schema comes from the method's own signature and docstring; arguments
    are validated against it before the method runs.
    """
    plain = Tool(method)
    name = plain.name

    async def run(ctx: Ctx, **arguments: Any) -> ToolReturn:
        async def implementation(context: AgentContext, **args: Any) -> str:
            result = method(**args)
            if inspect.isawaitable(result):
                result = await result
            return (
                result if isinstance(result, str) else json.dumps(result, default=str)
            )

        ok, text = await core.call_tool(ctx.deps, name, arguments, implementation)
        return ToolReturn(return_value=text, metadata={"ok": ok})

    return Tool.from_schema(
        run,
        name=name,
        description=plain.description,
        json_schema=plain.function_schema.json_schema,
        takes_ctx=True,
    )
