"""Session lifecycle: initialize, initialized, configuration, shutdown and exit.

- ``initialize`` negotiates the position encoding and creates one project per
  workspace folder with settings from the person's settings file,
  ``pyproject.toml``, ``remora.yaml`` and ``initializationOptions`` (either the
  settings themselves or under a ``remora`` key; a top-level
  ``workspaceTrust`` is the client's trust, see ``remora_lsp/trust.py``).
  Problems found are shown once the session is up.
- ``initialized`` pulls ``workspace/configuration`` (section ``remora``) when
  the client offers it, then starts every project: open the store, load it,
  index the workspace (with work-done progress when supported); then asks
  whether to trust a repository that needs it, or says why it is untrusted.
- ``workspace/didChangeConfiguration`` re-reads settings and restarts the
  projects whose effective settings changed (a warm start, ids kept): a
  fresh :class:`~remora_core.front.app.RemoraApp` carrying the open documents
  replaces the old one, which closes first (it gives up the store's lock).
- ``shutdown`` writes everything pending and closes every store and worker
  pool, so ``exit`` ends the process at once.
- A project whose store another server owned (it served it read-only) is
  restarted when that server stops, and then owns the store itself: the person
  is told once (``core/remora_core/following.py``).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from remora_core.config import describe_problems, load_settings, merge
from remora_core.front.app import RemoraApp
from remora_core.front.locations import uri_path
from remora_core.index.collector import collector_paused

from remora_lsp.convert import encoding_of
from remora_lsp.editor import ControlEditor, LspEditor
from remora_lsp.event_views import event_views
from remora_lsp.logs import forward_to_client
from remora_lsp.trust import client_trust

if TYPE_CHECKING:
    from remora_core.config import RemoraConfig
    from remora_core.index.documents import OpenDocument
    from remora_core.trust import Trust

    from remora_lsp.server import RemoraLanguageServer

log = logging.getLogger(__name__)

PARENT_CHECK_S = 5.0
EXIT_GRACE_S = 10.0


def _editor_settings(options: Any) -> dict[str, Any] | None:
    if not isinstance(options, dict):
        return None
    inner = options.get("remora")
    return inner if isinstance(inner, dict) else options


def _folders(params: types.InitializeParams) -> list[Path]:
    uris = [folder.uri for folder in params.workspace_folders or []]
    if not uris and params.root_uri:
        uris = [params.root_uri]
    roots = [uri_path(uri) for uri in uris]
    if not uris and params.root_path:
        roots = [Path(params.root_path)]
    return [root for root in roots if root is not None and root.is_dir()]


def make_app(
    ls: RemoraLanguageServer,
    root: Path | None,
    config: RemoraConfig,
    *,
    trust: Trust | None = None,
    documents: dict[str, OpenDocument] | None = None,
) -> RemoraApp:
    """An app for ``root`` whose editor is this one over LSP (not started)."""
    editor = LspEditor(ls, root, event_views(ls, root))
    return RemoraApp(
        root,
        config,
        editor,
        trust=trust,
        decisions=ls.trust,
        on_owner_gone=(
            (lambda: ls.run_task(_take_over(ls, root), name="take over"))
            if root is not None
            else None
        ),
        documents=documents,
    )


def make_folder_app(
    ls: RemoraLanguageServer,
    root: Path,
    documents: dict[str, OpenDocument] | None = None,
) -> tuple[RemoraApp, list[str]]:
    """The app of a workspace folder with its effective settings and trust
    (not started), and the settings' problems.
    """
    loaded = load_settings(root, ls.editor_settings)
    trust = ls.trust.for_project(root, loaded)
    config = loaded.config(trust.trusted)
    return make_app(ls, root, config, trust=trust, documents=documents), loaded.problems


async def _take_over(ls: RemoraLanguageServer, root: Path) -> None:
    """The server that owned ``root``'s store stopped: own it now."""
    app = ls.projects.by_root.get(root)
    if app is None or app.closed:
        return
    owner = app.owner
    fresh = await restart_app(ls, root)
    if fresh is None or not await fresh.ready():
        return
    if not fresh.read_only:
        ls.tell_user(
            f"Remora: the server that owned the store of {root.name} "
            f"({owner or 'another process'}) stopped; this server owns it now "
            "(agents run here).",
            types.MessageType.Info,
        )


