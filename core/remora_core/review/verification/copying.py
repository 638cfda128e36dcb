"""A temporary copy of a project to run its tests in, never the person's tree.

Files are cloned copy-on-write where the file system can (``FICLONE`` on
Linux: btrfs, XFS, bcachefs — the copy costs no data blocks), else copied.
Version control, virtual environments, caches and Remora's own store are left
out (:data:`SKIPPED_DIRS` and the project's ``discovery.exclude`` names);
symbolic links stay links — an absolute link to a file of the project points
at that file in the copy, never back into the person's tree. A project above
:data:`MAX_COPY_BYTES` is not copied (:class:`TooLarge`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: plain copies
    fcntl = None

log = logging.getLogger(__name__)

SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".remora",
        ".venv",
        "venv",
        "node_modules",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)
MAX_COPY_BYTES = 1_000_000_000
"""Largest project (bytes of files copied) whose tests run in a copy."""
_FICLONE = 0x40049409  # linux/fs.h: _IOW(0x94, 9, int)


class TooLarge(Exception):
    """The project is too big to copy for a test run."""


def _clone(source: Path, target: Path) -> None:
    """Copy one file, sharing its blocks when the file system allows."""
    with open(source, "rb") as src, open(target, "wb") as dst:
        if fcntl is not None:
            try:
                fcntl.ioctl(dst.fileno(), _FICLONE, src.fileno())
                return
            except OSError:
                pass  # not supported here: copy the bytes
        shutil.copyfileobj(src, dst, 1024 * 1024)


def _copy_link(source: Path, link: Path, root: Path, target: Path) -> None:
    """Copy the link ``source`` as ``link``; an absolute one into the project
    points at the same file of the copy, never back into the person's tree
    (a test run would read or write their files).
    """
    pointed = os.readlink(source)
    if os.path.isabs(pointed):
        for home in dict.fromkeys((root, root.resolve())):
            with contextlib.suppress(ValueError):
                pointed = os.fspath(target / Path(pointed).relative_to(home))
                break
    os.symlink(pointed, link)


def copy_project(root: Path, target: Path, skipped: frozenset[str]) -> int:
    """Copy ``root`` into the empty directory ``target``; bytes copied."""
    names = SKIPPED_DIRS | skipped
    copied = 0
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        into = target / here.relative_to(root)
        dirs[:] = [d for d in dirs if d not in names]
        for name in dirs:
            if (here / name).is_symlink():
                _copy_link(here / name, into / name, root, target)
            else:
                (into / name).mkdir()
        dirs[:] = [d for d in dirs if not (here / d).is_symlink()]
        for name in files:
            source = here / name
            if source.is_symlink():
                _copy_link(source, into / name, root, target)
                continue
            with contextlib.suppress(OSError):  # vanished or unreadable: skip
                copied += source.stat().st_size
                if copied > MAX_COPY_BYTES:
                    raise TooLarge(
                        f"the project has more than {MAX_COPY_BYTES // 1_000_000:,} "
                        "MB of files to copy"
                    )
                _clone(source, into / name)
    return copied
