"""Host functions a ``.pym`` tool script may call with ``@external``.

They run in the server, on behalf of the agent whose turn runs the script, with
the same rules as its tools: node sources through the graph, files only inside
the project and never secrets, writes only to the agent's copy-on-write overlay
— never to a file: at the end of the turn they become a proposal the person
reviews (``overlay_proposals.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from remora_core.agents import tools
from remora_core.agents.workspace import MemoryFull
from remora_core.index.cards import node_ref
from remora_core.project_paths import PathRefused, is_secret

if TYPE_CHECKING:
    from remora_core.agents.context import AgentContext


def host_functions(
    context: AgentContext, tool: str = "a .pym tool"
) -> dict[str, Callable[..., Any]]:
    """The functions a script (the tool named ``tool``) may declare, bound to
    this turn.
    """
    services, me = context.services, context.agent_id

    async def read_node(node_id: str) -> str:
        node = tools._node(context, node_id)
        if is_secret(node.file_path, services.config.secrets.exclude):
            # The same refusal as the core tool; a ValueError inside the sandbox.
            raise PathRefused(f"{node.file_path} matches secrets.exclude; not shown")
        return services.source_of(node)

    async def get_my_callers() -> list[dict[str, Any]]:
        return [node_ref(n) for n in services.graph.callers(me)]

    async def get_my_callees() -> list[dict[str, Any]]:
        return [node_ref(n) for n in services.graph.callees(me)]

    async def kv_get(key: str) -> Any:
        return await services.kv.get(me, key)

    async def kv_set(key: str, value: Any) -> None:
        # The same budget as the core tool: a script a model drives must not
        # grow the store more than the model could itself.
        budget = services.config.limits.kv_bytes_per_agent
        try:
            await services.kv.set(me, key, value, budget=budget)
        except MemoryFull as error:
            tools.refuse(context, "limits.kv_bytes_per_agent", str(error))
            raise ValueError(f"{error}; remove or shorten other keys first") from None

    async def read_file(path: str) -> str:
        data = await services.overlay.read(me, path)
        return data.decode("utf-8", errors="replace")

    async def write_file(path: str, content: str) -> None:
        await services.overlay.write(me, path, content.encode("utf-8"))
        if tool not in context.record.wrote_files:  # proposed at the turn's end
            context.record.wrote_files.append(tool)

    return {
        "read_node": read_node,
        "get_my_callers": get_my_callers,
        "get_my_callees": get_my_callees,
        "kv_get": kv_get,
        "kv_set": kv_set,
        "read_file": read_file,
        "write_file": write_file,
    }