def register(server: RemoraLanguageServer) -> None:
    """Register the lifecycle handlers."""

    @server.feature(types.INITIALIZE)
    def initialize(ls: RemoraLanguageServer, params: types.InitializeParams) -> None:
        ls.encoding = encoding_of(ls.workspace.position_encoding)
        ls.trust.client = client_trust(params.initialization_options)
        ls.initialization_settings = _editor_settings(params.initialization_options)
        ls.editor_settings = ls.initialization_settings
        ls.projects.loose = make_app(ls, None, _loose_config(ls))
        for root in _folders(params):
            app, _problems = make_folder_app(ls, root)
            ls.projects.add(app)  # problems are shown once the session is up
        log.info(
            "initialized for %s, position encoding %s",
            [str(r) for r in ls.projects.by_root] or "no folder",
            ls.encoding.value,
        )

    @server.feature(types.INITIALIZED)
    async def initialized(
        ls: RemoraLanguageServer, params: types.InitializedParams
    ) -> None:
        forward_to_client(ls)
        await _pull_settings(ls, restart=False)
        await _watch_files(ls)
        for app in ls.projects:
            started = ls.run_task(_start(ls, app), name=f"start {app.root}")
            if app.root is not None:
                ls.starting[app.root] = started
        for root in list(ls.projects.by_root):
            ls.trust.review(root)
        if ls.process_id:
            ls.run_task(_watch_parent(ls, ls.process_id), name="parent watch")

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: RemoraLanguageServer, params: types.DidChangeConfigurationParams
    ) -> None:
        pushed = _editor_settings(params.settings)
        if pushed is not None:
            ls.editor_settings = merge(ls.initialization_settings or {}, pushed)
        await _pull_settings(ls, restart=True)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: RemoraLanguageServer, params: None) -> None:
        ls.exit_code = 0
        await close_everything(ls)

    @server.feature(types.EXIT)
    async def exit_(ls: RemoraLanguageServer, params: None) -> None:
        # Also without a shutdown (or while one is still writing): nothing pending
        # is lost, but a stuck disk must not keep the process alive forever.
        try:
            await asyncio.wait_for(close_everything(ls), EXIT_GRACE_S)
        except TimeoutError:
            log.error("exit: closing took over %s s; exiting anyway", EXIT_GRACE_S)
        log.info("exit (code %d)", ls.exit_code)
        ls.model_pause.close()  # a paused model goes on (then ends)
        # Everything is written; leave now rather than through asyncio's teardown,
        # which would wait on the thread blocked reading stdin.
        logging.shutdown()
        os._exit(ls.exit_code)


async def close_everything(ls: RemoraLanguageServer) -> None:
    """Write what is pending and close every project, once."""
    if ls.closing is None:
        ls.closing = asyncio.ensure_future(_close(ls))
    await asyncio.shield(ls.closing)


async def _close(ls: RemoraLanguageServer) -> None:
    await asyncio.gather(*(app.close() for app in ls.projects), return_exceptions=True)
    await ls.tasks.close()


async def _start(ls: RemoraLanguageServer, app: RemoraApp) -> None:
    """Start an app, then move the start-up heap out of the collector's way.

    A large project leaves hundreds of thousands of long-lived objects; freezing
    them keeps full garbage collections (latency spikes while typing) short.

    The collector stays off from the start to the freeze, and the heap is
    frozen without a collection first. Resumed as soon as indexing ended, the
    collector walked every object indexing had made at its first young
    collection (0.2–0.4 s of CPU for the stdlib twice), then a full collection
    before the freeze walked them all again (0.37 s), both before the end of
    the indexing progress went out, to free 352 unreachable objects of the
    678k tracked. Those few are kept now (frozen, as the lazily loaded
    graph's freeze below always kept what it found).
    """
    with collector_paused():  # the pause the index takes too: one counter
        await app.start()
        if app.root is None:
            return  # files outside every folder: nothing was built
        if not app.read_only and not app.closed:
            # Imported here: the control socket (and every command it serves) is
            # not needed before the workspace is indexed.
            from remora_cli.control.server import serve_control

            # Lives as long as the app: closing it removes the socket.
            app.keep(
                serve_control(app, ControlEditor(_lsp_editor(app), app)),
                name="control socket",
            )
        gc.freeze()
    ls.run_task(_freeze_when_loaded(app), name="freeze the graph")


def _lsp_editor(app: RemoraApp) -> LspEditor:
    editor = app.editor
    assert isinstance(editor, LspEditor)  # every app of this server has one
    return editor


async def _freeze_when_loaded(app: RemoraApp) -> None:
    """Freeze a lazily loaded graph too, once its background load is done
    (``core/remora_core/index/graph_loading.py``): like the start-up heap, it
    lives as long as the project, and full collections need not walk it.
    """
    await app.graph_complete()
    if not app.closed:
        gc.freeze()


