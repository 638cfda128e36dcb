"""Change sets and new files: edits reviewed and accepted as one (DESIGN §15).

A ``new_file`` proposal creates one file that does not exist yet; a
``change_set`` holds several :class:`~remora_core.review.proposals.Member`
edits — definitions in several files and new files. This module builds the
members from what an agent asked for, says which depend on which, and plans
the edits of (part of) a set against the current texts:

- a member names its target by ``node_id`` (a rewrite of that node), by
  ``path`` plus the definition named in its source (a rewrite of the
  definition of that name in that file, or a new definition at the end of
  the file when none has it), or by ``path`` alone for a file that does not
  exist yet (a new file);
- every member's span is in the whole text of its file when the set was made
  (``base_hash``). Planning refuses the whole set (stale) when any of its
  files changed since, or when a new file exists now: a set is applied all or
  nothing;
- member ``i`` depends on member ``j`` when ``i``'s new text uses a name
  ``j`` defines (a function ``j`` adds or rewrites, the module of a file ``j``
  creates): a partial accept must take both or neither;
- rejecting part of a set (:func:`refuse_rejecting`, :func:`without`) drops
  those members and keeps the rest pending, to be accepted as one later.
  Rejecting a member that others need is **refused**, naming them — never
  widened behind the person's back: the person may reject them together by
  naming them too (``members: [i, j]``), or reject the whole set. Rejecting
  a member that needs others is fine (what it needed stays, unused). Every
  member is rejected: the set is rejected as a whole.

Texts for a person number members from 1, as the editors show them; the
``members`` arguments and ``depends_on`` pairs are indices (from 0).
"""

from __future__ import annotations

import dataclasses
import keyword
import re
from typing import TYPE_CHECKING

from remora_core.discovery.parser import parse
from remora_core.model import NodeKind, NodeStatus
from remora_core.review.definition_edits import prepare_new_node, prepare_rewrite
from remora_core.review.diffs import file_diff, split_lines
from remora_core.review.edits import FileEdit, PlannedEdit
from remora_core.review.hidden_chars import added_hidden
from remora_core.review.proposals import Member, text_hash
from remora_core.review.source_checks import ProposalError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    import tree_sitter

    from remora_core.index.codegraph import CodeGraph
    from remora_core.model import CodeNode
    from remora_core.review.proposals import Proposal

DEFINED = re.compile(r"^(?:async[ \t]+)?(def|class)[ \t]+(\w+)", re.M)
"""A top-level definition's keyword and name in a member's source."""
MAX_MEMBERS = 50
"""Edits one change set may hold."""


class Stale(Exception):
    """A set (or new file) cannot be applied any more; the reason says why."""


def new_file_member(path: str, content: str, exists: bool) -> Member:
    """The member creating ``path`` with ``content``; ProposalError (for the
    model) if the file exists, the content is empty or adds hidden characters.
    """
    if exists:
        raise ProposalError(
            f"{path} exists already; to change it, rewrite its definitions "
            "(rewrite_self, or propose_changes with a node_id or a path and "
            "the definition's new source)"
        )
    if not isinstance(content, str) or not content.strip():
        raise ProposalError("the new file's content is empty")
    if (hidden := added_hidden("", content)) is not None:
        raise ProposalError(hidden)
    if path.endswith(".py"):
        _parses(path, content)
    text = content if content.endswith("\n") else content + "\n"
    diff = file_diff(path, [], split_lines(text), created=True)
    return Member(path, "new_file", None, "", 0, 0, "", text, diff)


def _parses(path: str, content: str) -> None:
    """ProposalError, saying where, when a new Python file does not parse
    (tree-sitter: whatever Python version the project uses).
    """
    root = parse(content.encode("utf-8", "replace")).root_node
    if not root.has_error:
        return
    line = _first_error_line(root)
    raise ProposalError(
        f"{path} does not parse (near line {line}); give the whole file, valid Python"
    )


