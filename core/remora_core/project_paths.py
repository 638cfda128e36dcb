"""Project-relative paths for agents: nothing outside the root, no secrets.

Every tool that names a file goes through :func:`resolve_path`. A path is
interpreted relative to the project root; absolute paths, ``..`` escapes and
symlinks leading outside the root are refused, and so are files matching
``secrets.exclude`` (matched against the file name and the whole relative path).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from remora_core.discovery.files import secret_glob


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
