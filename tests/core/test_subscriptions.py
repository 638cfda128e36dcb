"""Subscription semantics, checked against a reference written from DESIGN §7.

A pattern matches an event iff every field it gives matches: ``event_types``
(the type is one of them), ``from_agents`` (the sender matches a glob),
``to_agent`` (the recipient is it), ``path_glob`` (the event's path matches),
``tags`` (a shared tag), ``nodes`` (a shared concerned node). The index must
find exactly what a brute-force scan of every subscription finds, plus the
implicit defaults of every active agent.
"""

from __future__ import annotations

import json
from fnmatch import fnmatchcase

from hypothesis import given, settings
from hypothesis import strategies as st
from remora_core.events.models import (
    AgentCompleted,
    AgentMessage,
    AgentStarted,
    ContentChanged,
    HumanChat,
    RewriteProposed,
    ToolCalled,
    TopologyChanged,
    TriggerRefused,
)
from remora_core.events.subscription_store import SubscriptionStore
from remora_core.events.subscriptions import Pattern, Subscription, SubscriptionIndex
from remora_core.store import Database

AGENTS = ["rm_a", "rm_b", "rm_c", "rm_ab", "rm_zz"]
PATHS = ["a.py", "b.py", "pkg/b.py", "pkg/sub/c.py", "README.md"]
PATH_GLOBS = ["*.py", "pkg/*", "pkg/*.py", "a.py", "*/c.py", "?.py", "[ab].py", "*"]
AGENT_GLOBS = ["rm_*", "rm_a", "rm_[ab]", "*b", "?m_c", "x*", "rm_??"]
TAGS = ["t1", "t2", "t3"]
TYPES = [
    "human_chat",
    "agent_message",
    "content_changed",
    "topology_changed",
    "agent_started",
    "agent_completed",
    "tool_called",
    "rewrite_proposed",
    "trigger_refused",
]

agent = st.sampled_from(AGENTS)
maybe_agent = st.none() | agent
agents = st.lists(agent, max_size=3, unique=True).map(tuple)
path = st.sampled_from(PATHS)
tags = st.lists(st.sampled_from(TAGS), max_size=3, unique=True).map(tuple)


def envelope(draw) -> dict:
    return {"correlation_id": "co_1", "depth": draw(st.integers(0, 3))}


@st.composite
def events(draw):
    kind = draw(st.sampled_from(TYPES))
    base = envelope(draw)
    if kind == "human_chat":
        return HumanChat(to_agent=draw(agent), message="m", **base)
    if kind == "agent_message":
        return AgentMessage(
            from_agent=draw(agent),
            to_agent=draw(agent),
            message="m",
            tags=draw(tags),
            **base,
        )
    if kind == "content_changed":
        return ContentChanged(path=draw(path), node_ids=draw(agents), **base)
    if kind == "topology_changed":
        return TopologyChanged(
            path=draw(path),
            added=draw(agents),
            removed=draw(agents),
            orphaned=draw(agents),
            **base,
        )
    if kind == "agent_started":
        return AgentStarted(agent_id=draw(agent), from_agent=draw(maybe_agent), **base)
    if kind == "agent_completed":
        return AgentCompleted(agent_id=draw(agent), to_agent=draw(maybe_agent), **base)
    if kind == "tool_called":
        return ToolCalled(tool="t", agent_id=draw(maybe_agent), **base)
    if kind == "rewrite_proposed":
        return RewriteProposed(
            proposal_id="p", node_id=draw(agent), diff="d", agent_id=draw(agent), **base
        )
    return TriggerRefused(
        agent_id=draw(agent), trigger_id="ev", rule="cycle", reason="r", **base
    )


def optional(strategy):
    return st.none() | strategy


patterns = st.builds(
    Pattern,
    event_types=optional(
        st.lists(st.sampled_from(TYPES), max_size=3, unique=True).map(tuple)
    ),
    from_agents=optional(
        st.lists(st.sampled_from(AGENT_GLOBS), max_size=2, unique=True).map(tuple)
    ),
    to_agent=maybe_agent,
    path_glob=optional(st.sampled_from(PATH_GLOBS + PATHS)),
    tags=optional(tags),
    nodes=optional(agents),
)


# ---- the reference ----------


def concerned(data: dict) -> set[str]:
    """Every node id an event's fields name."""
    ids = {data.get(k) for k in ("agent_id", "from_agent", "to_agent", "node_id")}
    for key in ("node_ids", "added", "removed", "orphaned"):
        ids |= set(data.get(key) or ())
    return {i for i in ids if i}


def reference_matches(pattern: Pattern, event) -> bool:
    """DESIGN §7, written independently of ``Pattern.matches``."""
    data = event.model_dump()
    checks = []
    if pattern.event_types is not None:
        checks.append(data["type"] in pattern.event_types)
    if pattern.from_agents is not None:
        sender = data.get("from_agent")
        checks.append(
            sender is not None
            and any(fnmatchcase(sender, g) for g in pattern.from_agents)
        )
    if pattern.to_agent is not None:
        checks.append(data.get("to_agent") == pattern.to_agent)
    if pattern.path_glob is not None:
        where = data.get("path")
        checks.append(where is not None and fnmatchcase(where, pattern.path_glob))
    if pattern.tags is not None:
        checks.append(bool(set(pattern.tags) & set(data.get("tags") or ())))
    if pattern.nodes is not None:
        checks.append(bool(set(pattern.nodes) & concerned(data)))
    return all(checks)


