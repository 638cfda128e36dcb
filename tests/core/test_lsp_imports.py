"""What the LSP adapter may take from the engine: an allow-list.

``remora_lsp`` is the LSP adapter: it holds apps (the handle), calls their
facades and the command table (the front), implements the editor port and
renders a few plain data types. It never reaches into the engine's rooms
(``index/``, ``swarm/``, ``agents/``, ``store/``, ``review/`` decisions…): what
it needs from there is a facade's job. Every module of ``remora_core`` that
``remora_lsp`` imports — at the top, in a function or under ``TYPE_CHECKING`` —
must be listed here, with why.
"""

from __future__ import annotations

from pathlib import Path

from tests.core.test_boundary import imported_modules

LSP = Path(__file__).resolve().parents[2] / "remora_lsp"

ALLOWED = {
    # The handle and the front: the app, its facades' errors, the command
    # table the adapter registers, where files are (uri ↔ path), the on-disk
    # editor the control socket uses for files no buffer holds, and the events
    # that end a run (progress ends with them).
    "remora_core.front.app": "the handle",
    "remora_core.front.commands": "the command table, registered once",
    "remora_core.front.table": "a command's route, door and argument parsing",
    "remora_core.front.errors": "the front's errors, answered as JSON-RPC errors",
    "remora_core.front.locations": "uri ↔ project path, as every door converts",
    "remora_core.front.disk_editor": "files no buffer holds, for the socket",
    "remora_core.front.runs": "which events end a run (its progress ends)",
    "remora_core.front.editor_pause": "the model paused while the editor is answered",
    # The editor port the adapter implements, and its progress sink.
    "remora_core.editor": "the Editor port",
    "remora_core.progress": "the progress sink the port hands out",
    # Plain data the adapter renders or passes through.
    "remora_core.model": "nodes, their kinds and statuses (symbols, lenses)",
    "remora_core.text": "positions and line indexes (LSP ranges)",
    "remora_core.events.store": "a persisted event (the remora/event stream)",
    "remora_core.review.proposals": "a proposal (diagnostics, lenses)",
    "remora_core.review.edits": "the file edits an editor applies",
    "remora_core.index.documents": "a text change and an open document",
    "remora_core.agents.questions": "an agent's question, shown to the person",
    # What the editor itself contributes: the person's settings (the editor's
    # are one of their sources) and the trust decisions it takes for them.
    "remora_core.config": "loading and merging the person's settings",
    "remora_core.trust": "the trust decisions the editor implements",
    # Helpers that are not the engine: the version, scrubbing keys out of
    # every message, the one background-task helper (CONVENTIONS §7).
    "remora_core": "the version",
    "remora_core.redact": "keys scrubbed from messages and logs",
    "remora_core.tasks": "background tasks kept and logged",
    "remora_core.cache_folder": "the user's cache (the types' compiled code)",
    "remora_core.index.collector": "the collector paused while a project starts",
}


def core_imports(path: Path) -> list[tuple[int, str]]:
    return [
        (line, module)
        for line, module in imported_modules(path)
        if module.split(".")[0] == "remora_core"
    ]


def test_the_lsp_adapter_takes_only_the_front_the_port_and_plain_data():
    sources = sorted(LSP.rglob("*.py"))
    assert len(sources) > 10  # the real package
    refused = [
        f"{path.relative_to(LSP.parent)}:{line} imports {module}"
        for path in sources
        for line, module in core_imports(path)
        if module not in ALLOWED
    ]
    assert refused == [], "\n".join(refused)


def test_every_allowed_module_is_used():
    """The list is the truth, not a wish list: a module no longer imported
    leaves it.
    """
    used = {module for path in LSP.rglob("*.py") for _, module in core_imports(path)}
    assert set(ALLOWED) - used == set()


def test_the_check_sees_a_reach_into_the_engine(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\n"
        "from remora_core.front.app import RemoraApp\n"
        "if TYPE_CHECKING:\n"
        "    from remora_core.swarm.runner import Runner\n"
    )
    assert [m for _, m in core_imports(sample) if m not in ALLOWED] == [
        "remora_core.swarm.runner"
    ]
