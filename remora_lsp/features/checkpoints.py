"""Checkpoints of agents' state over LSP (DESIGN §10, §11).

- ``remora.checkpoint.create {label?}`` → ``{checkpoint_id}``
- ``remora.checkpoint.list {}`` → ``[{checkpoint_id, label, created_at,
  git_head}]``, newest first
- ``remora.checkpoint.restore {checkpoint_id}`` → ``{restored,
  files_differing}``: agents' state only; project files are never written.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from remora_lsp.arguments import single_object
from remora_lsp.features.commands import ensure_owner

if TYPE_CHECKING:
    from remora_core.history.checkpoints import Checkpoints

    from remora_lsp.server import RemoraLanguageServer

log = logging.getLogger(__name__)

CHECKPOINT_ID = re.compile(r"^cp_[0-9a-f]{12}$")


async def _checkpoints(ls: RemoraLanguageServer, what: str) -> Checkpoints:
    """The checkpoints of the (first) workspace project."""
    await ls.projects.all_loaded()
    for project in ls.projects:
        if project.root is None:
            continue
        ensure_owner(project, what)
        app = ls.app(project)
        if not app.started or not app.keeps_checkpoints:
            break
        return app.checkpoints
    raise JsonRpcInvalidParams(
        f"Remora cannot {what}: no workspace folder with a store is open"
    )


def register(server: RemoraLanguageServer) -> None:
    """Register the checkpoint commands."""

    @server.command("remora.checkpoint.create")
    async def checkpoint_create(ls, *args: Any) -> dict[str, str]:
        arguments = single_object(args, "remora.checkpoint.create")
        label = arguments.get("label")
        if label is not None and not isinstance(label, str):
            raise JsonRpcInvalidParams("remora.checkpoint.create: label is a string")
        checkpoints = await _checkpoints(ls, "take checkpoints")
        return {"checkpoint_id": await checkpoints.create(label)}

    @server.command("remora.checkpoint.list")
    async def checkpoint_list(ls, *args: Any) -> list[dict[str, Any]]:
        single_object(args, "remora.checkpoint.list")
        checkpoints = await _checkpoints(ls, "list checkpoints")
        return await checkpoints.list()

    @server.command("remora.checkpoint.restore")
    async def checkpoint_restore(ls, *args: Any) -> dict[str, Any]:
        arguments = single_object(args, "remora.checkpoint.restore")
        checkpoint_id = arguments.get("checkpoint_id")
        if not isinstance(checkpoint_id, str) or not CHECKPOINT_ID.match(checkpoint_id):
            raise JsonRpcInvalidParams(
                "remora.checkpoint.restore needs checkpoint_id like cp_ and 12 hex "
                f"digits, got {checkpoint_id!r}"
            )
        checkpoints = await _checkpoints(ls, "restore checkpoints")
        try:
            return await checkpoints.restore(checkpoint_id)
        except KeyError:
            raise JsonRpcInvalidParams(f"no checkpoint {checkpoint_id}") from None
