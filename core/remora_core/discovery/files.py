"""Which files of a project are Python sources we index, and reading them safely.

Include and exclude patterns use gitignore syntax (``pathspec``, matched in
linear time: ``globs.py``): a pattern with
no slash, such as ``.venv``, matches that name at any depth; ``**/*.py`` matches
every Python file. Excluded directories are pruned, never descended into, and so
is every virtual environment (a directory holding ``pyvenv.cfg``) whatever its
name — so a package that happens to be called ``venv`` is still indexed.

A file is skipped, with a reason a person understands, when it is larger than the
size limit, looks binary (has a NUL byte) or is not valid UTF-8. Files declaring
another encoding with a PEP 263 cookie are skipped too: every offset in the engine
is a UTF-8 byte offset into the file as it is on disk.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pathspec

from remora_core import globs

log = logging.getLogger(__name__)


class SourceSkipped(Exception):
    """A file that is not indexed; the message says why."""


def content_hash(data: bytes) -> str:
    """Hash of a whole file's bytes, used to skip unchanged files on a warm start."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def check_source(data: bytes, max_bytes: int) -> None:
    """Raise :class:`SourceSkipped` if ``data`` is not text we can index."""
    if len(data) > max_bytes:
        raise SourceSkipped(
            f"larger than the limit of {max_bytes} bytes ({len(data)} bytes; "
            "raise discovery.max_file_bytes to index it)"
        )
    if b"\x00" in data:
        raise SourceSkipped("looks binary (contains a NUL byte)")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SourceSkipped(
            f"not valid UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start})"
        ) from None


def read_source(path: Path | str, max_bytes: int, *, size: int | None = None) -> bytes:
    """Read a source file, raising :class:`SourceSkipped` when it must be skipped.

    ``size``: the file's size if it was just listed (saves a ``stat``; a file
    that grew since is still refused by its length).
    """
    try:
        if size is None:
            size = os.stat(path).st_size
        if size > max_bytes:
            raise SourceSkipped(
                f"larger than the limit of {max_bytes} bytes ({size} bytes; "
                "raise discovery.max_file_bytes to index it)"
            )
        with open(path, "rb") as file:
            data = file.read()
    except OSError as error:
        raise SourceSkipped(f"cannot be read ({error.strerror or error})") from None
    check_source(data, max_bytes)
    return data


def secret_glob(relative: str, secrets: Sequence[str]) -> str | None:
    """The ``secrets.exclude`` glob a project path matches (its name or its
    whole relative path), or None.
    """
    name = relative.rsplit("/", 1)[-1]
    for glob in secrets:
        if globs.name_matches(name, glob) or globs.name_matches(relative, glob):
            return glob
    return None


_told_links: set[tuple[Path, str]] = set()


def link_refusal(root: Path, relative: str, secrets: Sequence[str]) -> str | None:
    """Why the file at ``relative`` must not be indexed because it is a
    symbolic link (None: not a link, or a link to a file the project may read).

    A link is how a repository reaches outside itself (``~/.aws/credentials``)
    or around ``secrets.exclude`` (``settings.py`` → ``.env.py``): its target
    must lie inside the root and must not be secret. Said once in the log.
    """
    path = root / relative
    if not path.is_symlink():
        return None
    try:
        real = path.resolve(strict=True)
        home = root.resolve(strict=True)
    except (OSError, RuntimeError):  # dangling, or a loop: the reader says why
        return None
    if not real.is_relative_to(home):
        why = f"a symbolic link to {real}, outside the project"
    elif glob := secret_glob(real.relative_to(home).as_posix(), secrets):
        target = real.relative_to(home).as_posix()
        why = f"a symbolic link to {target}, which matches secrets.exclude ({glob!r})"
    else:
        return None
    if (root, relative) not in _told_links:
        _told_links.add((root, relative))
        log.warning("not indexing %s: %s", relative, why)
    return why


@dataclass(frozen=True)
class FileFilter:
    """Decides which paths (relative, ``/``-separated) belong to the project."""

    include: pathspec.GitIgnoreSpec
    exclude: pathspec.GitIgnoreSpec
    secrets: tuple[str, ...] = ()
    """``secrets.exclude``: what a symbolic link may not point to."""

    @classmethod
    def from_globs(
        cls, include: list[str], exclude: list[str], secrets: Sequence[str] = ()
    ) -> FileFilter:
        """Build from gitignore-style pattern lists."""
        return cls(
            include=globs.gitignore(include),
            exclude=globs.gitignore(exclude),
            secrets=tuple(secrets),
        )

    def wants(self, relative: str) -> bool:
        """Whether the file at ``relative`` is indexed."""
        return self.include.match_file(relative) and not self.excludes(relative)

    def wants_listed(self, relative: str) -> bool:
        """:meth:`wants` for a file found by :func:`list_sources`, whose
        directories were each checked on the way down.
        """
        return self.include.match_file(relative) and not self.exclude.match_file(
            relative
        )

    def excludes(self, relative: str) -> bool:
        """Whether ``relative`` (a file, or a directory ending in ``/``) is excluded.

        A file inside an excluded directory is excluded too.
        """
        if self.exclude.match_file(relative):
            return True
        parts = PurePosixPath(relative).parts
        return any(
            self.exclude.match_file("/".join(parts[:depth]) + "/")
            for depth in range(1, len(parts))
        )


def is_virtualenv(directory: Path) -> bool:
    """Whether ``directory`` is a virtual environment (whatever its name)."""
    return (directory / "pyvenv.cfg").is_file()


def list_sources(root: Path, file_filter: FileFilter) -> list[str]:
    """Relative paths of every indexed file under ``root``, sorted."""
    found: list[str] = []
    stack = [""]
    while stack:
        prefix = stack.pop()
        try:
            entries = list(os.scandir(root / prefix if prefix else root))
        except OSError:
            continue
        for entry in entries:
            relative = f"{prefix}{entry.name}"
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not file_filter.exclude.match_file(
                        relative + "/"
                    ) and not is_virtualenv(Path(entry.path)):
                        stack.append(relative + "/")
                elif (
                    entry.is_file()
                    and file_filter.wants_listed(relative)
                    and not (
                        entry.is_symlink()
                        and link_refusal(root, relative, file_filter.secrets)
                    )
                ):
                    found.append(relative)
            except OSError:
                continue
    found.sort()
    return found