async def _pull_settings(ls: RemoraLanguageServer, *, restart: bool) -> None:
    """Ask the client for section ``remora`` and apply what changed.

    Pulled settings are merged over ``initializationOptions`` key by key.
    Problems are shown in one message (the same message is never repeated).
    """
    workspace = ls.client_capabilities.workspace
    if workspace is not None and workspace.configuration:
        try:
            answer = await ls.workspace_configuration_async(
                types.ConfigurationParams(
                    items=[types.ConfigurationItem(section="remora")]
                )
            )
            if answer and isinstance(answer[0], dict):
                ls.editor_settings = merge(ls.initialization_settings or {}, answer[0])
        except Exception as error:
            log.info("workspace/configuration failed: %s", error)
    problems: list[str] = []
    await _reconfigure_loose(ls, restart)
    for root, app in list(ls.projects.by_root.items()):
        loaded = load_settings(root, ls.editor_settings)
        problems += [f"{root.name}: {p}" for p in loaded.problems]
        for message in loaded.refused:
            ls.tell_user(message)
        trust = ls.trust.for_project(root, loaded)
        if app.same_settings(loaded.config(trust.trusted), trust):
            continue
        if not restart:  # not started yet: a fresh app takes its documents
            fresh, _ = make_folder_app(ls, root, app.documents.carried())
            ls.projects.add(fresh)
            await app.close()
            continue
        log.info("settings of %s changed: restarting its project", root)
        await restart_app(ls, root)
    if problems:
        ls.tell_user(describe_problems(problems))


async def restart_app(ls: RemoraLanguageServer, root: Path) -> RemoraApp | None:
    """Replace the app of ``root`` by one with the current settings and trust
    (a warm start: ids are kept, open documents carried over); the fresh one,
    None if ``root`` has no app.
    """
    starting = ls.starting.get(root)
    if starting is not None and not starting.done():
        # Two stores of one project opening at once race in their migrations.
        await asyncio.wait([starting])
    app = ls.projects.by_root.get(root)
    if app is None:
        return None
    fresh, _ = make_folder_app(ls, root, app.documents.carried())
    ls.projects.add(fresh)
    await app.close()  # gives up the store's lock before the fresh one opens it
    ls.starting[root] = ls.run_task(_start(ls, fresh), name=f"restart {root}")
    if ls.polling:
        _poll(ls, fresh)
    return fresh


def _loose_config(ls: RemoraLanguageServer) -> RemoraConfig:
    """The settings of files outside every workspace folder: the person's own
    (their settings file and the editor's), as no repository is involved.
    """
    return load_settings(None, ls.editor_settings).config(True)


async def _reconfigure_loose(ls: RemoraLanguageServer, restart: bool) -> None:
    """Give the loose app the person's current settings: a fresh app carrying
    its open documents replaces it (started if the old one was).
    """
    old = ls.projects.loose
    config = _loose_config(ls)
    if config == old.config:
        return
    fresh = make_app(ls, None, config, documents=old.documents.carried())
    ls.projects.loose = fresh
    await old.close()
    if restart:
        ls.run_task(_start(ls, fresh), name="restart loose files")


async def _watch_files(ls: RemoraLanguageServer) -> None:
    """Have the editor watch ``**/*.py`` for us, or poll the disk ourselves."""
    workspace = ls.client_capabilities.workspace
    watched = workspace.did_change_watched_files if workspace else None
    if watched is not None and watched.dynamic_registration:
        try:
            await ls.client_register_capability_async(
                types.RegistrationParams(
                    registrations=[
                        types.Registration(
                            id="remora-watch-python",
                            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            register_options=types.DidChangeWatchedFilesRegistrationOptions(
                                watchers=[
                                    types.FileSystemWatcher(glob_pattern="**/*.py"),
                                    types.FileSystemWatcher(glob_pattern="**/*.pyi"),
                                ]
                            ),
                        )
                    ]
                )
            )
            return
        except Exception as error:
            log.warning("the editor refused to watch files (%s); polling", error)
    ls.polling = True
    for app in ls.projects.by_root.values():
        _poll(ls, app)


def _poll(ls: RemoraLanguageServer, app: RemoraApp) -> None:
    ls.run_task(app.files.poll(), name=f"poll {app.root}")


async def _watch_parent(ls: RemoraLanguageServer, pid: int) -> None:
    """Exit when the editor that started us is gone (no orphaned servers)."""
    while True:
        await asyncio.sleep(PARENT_CHECK_S)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            log.warning("the editor (pid %d) is gone; exiting", pid)
            await asyncio.wait_for(close_everything(ls), EXIT_GRACE_S)
            os._exit(1)
        except PermissionError:
            pass
