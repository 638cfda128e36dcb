"""Opening a project in-process for the command line (no server owns it).

Settings come from the same sources as in the editor (without editor
settings): defaults < ``[tool.remora]`` < ``remora.yaml``, and the person's
user-level file. Trust is the person's remembered decision for the project
(``trust.json``; nobody is asked here: an undecided project is untrusted, and
the key goes only to the person's own endpoint or one they approved before).
Edits are written by a :class:`~remora_core.front.disk_editor.DiskEditor`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from remora_core.config import load_settings
from remora_core.front.app import RemoraApp
from remora_core.front.disk_editor import DiskEditor
from remora_core.trust import RememberedTrust

if TYPE_CHECKING:
    from pathlib import Path

log = logging.getLogger(__name__)


async def open_local_app(root: Path) -> RemoraApp:
    """The started engine of ``root``, editing files on disk."""
    settings = load_settings(root)
    for problem in settings.problems:
        log.warning("%s", problem)
    decisions = RememberedTrust()
    trust = decisions.for_project(root, settings.person_model, settings.repository)
    return await RemoraApp.open(
        root,
        settings.config(trust.trusted),
        DiskEditor(root),
        trust=trust,
        decisions=decisions,
    )
