"""Git, read and never obeyed: the one place Remora runs ``git``.

A repository's ``.git/config`` (and its ``.gitattributes`` and hooks) is the
repository's, so it is untrusted input: a partial clone whose promisor remote
is ``ext::sh -c …``, a ``core.sshCommand``, a ``remote.*.uploadpack``, a
``core.fsmonitor`` hook or a pager would each run a stranger's command the
moment git touched the repository. Every git call therefore goes through
:func:`run`, which

- **fetches nothing.** ``GIT_ALLOW_PROTOCOL`` set to nothing allows *no*
  transport, overriding every ``protocol.*`` setting of any config file (git
  documents the variable so): a lazy fetch of a missing object — which git
  2.39, Debian 12's, starts for a partial clone whatever we ask — dies with
  "transport 'ext' not allowed" before any ``ext::`` command, ``ssh`` command,
  ``uploadpack`` or credential helper could run. ``GIT_NO_LAZY_FETCH=1``
  (git ≥ 2.44) does not even start the fetch. A missing object is then just
  missing: the caller treats the file as not in ``HEAD``;
- **runs none of the repository's commands.** ``-c`` overrides, which win over
  every config file and reach the children git starts
  (``GIT_CONFIG_PARAMETERS``): no fsmonitor hook, hooks from an empty place,
  no pager (and ``--no-pager``), no credential helper, ``false`` as the ssh
  and askpass command, no automatic gc or maintenance, and an embedded bare
  repository (a project folder that *is* a git directory) is not used;
- **runs only read-only plumbing** (:data:`ALLOWED`): ``cat-file --batch``
  without ``--filters``/``--textconv`` and ``rev-parse``, which never apply a
  diff driver, textconv or clean/smudge filter from ``.gitattributes``. A new
  subcommand is added here deliberately, after checking what it runs.

The person's own configuration (``/etc/gitconfig``, ``~/.gitconfig``) is
kept: it is theirs, and it holds what makes git safe for them
(``safe.directory``, so a repository owned by someone else is still refused
with "dubious ownership"). The overrides above win over it too, for the few
keys they name.

``tests/core/test_safe_git.py`` ships a hostile ``.git`` of each kind and
checks that nothing ran, and that no other module spawns git.
"""

from __future__ import annotations

import logging
import os
import subprocess
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

log = logging.getLogger(__name__)

ALLOWED = frozenset({"cat-file", "rev-parse"})
"""Subcommands Remora runs: plumbing that reads objects and refs, and never
runs a filter, textconv, diff driver or hook."""

REFUSED_OPTIONS = frozenset({"--filters", "--textconv", "--path"})
"""``cat-file`` options that would apply ``.gitattributes`` drivers."""

CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.pager", "cat"),
    ("core.sshCommand", "false"),
    ("core.askPass", "false"),
    ("credential.helper", ""),  # an empty value clears the list
    ("protocol.allow", "never"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("safe.bareRepository", "explicit"),
)
"""``-c`` overrides: each names a setting a repository could use to run a
command, set to a value that runs nothing."""

ENVIRONMENT: Mapping[str, str] = {
    "GIT_ALLOW_PROTOCOL": "",  # no transport at all: nothing is fetched
    "GIT_NO_LAZY_FETCH": "1",  # git >= 2.44: a missing object is not fetched
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "false",
    "GIT_SSH_COMMAND": "false",
    "GIT_PAGER": "cat",
    "GIT_OPTIONAL_LOCKS": "0",  # a read never rewrites the index
}
"""Environment for git, over the person's own."""

DROPPED = (
    "GIT_EXTERNAL_DIFF",
    # Where the repository is: set by git for a hook (``remora trailers`` from
    # ``prepare-commit-msg``), relative to another folder; the project's own
    # repository is found from the project folder instead.
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
)
"""The person's variables a read never needs."""


class GitRefused(ValueError):
    """A git call this module does not run (a subcommand not in ALLOWED)."""


def command(root: Path, args: list[str]) -> list[str]:
    """The argv that runs ``git args`` in ``root`` with the overrides."""
    if not args or args[0] not in ALLOWED:
        raise GitRefused(f"git {args[:1]} is not among the read-only calls {ALLOWED}")
    if REFUSED_OPTIONS.intersection(args[1:]):
        raise GitRefused(f"git {' '.join(args)} would apply .gitattributes drivers")
    overrides = [part for key, value in CONFIG for part in ("-c", f"{key}={value}")]
    return ["git", "--no-pager", *overrides, "-C", str(root), *args]


def environment() -> dict[str, str]:
    """The person's environment with :data:`ENVIRONMENT` over it."""
    env = {k: v for k, v in os.environ.items() if k not in DROPPED}
    env.update(ENVIRONMENT)
    return env


def run(
    root: Path, args: list[str], *, given: bytes | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[bytes] | None:
    """``git args`` in ``root``, read and never obeyed; None when git is not
    there, could not start or took over ``timeout`` seconds. ``given`` is
    its standard input (none otherwise).
    """
    try:
        return subprocess.run(
            command(root, args),
            input=given,
            stdin=None if given is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
            env=environment(),
            # No controlling terminal: nothing git starts, and no config
            # ``include.path = /dev/tty``, can read from or wait on the person's.
            start_new_session=True,
        )
    except (OSError, subprocess.SubprocessError) as problem:
        log.debug("git %s in %s: %s", args[0], root, problem)
        return None