def reference_defaults(event, active: set[str]) -> set[tuple[str, str]]:
    """(agent, kind) of the implicit subscriptions ``event`` triggers."""
    data = event.model_dump()
    found = set()
    for agent_id in active:
        if data["type"] in ("human_chat", "agent_message") and (
            data.get("to_agent") == agent_id
        ):
            found.add((agent_id, "messages"))
        if data["type"] == "content_changed" and agent_id in concerned(data):
            found.add((agent_id, "own node"))
    return found


def kind_of(subscription: Subscription) -> str:
    if not subscription.default:
        return subscription.id
    return "messages" if subscription.id.startswith("sub_msg_") else "own node"


# ---- properties ----------


@settings(max_examples=1500, deadline=None)
@given(pattern=patterns, event=events())
def test_a_pattern_matches_iff_every_given_field_matches(pattern, event):
    assert pattern.matches(event) == reference_matches(pattern, event)


@settings(max_examples=300, deadline=None)
@given(event=events())
def test_an_empty_pattern_matches_everything(event):
    assert Pattern().matches(event)


@settings(max_examples=400, deadline=None)
@given(
    added=st.lists(st.tuples(st.integers(0, 30), agent, patterns), max_size=40),
    removed=st.lists(st.integers(0, 30), max_size=10),
    active=st.sets(agent),
    stream=st.lists(events(), min_size=1, max_size=15),
)
def test_the_index_finds_what_brute_force_finds(added, removed, active, stream):
    index = SubscriptionIndex(is_agent=active.__contains__)
    expected: dict[str, Subscription] = {}
    for number, owner, pattern in added:
        subscription = Subscription(id=f"sub_{number}", agent_id=owner, pattern=pattern)
        index.add(subscription)  # the same id again replaces it
        expected[subscription.id] = subscription
    for number in removed:
        gone = index.remove(f"sub_{number}")
        assert (gone is not None) == (f"sub_{number}" in expected)
        expected.pop(f"sub_{number}", None)
    assert len(index) == len(expected)
    for event in stream:
        found = index.match(event)
        custom = {
            (s.agent_id, s.id)
            for s in expected.values()
            if reference_matches(s.pattern, event)
        }
        defaults = reference_defaults(event, active)
        assert {(s.agent_id, kind_of(s)) for s in found} == custom | defaults
        assert len(found) == len(custom) + len(defaults), "no duplicates"
        assert [(s.agent_id, s.id) for s in found] == sorted(
            (s.agent_id, s.id) for s in found
        )


def test_defaults_follow_the_own_node_only():
    index = SubscriptionIndex(is_agent={"rm_f", "rm_g", "rm_file"}.__contains__)
    changed = ContentChanged(path="a.py", node_ids=("rm_f",))
    assert [(s.agent_id, s.default) for s in index.match(changed)] == [("rm_f", True)]
    # a message to a node that is not an active agent triggers nobody
    assert index.match(HumanChat(to_agent="rm_orphan", message="m")) == []
    # other event types do not trigger the defaults
    assert index.match(AgentCompleted(agent_id="rm_f")) == []


def test_of_agent_and_agents():
    index = SubscriptionIndex()
    one = Subscription(agent_id="rm_a", pattern=Pattern(tags=("t1",)))
    two = Subscription(agent_id="rm_a", pattern=Pattern(to_agent="rm_b"))
    three = Subscription(agent_id="rm_b", pattern=Pattern(event_types=("x",)))
    for subscription in (one, two, three):
        index.add(subscription)
    assert {s.id for s in index.of_agent("rm_a")} == {one.id, two.id}
    assert index.agents() == {"rm_a", "rm_b"}
    index.remove(three.id)
    assert index.agents() == {"rm_a"}
    assert index.match(AgentMessage(from_agent="x", to_agent="rm_b", message="")) == [
        two
    ]


@settings(max_examples=300, deadline=None)
@given(pattern=patterns)
def test_patterns_survive_the_json_they_are_stored_as(pattern):
    stored = pattern.model_dump_json(exclude_none=True)
    assert Pattern.model_validate(json.loads(stored)) == pattern


async def test_subscriptions_are_stored_and_loaded(tmp_path):
    database = await Database.open(tmp_path)
    try:
        store = SubscriptionStore(database)
        made = [
            Subscription(agent_id="rm_a", pattern=Pattern()),
            Subscription(
                agent_id="rm_b",
                pattern=Pattern(
                    event_types=("agent_message",),
                    from_agents=("rm_*",),
                    to_agent="rm_b",
                    path_glob="pkg/*.py",
                    tags=("t1", "t2"),
                    nodes=("rm_c",),
                ),
            ),
        ]
        for subscription in made:
            await store.add(subscription)
        loaded = sorted(await store.load(), key=lambda s: s.agent_id)
        assert loaded == made
        await store.remove([made[0].id])
        assert await store.load() == [made[1]]
    finally:
        await database.close()


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_matching_agents_is_the_agents_of_match(data):
    """The hot path (agent ids only) agrees with the full match."""
    index = SubscriptionIndex(is_agent=lambda i: i in AGENTS[:2])
    for number in range(data.draw(st.integers(0, 12))):
        index.add(
            Subscription(
                id=f"sub_{number}",
                agent_id=data.draw(agent),
                pattern=data.draw(patterns),
            )
        )
    event = data.draw(events())
    nodes = event.concerned_nodes()
    expected = sorted({s.agent_id for s in index.match(event, nodes)})
    assert index.matching_agents(event, nodes) == expected
