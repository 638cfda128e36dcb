"""Why an agent wakes: the subscription that fired a run, and a node's
subscriptions with what each matched lately.

When a run starts, :func:`fired_by` names the subscription of its agent that
its (first) trigger matched — a custom one before a default, as it says more —
and the run's row keeps it (``runs.subscription_id``). The list of runs and the
conversation show it beside the trigger (``front/wakes.py`` lists a node's
subscriptions with the runs each fired lately). A subscription's pattern is
shown in words by :func:`describe`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from remora_core.events.store import StoredEvent
    from remora_core.events.subscriptions import Pattern, SubscriptionIndex

DEFAULT_NAMES = {"sub_msg_": "messages to it", "sub_own_": "changes of its code"}
"""A default subscription's id prefix → what it is, in words."""


def fired_by(
    index: SubscriptionIndex, agent_id: str, stored: StoredEvent
) -> str | None:
    """The id of ``agent_id``'s subscription that ``stored`` matched (None if
    none did: a run started by other means).
    """
    # Only the agent's own subscriptions: matching the event against every
    # subscription built and sorted one per subscriber (500 callers of an
    # edited function) at the start of each of their turns.
    event, nodes = stored.event, stored.nodes
    for subscription in index.of_agent(agent_id):  # custom: it says more
        if subscription.pattern.matches(event):
            return subscription.id
    found = [s for s in index.defaults_matching(event, nodes) if s.agent_id == agent_id]
    return found[0].id if found else None


def describe(pattern: Pattern) -> str:
    """A pattern in words: ``agent_message from rm_a* tagged review``."""
    words = [", ".join(pattern.event_types) if pattern.event_types else "any event"]
    if pattern.to_agent is not None:
        words.append(f"to {pattern.to_agent}")
    if pattern.from_agents is not None:
        words.append(f"from {', '.join(pattern.from_agents)}")
    if pattern.path_glob is not None:
        words.append(f"in {pattern.path_glob}")
    if pattern.tags is not None:
        words.append(f"tagged {', '.join(pattern.tags)}")
    if pattern.nodes is not None:
        words.append(f"about {', '.join(pattern.nodes)}")
    return " ".join(words)


def subscription_name(subscription_id: str | None) -> str | None:
    """What a subscription id is, for a run's trigger: a default's name in
    words, a custom one's id.
    """
    if subscription_id is None:
        return None
    for prefix, name in DEFAULT_NAMES.items():
        if subscription_id.startswith(prefix):
            return name
    return subscription_id
