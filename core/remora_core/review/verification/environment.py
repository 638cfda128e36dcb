"""The environment a verification run gets: an allow-list, never the person's.

A trusted project's tests are its code, and they would otherwise run with the
whole environment of the person's editor: the model's key, every other API
key and token, the proxies (with their passwords) — all one ``requests.post``
away from a host the person never approved. So the run is given only what a
test needs to start and behave like at a terminal, every name listed here:

- passed from the person's environment when set: :data:`PASSED` (the program
  search path, the locale and time zone, the user's name, the temporary
  folder; on Windows the few variables a process needs to start), and
  ``PYTHONPATH`` after the copy's own paths;
- set by Remora: ``HOME`` (and ``USERPROFILE``) to an empty folder of the run,
  so no test reads ``~/.netrc``, ``~/.aws`` or ``~/.config``;
  ``PYTHONPATH`` starting with the copy (and its ``src/``);
  ``PYTHONDONTWRITEBYTECODE=1``.

Everything else is left out: proxies (``HTTP_PROXY``, ``HTTPS_PROXY``,
``ALL_PROXY``, ``NO_PROXY`` in either case), cloud credentials (``AWS_*``,
``GOOGLE_*``, ``AZURE_*``), ``PYTEST_ADDOPTS`` and the server's own settings.
As a second fence, a passed name is dropped anyway when it is the variable
``model.api_key_env`` names or looks like a secret (:func:`looks_secret`),
so ``LC_X_TOKEN`` does not pass as a locale variable.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

PASSED = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TMPDIR",
    "USER",
    "LOGNAME",
    # Windows: a process cannot start (or find its temporary folder) without
    # these; they name folders, nothing secret.
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "TEMP",
    "TMP",
)
"""Names (``LC_*``: a prefix) passed from the person's environment when set."""

_SECRET = re.compile(
    r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIAL|CREDENTIALS|AUTH|PROXY)$"
    r"|^(AWS|AZURE|GOOGLE|GCP|OPENAI|ANTHROPIC)_",
    re.IGNORECASE,
)


def looks_secret(name: str) -> bool:
    """Whether a variable's name says it holds a credential or a proxy."""
    return bool(_SECRET.search(name)) or "API_KEY" in name.upper()


def _allowed(name: str) -> bool:
    return name in PASSED or name.startswith("LC_")


def run_environment(
    copy: Path,
    home: Path,
    *,
    key_names: Iterable[str] = (),
    source: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The variables of a test run in ``copy`` whose ``HOME`` is ``home``.

    ``key_names``: variables named by the settings (``model.api_key_env``),
    never passed whatever their name; ``source``: the environment to choose
    from (the server's by default).
    """
    source = os.environ if source is None else source
    refused = set(key_names)
    env = {
        name: value
        for name, value in source.items()
        if _allowed(name) and name not in refused and not looks_secret(name)
    }
    paths = [str(copy)]
    if (copy / "src").is_dir():
        paths.append(str(copy / "src"))
    if source.get("PYTHONPATH"):
        paths.append(source["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["HOME"] = str(home)
    if os.name == "nt":
        env["USERPROFILE"] = str(home)
    return env
