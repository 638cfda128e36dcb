"""Commands that say why agents wake and let a person change it: a node's
subscriptions (list, add, remove) and muting (``front/wakes.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from remora_core.events.subscriptions import Pattern
from remora_core.front import answers
from remora_core.front.arguments import NodeArgs
from remora_core.front.table import Door, Route, command

if TYPE_CHECKING:
    from remora_core.front.app import RemoraApp


class SubscribeArgs(NodeArgs):
    """A node and what its agent should wake for."""

    pattern: Pattern = Field(
        description="fields that must all match: event_types, from_agents (globs), "
        "to_agent, path_glob, tags, nodes"
    )


class UnsubscribeArgs(NodeArgs):
    """A node and one of its own subscriptions."""

    subscription_id: str = Field(pattern=r"^sub_", description="a subscription id")


@command("remora.subscriptions.list", NodeArgs, answers.NodeSubscriptions, Route.NODE)
async def subscriptions_list(app: RemoraApp, a: NodeArgs, door: Door) -> Any:
    """The node's subscriptions — its two defaults (messages to it, changes
    of its code) and its own — each with the runs it fired lately, and
    whether the node is muted.
    """
    return await app.subscriptions.list(a.node_id)


@command("remora.subscriptions.add", SubscribeArgs, answers.SubscriptionId, Route.NODE)
async def subscriptions_add(app: RemoraApp, a: SubscribeArgs, door: Door) -> Any:
    """Wake the node's agent for events matching a pattern."""
    return {"subscription_id": await app.subscriptions.add(a.node_id, a.pattern)}


@command("remora.subscriptions.remove", UnsubscribeArgs, answers.Ok, Route.NODE)
async def subscriptions_remove(app: RemoraApp, a: UnsubscribeArgs, door: Door) -> Any:
    """Remove one of the node's own subscriptions (defaults stay: mute it)."""
    return {"ok": await app.subscriptions.remove(a.node_id, a.subscription_id)}


@command("remora.node.mute", NodeArgs, answers.Muted, Route.NODE)
async def node_mute(app: RemoraApp, a: NodeArgs, door: Door) -> Any:
    """Mute the node's agent: nothing wakes it but a person's message."""
    return await app.subscriptions.mute(a.node_id, True)


@command("remora.node.unmute", NodeArgs, answers.Muted, Route.NODE)
async def node_unmute(app: RemoraApp, a: NodeArgs, door: Door) -> Any:
    """Unmute the node's agent: its subscriptions wake it again."""
    return await app.subscriptions.mute(a.node_id, False)


WAKE_COMMANDS = [
    subscriptions_list,
    subscriptions_add,
    subscriptions_remove,
    node_mute,
    node_unmute,
]