def _first_error_line(node: tree_sitter.Node) -> int:
    """The 1-based line of the first syntax error under ``node``."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "ERROR" or current.is_missing:
            return current.start_point.row + 1
        stack.extend(reversed(current.children))
    return node.start_point.row + 1


def file_member(path: str, before: bytes, after: str, node_id: str | None) -> Member:
    """The member replacing the whole of ``path`` (a ``.pym`` tool's overlay
    write of an existing file); ProposalError if it changes nothing or adds
    hidden characters.
    """
    old = before.decode("utf-8", "replace")
    if old == after:
        raise ProposalError(f"{path} is unchanged")
    if (hidden := added_hidden(old, after)) is not None:
        raise ProposalError(hidden)
    diff = file_diff(path, split_lines(old), split_lines(after))
    return Member(
        path, "rewrite", node_id, text_hash(before), 0, len(before), old, after, diff
    )


def rewrite_member(node: CodeNode, file_text: bytes, new_source: str) -> Member:
    """The member rewriting ``node`` (validated as ``rewrite_self`` is)."""
    replacement, diff = prepare_rewrite(node, file_text, new_source)
    start, end = node.span.start_byte, node.span.end_byte
    old = file_text[start:end].decode("utf-8", "replace")
    return Member(
        node.file_path,
        "rewrite",
        node.id,
        text_hash(file_text),
        start,
        end,
        old,
        replacement,
        diff,
    )


def path_member(
    graph: CodeGraph, path: str, file_text: bytes, new_source: str
) -> Member:
    """The member for ``path`` plus ``new_source``: a rewrite of the
    definition it names, or a new definition at the end of the file.
    """
    found = DEFINED.search(new_source or "")
    if found is None:
        raise ProposalError(
            f"the new source for {path} does not start with a def or class "
            "line: give the whole definition (or a node_id)"
        )
    kind, name = found.group(1), found.group(2)
    nodes = [
        n
        for n in graph.file_nodes(path)
        if n.kind is not NodeKind.FILE
        and n.status is NodeStatus.ACTIVE
        and n.qualified_name == name
    ]
    if nodes:
        return rewrite_member(nodes[0], file_text, new_source)
    anchor = graph.file_node(path)
    if anchor is None:
        raise ProposalError(f"{path} is not indexed yet; try again in a moment")
    offset, inserted, diff = prepare_new_node(
        file_text,
        path,
        anchor,
        "class" if kind == "class" else "function",
        name,
        new_source,
        None,
    )
    return Member(
        path,
        "new_node",
        anchor.id,
        text_hash(file_text),
        offset,
        offset,
        "",
        inserted,
        diff,
    )


def members_of(
    proposal: Proposal,
    read_text: Callable[[str], bytes | None],
    graph: CodeGraph,
) -> tuple[Member, ...] | None:
    """``proposal``'s edits as members of a set (a set's own members); None
    when it cannot join one (a revert, or code that changed since).
    """
    if proposal.members:
        return proposal.members
    if proposal.kind not in ("rewrite", "new_node"):
        return None
    text = read_text(proposal.file_path)
    if text is None:
        return None
    if proposal.kind == "new_node":
        if text_hash(text) != proposal.base_hash:
            return None
        start, end = proposal.start_byte, proposal.end_byte
    else:
        node = graph.get(proposal.node_id)
        if node is None:
            return None
        start, end = node.span.start_byte, node.span.end_byte
        if text_hash(text[start:end]) != proposal.base_hash:
            return None
    member = Member(
        proposal.file_path,
        proposal.kind,
        proposal.node_id,
        text_hash(text),
        start,
        end,
        proposal.old_source,
        proposal.new_source,
        proposal.diff,
    )
    return (member,)


def refuse_overlaps(members: Sequence[Member]) -> None:
    """ProposalError when two members edit the same bytes of one file."""
    for i, a in enumerate(members):
        for b in members[i + 1 :]:
            if a.path != b.path:
                continue
            if a.kind == "new_file" or b.kind == "new_file":
                raise ProposalError(f"{a.path} is created twice in the change set")
            if a.start_byte < b.end_byte and b.start_byte < a.end_byte:
                raise ProposalError(
                    f"two changes of the set edit the same code in {a.path}; "
                    "give each definition once"
                )
            if (
                a.start_byte == a.end_byte == b.start_byte == b.end_byte
                and DEFINED.search(a.new_source.strip())
                and _names(a) == _names(b)
            ):
                raise ProposalError(f"a definition is added twice to {a.path}")


def _names(member: Member) -> set[str]:
    """The names a member defines: its definitions', a new file's module."""
    names = {m.group(2) for m in DEFINED.finditer(_dedented(member.new_source))}
    if member.kind == "new_file" and member.path.endswith(".py"):
        stem = member.path.rsplit("/", 1)[-1].removesuffix(".py")
        if stem.isidentifier() and not keyword.iskeyword(stem):
            names.add(stem)
    return names


def _dedented(source: str) -> str:
    lines = source.splitlines()
    first = next((line for line in lines if line.strip()), "")
    indent = len(first) - len(first.lstrip())
    return "\n".join(line[indent:] for line in lines)


def dependencies(members: Sequence[Member]) -> tuple[tuple[int, int], ...]:
    """``(i, j)`` for each member ``i`` whose new text uses a name ``j`` defines."""
    defined = [_names(m) for m in members]
    found: list[tuple[int, int]] = []
    for i, member in enumerate(members):
        words = set(re.findall(r"\w+", member.new_source))
        for j, names in enumerate(defined):
            if i != j and names & words and not names <= _names(member):
                found.append((i, j))
    return tuple(found)


def refuse_partial(proposal: Proposal, chosen: Iterable[int]) -> tuple[int, ...]:
    """The members to accept, sorted; ValueError saying why a part may not be."""
    picked = _picked(proposal, chosen, "accept")
    for i, j in proposal.depends_on:
        if i in picked and j not in picked:
            raise ValueError(
                f"member {_said(proposal, i)} needs member {_said(proposal, j)}: "
                "accept both, or neither"
            )
    return picked


def refuse_rejecting(proposal: Proposal, chosen: Iterable[int]) -> tuple[int, ...]:
    """The members to reject, sorted; ValueError naming the members that
    need one of them (reject those too, or the whole set).
    """
    picked = _picked(proposal, chosen, "reject")
    needing: dict[int, list[int]] = {}
    for i, j in proposal.depends_on:
        if j in picked and i not in picked:
            needing.setdefault(j, []).append(i)
    if needing:
        j, users = next(iter(sorted(needing.items())))
        others = sorted({i for found in needing.values() for i in found})
        together = _numbers(sorted({*picked, *others}))
        raise ValueError(
            f"member {_said(proposal, j)} is needed by "
            + ", ".join(f"member {_said(proposal, i)}" for i in sorted(users))
            + f": reject members {together} together, or the whole set"
        )
    return picked


def _picked(proposal: Proposal, chosen: Iterable[int], verb: str) -> tuple[int, ...]:
    """``chosen`` sorted, once each; ValueError when it names no member."""
    picked = tuple(sorted(set(chosen)))
    count = len(proposal.members)
    if proposal.kind != "change_set":
        raise ValueError("only a change set has members to choose from")
    if not picked:
        raise ValueError(f"choose at least one member of the change set to {verb}")
    bad = [i for i in picked if not 0 <= i < count]
    if bad:
        raise ValueError(
            f"the change set has members 1 to {count}; there is no member {bad[0] + 1}"
        )
    return picked


def _said(proposal: Proposal, index: int) -> str:
    """``2 (rewrite make_item)``: a member as a person sees it, from 1."""
    return f"{index + 1} ({member_label(proposal.members[index])})"


def _numbers(indices: Sequence[int]) -> str:
    """``1, 2 and 3``: members counted from 1."""
    said = [str(i + 1) for i in indices]
    return said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]


def without(
    proposal: Proposal,
    dropped: Iterable[int],
    read_text: Callable[[str], bytes | None],
    anchor: str | None,
) -> Proposal:
    """``proposal`` (a pending set) without the ``dropped`` members: the rest
    renumbered with their dependencies, its diff redone, the dropped ones
    kept in ``rejected_members``; ``anchor``: the asking node's file (where
    the set stays shown when none of the rest is there).
    """
    gone = set(dropped)
    kept = [i for i in range(len(proposal.members)) if i not in gone]
    renumbered = {old: new for new, old in enumerate(kept)}
    members = tuple(proposal.members[i] for i in kept)
    paths = {m.path for m in members}
    return dataclasses.replace(
        proposal,
        file_path=members[0].path,
        base_hash=members[0].base_hash,
        diff=set_diff(members, read_text),
        members=members,
        depends_on=tuple(
            (renumbered[i], renumbered[j])
            for i, j in proposal.depends_on
            if i in renumbered and j in renumbered
        ),
        anchor_path=anchor if anchor is not None and anchor not in paths else None,
        rejected_members=(
            *proposal.rejected_members,
            *(proposal.members[i] for i in sorted(gone)),
        ),
    )


def member_label(member: Member) -> str:
    """``rewrite make_item``, ``pkg/currency.py``: a member in a few words."""
    names = sorted(_names(member))
    what = names[0] if names and member.kind != "new_file" else member.path
    return f"{member.kind} {what}" if what != member.path else member.path


def plan_members(
    proposal: Proposal,
    chosen: Iterable[int] | None,
    read_text: Callable[[str], bytes | None],
    version: Callable[[str], int | None],
    held: Callable[[str, bytes], bool] = lambda _path, _text: False,
) -> list[FileEdit]:
    """The edits of the chosen members (all: None) against the current texts,
    one :class:`FileEdit` per file; :class:`Stale` if any file of the set
    changed since it was made (``held(path, text)``: the file holds what this
    set's accept produces — an accept landing — and counts as unchanged).
    """
    picked = set(range(len(proposal.members)) if chosen is None else chosen)
    files: dict[str, FileEdit] = {}
    for index, member in enumerate(proposal.members):
        text = read_text(member.path)
        if member.kind == "new_file":
            # An empty file is one an editor is creating to accept this (a
            # code action's CreateFile arrives before its text): not stale.
            if text is not None and text.strip() and not held(member.path, text):
                raise Stale(f"{member.path} exists now")
            before = b""
        elif text is None:
            raise Stale(f"{member.path} was deleted since the change set was made")
        elif text_hash(text) != member.base_hash and not held(member.path, text):
            raise Stale(f"{member.path} changed since the change set was made")
        else:
            before = text
        if index not in picked:
            continue
        file = files.get(member.path)
        if file is None:
            file = files[member.path] = FileEdit(
                member.path,
                None if member.kind == "new_file" else version(member.path),
                before,
                create=member.kind == "new_file",
            )
        file.edits.append(
            PlannedEdit(
                proposal.id,
                member.path,
                file.version,
                member.start_byte,
                member.end_byte,
                member.new_source,
                before,
            )
        )
    for file in files.values():
        file.edits.sort(key=lambda e: (e.start_byte, e.end_byte))
    return list(files.values())


def set_diff(
    members: Sequence[Member], read_text: Callable[[str], bytes | None]
) -> str:
    """Every file's diff once all the members are in (file by file)."""
    parts: list[str] = []
    for path in dict.fromkeys(m.path for m in members):
        mine = [m for m in members if m.path == path]
        if mine[0].kind == "new_file":
            parts.append(mine[0].diff)
            continue
        before = read_text(path) or b""
        after = before
        # From the end back; two definitions added at one place go in the
        # order given (``reverse=True`` would keep ties in order and so put
        # the later one first).
        in_order = sorted(mine, key=lambda m: (m.start_byte, m.end_byte))
        for member in reversed(in_order):
            new = member.new_source.encode("utf-8")
            after = after[: member.start_byte] + new + after[member.end_byte :]
        parts.append(
            file_diff(
                path,
                split_lines(before.decode("utf-8", "replace")),
                split_lines(after.decode("utf-8", "replace")),
            )
        )
    return "".join(parts)


def describe(members: Sequence[Member]) -> str:
    """``4 definitions in 3 files, 1 new file``."""
    definitions = [m for m in members if m.kind != "new_file"]
    files = {m.path for m in definitions}
    created = len(members) - len(definitions)
    said: list[str] = []
    if definitions:
        said.append(
            f"{_count(len(definitions), 'definition')} in {_count(len(files), 'file')}"
        )
    if created:
        said.append(_count(created, "new file"))
    return ", ".join(said)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
