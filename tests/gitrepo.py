"""A git repository for tests that need one (trailers, blame, checkpoints)."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def commit_all(repo: Path, message: str = "init") -> None:
    """``git init`` ``repo`` if needed and commit everything in it."""
    git = ["git", "-C", str(repo)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run(
        [*git, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message],
        check=True,
    )
