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
from remora_core.attribution import attribution_json, trailers

from remora_lsp.features.commands import single_object

if TYPE_CHECKING:
    from remora_lsp.server import RemoraLanguageServer

log = logging.getLogger(__name__)


async def attribution(ls: RemoraLanguageServer, uri: Any) -> list[dict[str, Any]]:
    """The attributed line ranges of the document at ``uri``."""
    if not isinstance(uri, str) or not uri:
        raise JsonRpcInvalidParams("remora.attribution needs uri as a string")
    await ls.projects.all_loaded()
    project, path = ls.projects.locate(uri)
    if project.agents is None:
        return []
    text = project.agents.services.read_text(path)
    if text is None:
        raise JsonRpcInvalidParams(f"{uri} cannot be read")
    return await attribution_json(project.database, path, text)


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
            if project.root is not None and project.agents is not None:
                read = project.agents.services.read_text
                lines += await trailers(project.root, project.database, read)
        return {"trailers": lines}
