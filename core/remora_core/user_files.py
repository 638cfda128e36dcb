"""The person's own files, outside every repository (DESIGN §12 "Trust and keys").

Two places, XDG style, each with an override so tests (and unusual setups)
never touch the real home directory:

- **settings**: ``$REMORA_CONFIG_HOME/config.yaml``, else
  ``$XDG_CONFIG_HOME/remora/config.yaml``, else ``~/.config/remora/config.yaml``.
  The same keys as ``remora.yaml``, but the person's: it may name
  ``model.api_key_env``, and its ``model.base_url`` receives the key. It sits
  below the project's files and the editor's settings (see ``config.py``).
- **state**: ``$REMORA_STATE_HOME/``, else ``$XDG_STATE_HOME/remora/``, else
  ``~/.local/state/remora/``. ``trust.json`` there remembers which projects the
  person trusts and which hosts may receive their key (``trust.py``).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import yaml

from remora_core.bounded_yaml import load_yaml

log = logging.getLogger(__name__)

CONFIG_FILE = "config.yaml"


def _home(override: str, xdg: str, fallback: tuple[str, ...]) -> Path:
    explicit = os.environ.get(override)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get(xdg)
    if base and Path(base).is_absolute():  # the XDG spec ignores relative values
        return Path(base) / "remora"
    return Path.home().joinpath(*fallback, "remora")


def config_dir() -> Path:
    """Where the person's settings file lives."""
    return _home("REMORA_CONFIG_HOME", "XDG_CONFIG_HOME", (".config",))


def state_dir() -> Path:
    """Where Remora remembers the person's decisions."""
    return _home("REMORA_STATE_HOME", "XDG_STATE_HOME", (".local", "state"))


def user_config_path() -> Path:
    """The person's settings file (it need not exist)."""
    return config_dir() / CONFIG_FILE


def read_user_config() -> tuple[dict[str, Any], list[str]]:
    """The raw settings of the person's file, and problems reading it."""
    path = user_config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, []
    except (OSError, UnicodeDecodeError) as error:
        return {}, [f"{path}: {error}"]
    try:
        data = load_yaml(text)
    except yaml.YAMLError as error:
        return {}, [f"{path}: {error}"]
    if data is None:
        return {}, []
    if not isinstance(data, dict):
        return {}, [f"{path}: the top level must be a mapping"]
    log.info("read the person's settings from %s", path)
    return data, []
