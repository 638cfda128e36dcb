"""A ``.pym`` tool's overlay writes become a proposal at the end of the turn.

A script writes files only to its agent's copy-on-write overlay
(``workspace.Overlay``), never to the project. When a turn in which a script
wrote ends, every file of the overlay that differs from the project becomes
one proposal the person reviews like any other: a ``new_file`` when it is
one new file, else a ``change_set`` (a changed existing file is a member
replacing its whole text). The overlay is then cleared — its content lives on
in the proposal: never lost, never written behind the person's back.

Skipped, and said in the log and to the model's record: deletions (no
proposal deletes a file), binary or non-UTF-8 content, files matching
``secrets.exclude`` (the overlay refuses to write them in the first place).
When no proposal can be made, the overlay is kept.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from remora_core.agents.change_tools import build_proposal
from remora_core.agents.tools import propose
from remora_core.project_paths import is_secret
from remora_core.review.change_sets import MAX_MEMBERS, file_member, new_file_member
from remora_core.review.source_checks import ProposalError

if TYPE_CHECKING:
    from remora_core.agents.context import AgentContext
    from remora_core.review.proposals import Member

log = logging.getLogger(__name__)


async def propose_overlay(context: AgentContext) -> str | None:
    """Turn the overlay into a proposal if a script wrote this turn; its id."""
    tools = context.record.wrote_files
    if not tools:
        return None
    services, me = context.services, context.agent_id
    members = _members(context, await services.overlay.changes(me))
    if not members:
        return None
    kind = (
        "new_file"
        if len(members) == 1 and members[0].kind == "new_file"
        else ("change_set")
    )
    paths = {m.path for m in members}
    node = context.node
    proposal = build_proposal(
        context,
        kind,
        tuple(members[:MAX_MEMBERS]),
        f"files written by {', '.join(tools)}",
        anchor=node.file_path if node.file_path not in paths else None,
    )
    await propose(context, proposal)
    await services.overlay.clear(me)
    return proposal.id


def _members(context: AgentContext, changes: dict[str, bytes | None]) -> list[Member]:
    services = context.services
    secrets = services.config.secrets.exclude
    members: list[Member] = []
    for path, content in sorted(changes.items()):
        why = None
        if content is None:
            why = "deleted: no proposal deletes a file"
        elif is_secret(path, secrets):
            why = "matches secrets.exclude"
        elif b"\x00" in content:
            why = "binary content"
        if why is None and content is not None:
            try:
                members.append(_member(context, path, content))
                continue
            except (UnicodeDecodeError, ProposalError) as error:
                why = str(error)
        if why and "is unchanged" not in why:
            log.info(
                "%s: overlay file %s not proposed: %s", context.agent_id, path, why
            )
    return members


def _member(context: AgentContext, path: str, content: bytes) -> Member:
    services = context.services
    text = content.decode("utf-8")
    base = services.read_text(path)
    if base is None:
        return new_file_member(path, text, False)
    file_node = services.graph.file_node(path)
    return file_member(path, base, text, file_node.id if file_node else None)
