"""Which changes to nodes are announced as events, and when.

- An **open document** is announced at the end of each quiet period (the
  debounced settle), compared with what was announced last; the baseline is
  taken when the file is opened, so opening a file never triggers anything.
- A **file changed on disk** (not open) is announced as the re-parse changed it.
- At **start-up**, files changed since the last run are announced; a file
  indexed for the first time is not a change.

``content_changed`` lists the definitions whose text changed (a method's edit
also changes its class's text); the file node is never listed, it is the
event's ``path``. New and vanished nodes go in ``topology_changed``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from remora_core.events.models import ContentChanged, Event, TopologyChanged

if TYPE_CHECKING:
    from remora_core.index.updates import FileUpdate
    from remora_core.model import CodeNode


@dataclass
class Changes:
    """What changed in one file since it was last announced."""

    path: str
    modified: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    orphaned: list[str] = field(default_factory=list)

    @classmethod
    def of_update(cls, update: FileUpdate) -> Changes:
        """The changes one re-parse made."""
        return cls(update.path, update.modified, update.created, update.orphaned)

    def events(self) -> list[Event]:
        """The events announcing these changes (none if nothing changed)."""
        found: list[Event] = []
        if self.modified:
            found.append(
                ContentChanged(
                    path=self.path, node_ids=tuple(self.modified), change="modified"
                )
            )
        if self.added or self.orphaned:
            found.append(
                TopologyChanged(
                    path=self.path,
                    added=tuple(self.added),
                    orphaned=tuple(self.orphaned),
                )
            )
        return found


class ChangeTracker:
    """Per open document, the node texts last announced."""

    def __init__(self) -> None:
        self._baselines: dict[str, dict[str, str]] = {}

    def snapshot(self, path: str, nodes: list[CodeNode]) -> None:
        """Take ``nodes`` as announced (on open: nothing to announce)."""
        self._baselines[path] = {node.id: node.source_hash for node in nodes}

    def forget(self, path: str) -> None:
        """The document closed."""
        self._baselines.pop(path, None)

    def rename(self, old: str, new: str) -> None:
        """The document's file was renamed."""
        if old in self._baselines:
            self._baselines[new] = self._baselines.pop(old)

    def diff(self, path: str, nodes: list[CodeNode]) -> Changes:
        """Changes since the last announcement; ``nodes`` become the baseline."""
        before = self._baselines.get(path, {})
        now = {node.id: node.source_hash for node in nodes}
        self._baselines[path] = now
        return Changes(
            path,
            modified=[i for i, h in now.items() if i in before and before[i] != h],
            added=[i for i in now if i not in before],
            orphaned=[i for i in before if i not in now],
        )
