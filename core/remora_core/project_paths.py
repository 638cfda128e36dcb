"""Project paths, safely: nothing outside the root, no secrets.

Every tool that names a file goes through :func:`resolve_path`. A path is
interpreted relative to the project root; absolute paths, ``..`` escapes and
symlinks leading outside the root are refused, and so are files matching
``secrets.exclude`` (matched against the file name and the whole relative path).

Every read of a project file from disk for a person, an agent or an MCP host
goes through :func:`read_project_file` (``CodeIndex.read_text``, which agents'
prompts and tools, proposals, verification, attribution and node sources use),
and every write of one through :func:`real_project_file` (``DiskEditor``). The
path is resolved *when it is read or written*, not only when the file was
indexed: a store can name any path (``/home/me/.aws/credentials.py``,
``../x.py``) and a file can be swapped for a link after indexing. A link is
followed only to a file inside the project that is not secret; the file
opened is checked again after opening (``/proc/self/fd``), so a folder
swapped for a link in between is caught too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

from remora_core.discovery.files import SourceSkipped, check_source, secret_glob

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO named x.py must not hang the reader
    | getattr(os, "O_CLOEXEC", 0)
)


class PathRefused(ValueError):
    """A path an agent may not use; the message says why, for the model."""


def resolve_path(root: Path, path: str, secrets: list[str] | tuple[str, ...]) -> str:
    """The project path (``/`` separators) for ``path``, or :class:`PathRefused`."""
    if not isinstance(path, str) or not path.strip():
        raise PathRefused("give a file path relative to the project root")
    if "\x00" in path:
        raise PathRefused("a path may not contain NUL characters")
    pure = PurePosixPath(path.replace("\\", "/"))
    if pure.is_absolute():
        raise PathRefused(
            f"{path!r} is absolute; give a path relative to the project root"
        )
    root = root.resolve()
    target = (root / pure).resolve()  # follows symlinks and ``..``
    try:
        relative = target.relative_to(root).as_posix()
    except ValueError:
        raise PathRefused(f"{path!r} is outside the project; access refused") from None
    if relative == ".":
        raise PathRefused("give a file path, not the project root")
    if is_secret(relative, secrets):
        raise PathRefused(f"{relative!r} matches secrets.exclude; access refused")
    return relative


def is_secret(relative: str, secrets: list[str] | tuple[str, ...]) -> bool:
    """Whether a project path matches one of the ``secrets.exclude`` globs."""
    return secret_glob(relative, secrets) is not None


def real_project_file(
    root: Path, relative: str, secrets: list[str] | tuple[str, ...] = ()
) -> Path:
    """The real file the project path ``relative`` names, links followed:
    :class:`PathRefused` (saying why) when it is absolute, leads outside the
    root, or is a link to a file matching ``secrets``.
    """
    pure = PurePosixPath(relative)
    if not relative or "\x00" in relative or pure.is_absolute():
        raise PathRefused(f"{relative!r} is not a path inside the project")
    home = root.resolve()
    named = home / pure
    real = named.resolve()  # follows every link and ``..``
    if not real.is_relative_to(home) or real == home:
        how = "a symbolic link to" if named.is_symlink() else "a path to"
        raise PathRefused(f"{relative} is {how} {real}, outside the project")
    target = real.relative_to(home).as_posix()
    if target != pure.as_posix() and (glob := secret_glob(target, secrets)):
        raise PathRefused(
            f"{relative} leads to {target}, which matches secrets.exclude ({glob!r})"
        )
    return real


def read_project_file(
    root: Path,
    relative: str,
    max_bytes: int,
    secrets: list[str] | tuple[str, ...] = (),
) -> bytes:
    """The bytes of the project file ``relative``, read safely (see the module
    doc): :class:`PathRefused` or :class:`SourceSkipped` (too large, binary,
    not UTF-8, not a regular file) otherwise.
    """
    real = real_project_file(root, relative, secrets)
    try:
        fd = os.open(real, _OPEN_FLAGS)
    except OSError as error:  # gone, or swapped for a link since resolving
        raise SourceSkipped(f"cannot be read ({error.strerror or error})") from None
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            raise SourceSkipped("is not a regular file")
        _check_opened(fd, root.resolve(), relative)
        if found.st_size > max_bytes:
            raise SourceSkipped(
                f"larger than the limit of {max_bytes} bytes ({found.st_size} "
                "bytes; raise discovery.max_file_bytes to index it)"
            )
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    check_source(data, max_bytes)
    return data


def read_project_head(
    root: Path,
    relative: str,
    max_bytes: int,
    secrets: list[str] | tuple[str, ...] = (),
) -> tuple[bytes, int]:
    """The first ``max_bytes`` bytes of the project file ``relative`` and its
    whole size, read as safely as :func:`read_project_file` (a file named by
    the repository, such as ``AGENTS.md``, read in part however large it
    is): :class:`PathRefused` or :class:`SourceSkipped` (not a regular file,
    binary) otherwise. The head may end inside a UTF-8 character.
    """
    if is_secret(relative, secrets):
        raise PathRefused(f"{relative!r} matches secrets.exclude; access refused")
    real = real_project_file(root, relative, secrets)
    try:
        fd = os.open(real, _OPEN_FLAGS)
    except OSError as error:
        raise SourceSkipped(f"cannot be read ({error.strerror or error})") from None
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            raise SourceSkipped("is not a regular file")
        _check_opened(fd, root.resolve(), relative)
        chunks: list[bytes] = []
        left = max_bytes
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if b"\x00" in data:
        raise SourceSkipped("looks binary (contains a NUL byte)")
    return data, max(found.st_size, len(data))


def _check_opened(fd: int, home: Path, relative: str) -> None:
    """:class:`PathRefused` if the file open at ``fd`` is not inside ``home``
    (a folder on the way swapped for a link after resolving). Where the
    system cannot say (no ``/proc``), the resolved path stands.
    """
    try:
        opened = Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return
    if not opened.is_relative_to(home):
        raise PathRefused(f"{relative} is {opened}, outside the project")
