"""What ``create_file`` and ``propose_changes`` propose (DESIGN §15).

Both only *build* a proposal — a ``new_file`` or a ``change_set`` — from what
the model asked for; the tools in ``tools.py`` store it like any other
(``rewrite_proposed``, the tests' first check). Nothing is written: a person
accepts or rejects the proposal as one.

- ``create_file(path, content, reason)``: a file inside the project, outside
  ``secrets.exclude``, that does not exist yet (an existing path is refused
  with the tools that change it instead);
- ``propose_changes(changes, summary)``: each change names its target by
  ``node_id`` (a rewrite), by ``path`` plus the definition its ``new_source``
  names (that definition rewritten, or added at the end of the file when the
  file has none of that name), or by ``path`` alone for a new file. The
  turn's intent guard judges each rewrite (and refuses new definitions), as
  for ``rewrite_self``.

Every refusal is a :class:`~remora_core.review.source_checks.ProposalError`
(or :class:`~remora_core.project_paths.PathRefused`) whose text the model can
act on.
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any

from remora_core.agents.guarding import check_rewrite, refuse_new_node
from remora_core.model import ProposalStatus
from remora_core.project_paths import PathRefused, is_secret, resolve_path
from remora_core.review.change_sets import (
    MAX_MEMBERS,
    dependencies,
    new_file_member,
    path_member,
    refuse_overlaps,
    rewrite_member,
    set_diff,
)
from remora_core.review.proposals import Member, Proposal
from remora_core.review.source_checks import ProposalError

if TYPE_CHECKING:
    from remora_core.agents.context import AgentContext
    from remora_core.review.checks import Check


def project_path(context: AgentContext, path: Any) -> str:
    """The project path ``path`` names; PathRefused if an agent may not use it."""
    root = context.services.root
    if root is None:
        raise PathRefused("this file is outside every project: no new files here")
    if not isinstance(path, str):
        raise PathRefused("give the path as a string relative to the project root")
    return resolve_path(root, path, context.services.config.secrets.exclude)


def _exists(context: AgentContext, path: str) -> bool:
    root = context.services.root
    target = root / path if root is not None else None
    on_disk = target is not None and (target.exists() or target.is_symlink())
    return on_disk or context.services.read_text(path) is not None


def new_file_proposal(
    context: AgentContext, path: Any, content: Any, reason: str
) -> Proposal:
    """The ``new_file`` proposal of ``create_file``."""
    relative = project_path(context, path)
    member = new_file_member(relative, content, _exists(context, relative))
    node = context.node
    return build_proposal(
        context,
        "new_file",
        (member,),
        reason,
        anchor=node.file_path if node.file_path != relative else None,
    )


def change_set_proposal(context: AgentContext, changes: Any, summary: Any) -> Proposal:
    """The ``change_set`` proposal of ``propose_changes``."""
    if not isinstance(summary, str) or not summary.strip():
        raise ProposalError("give a summary: one line saying what the changes do")
    if not isinstance(changes, list) or not changes:
        raise ProposalError("changes is a list of {node_id | path, new_source}")
    if len(changes) > MAX_MEMBERS:
        raise ProposalError(f"a change set holds at most {MAX_MEMBERS} changes")
    members: list[Member] = []
    checks: list[Check] = []
    for index, change in enumerate(changes):
        try:
            member, check = _member(context, change)
        except (ProposalError, PathRefused) as error:
            raise ProposalError(f"change {index}: {error}") from None
        members.append(member)
        if check is not None and check not in checks:
            checks.append(check)
    refuse_overlaps(members)
    node = context.node
    paths = {m.path for m in members}
    return build_proposal(
        context,
        "change_set",
        tuple(members),
        summary.strip(),
        anchor=node.file_path if node.file_path not in paths else None,
        checks=tuple(checks),
    )


def _member(context: AgentContext, change: Any) -> tuple[Member, Check | None]:
    """One change's member, and its guard's check (rewrites only)."""
    if not isinstance(change, dict):
        raise ProposalError("each change is an object {node_id | path, new_source}")
    source = change.get("new_source", change.get("content"))
    if not isinstance(source, str) or not source.strip():
        raise ProposalError("give its new_source (the whole definition or file)")
    services = context.services
    secrets = services.config.secrets.exclude
    node_id = change.get("node_id")
    if node_id is not None:
        node = services.graph.get(node_id) if isinstance(node_id, str) else None
        if node is None:
            raise ProposalError(f"no node with id {node_id!r}")
        if is_secret(node.file_path, secrets):
            raise PathRefused(f"{node.file_path} matches secrets.exclude")
        text = _text(context, node.file_path)
        member = rewrite_member(node, text, source)
        return member, _guarded(context, text, member)
    path = project_path(context, change.get("path"))
    if not _exists(context, path):
        return new_file_member(path, source, False), None
    text = _text(context, path)
    member = path_member(services.graph, path, text, source)
    if member.kind == "new_node":
        refuse_new_node(context)
        return member, None
    return member, _guarded(context, text, member)


def _text(context: AgentContext, path: str) -> bytes:
    text = context.services.read_text(path)
    if text is None:
        raise ProposalError(f"{path} cannot be read right now")
    return text


def _guarded(context: AgentContext, text: bytes, member: Member) -> Check | None:
    return check_rewrite(
        context, text, member.start_byte, member.old_source, member.new_source
    )


def build_proposal(
    context: AgentContext,
    kind: str,
    members: tuple[Member, ...],
    reasoning: str,
    *,
    anchor: str | None,
    checks: tuple[Check, ...] = (),
) -> Proposal:
    """A ``new_file`` or ``change_set`` proposal of ``members`` by the turn's
    agent (``anchor``: the asking node's file when none of theirs).
    """
    services = context.services
    first = members[0]
    diff = first.diff if kind == "new_file" else set_diff(members, services.read_text)
    return Proposal(
        id=f"pr_{uuid.uuid4().hex[:12]}",
        node_id=context.node.id,
        run_id=context.turn.run_id,
        kind=kind,
        file_path=first.path,
        base_version=None,
        base_hash=first.base_hash,
        start_byte=0,
        end_byte=0,
        old_source="",
        new_source=first.new_source if kind == "new_file" else "",
        diff=diff,
        reasoning=reasoning,
        status=ProposalStatus.PENDING,
        feedback=None,
        created_at=time.time(),
        decided_at=None,
        checks=checks,
        members=members,
        depends_on=dependencies(members) if kind == "change_set" else (),
        anchor_path=anchor,
    )
