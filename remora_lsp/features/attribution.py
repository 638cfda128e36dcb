"""Which lines came from which agent, over LSP (DESIGN §10, §11).

- ``remora.attribution {uri}`` → ``[{range, agent_id, proposal_id,
  accepted_at}]``: line ranges of the current text (the open buffer, else the
  disk) still written by an accepted proposal; lines edited since do not count.
- ``remora.trailers {}`` → ``{trailers}`` (an addition, what ``remora
  trailers`` prints): ``Remora-Agent: rm_… (pr_…)`` lines for accepted
  proposals not yet committed.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from remora_lsp.arguments import single_object

if TYPE_CHECKING:
    from remora_lsp.server import RemoraLanguageServer

log = logging.getLogger(__name__)


async def attribution(ls: RemoraLanguageServer, uri: Any) -> list[dict[str, Any]]:
    """The attributed line ranges of the document at ``uri``."""
    if not isinstance(uri, str) or not uri:
        raise JsonRpcInvalidParams("remora.attribution needs uri as a string")
    await ls.projects.all_loaded()
    project, path = ls.projects.locate(uri)
    app = ls.app(project)
    if not app.started:
        return []
    ranges = await app.attribution.ranges(path)
    if ranges is None:
        raise JsonRpcInvalidParams(f"{uri} cannot be read")
    return ranges


def register(server: RemoraLanguageServer) -> None:
    """Register ``remora.attribution`` and ``remora.trailers``."""

    @server.command("remora.attribution")
    async def attribution_command(ls, *args: Any) -> list[dict[str, Any]]:
        arguments = single_object(args, "remora.attribution")
        return await attribution(ls, arguments.get("uri"))

    @server.command("remora.trailers")
    async def trailers_command(ls, *args: Any) -> dict[str, list[str]]:
        single_object(args, "remora.trailers")
        await ls.projects.all_loaded()
        lines: list[str] = []
        for project in ls.projects:
            app = ls.app(project)
            if project.root is not None and app.started:
                lines += await app.attribution.trailers()
        return {"trailers": lines}
