"""The ``trust`` facade: whether this project's repository is trusted.

What trust allows is ``remora_core/trust.py``. Who decides is the
:class:`~remora_core.trust.TrustDecisions` the app was opened with — the
language server's (the client's workspace trust, the person's answers, a
question; a change restarts the project) or, without an editor, the person's
remembered answers. The project of files outside every workspace folder has
no repository to trust: it answers nothing, and changes do nothing there.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from remora_core.trust import TrustDecisions

log = logging.getLogger(__name__)


class TrustFacade:
    """Trust in one project's repository."""

    def __init__(self, root: Path | None, decisions: TrustDecisions) -> None:
        self._root = root
        self._decisions = decisions

    def describe(self) -> list[dict[str, Any]]:
        """``[{root, trusted, decided_by, wants, hosts}]`` (empty without a root)."""
        if self._root is None:
            return []
        return [{"root": self._root.as_uri(), **self._decisions.describe(self._root)}]

    async def set(self, trusted: bool) -> None:
        """Trust the repository, or not (remembered; applied by the door)."""
        if self._root is not None:
            await self._decisions.set(self._root, trusted)

    async def revoke(self) -> None:
        """Forget every answer about the repository."""
        if self._root is not None:
            await self._decisions.revoke(self._root)
