"""The embedded model paused, and agents' turns giving way, while the editor
is answered: what the LSP adapter takes from the engine for it, so that it
never reaches into ``agents/`` itself (``agents/model_pause.py`` says how the
pause works and why; ``agents/local.py`` which models it may stop;
``editor_first.py`` how turns give way).
"""

from __future__ import annotations

from remora_core.agents.local import editor_pausable
from remora_core.agents.model_pause import ModelPause
from remora_core.editor_first import EDITOR_FIRST, EditorFirst

__all__ = ["EditorFirst", "ModelPause", "editor_first", "editor_model_pause"]


def editor_model_pause() -> ModelPause:
    """A pause of the embedded models the editor's messages may stop now."""
    return ModelPause(editor_pausable)


def editor_first() -> EditorFirst:
    """The process's editor, whose waiting messages agents' turns give way to."""
    return EDITOR_FIRST
