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
  projects whose effective settings changed (a warm start, ids kept).
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
from remora_core.project import Project

from remora_lsp.convert import encoding_of
from remora_lsp.editor import ControlEditor
from remora_lsp.features.agents import follow_runs, install_presenter
from remora_lsp.features.events import forward_events
from remora_lsp.features.graphs import follow_graphs
from remora_lsp.features.proposals import follow_proposals
from remora_lsp.logs import forward_to_client
from remora_lsp.progress import LspProgress, supports_progress
from remora_lsp.projects import uri_to_path
from remora_lsp.trust import client_trust

if TYPE_CHECKING:
    from remora_lsp.server import RemoraLanguageServer

log = logging.getLogger(__name__)

PARENT_CHECK_S = 5.0
GRAPH_POLL_S = 0.5
"""How often to look whether a project's graph finished loading."""
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
    roots = [uri_to_path(uri) for uri in uris]
    if not uris and params.root_path:
        roots = [Path(params.root_path)]
    return [root for root in roots if root is not None and root.is_dir()]


def make_project(
    ls: RemoraLanguageServer, root: Path, settings: dict[str, Any] | None
) -> tuple[Project, list[str]]:
    """A project for ``root`` with its effective settings, and their problems."""
    loaded = load_settings(root, settings)
    trust = ls.trust.for_project(root, loaded)
    progress = (lambda: LspProgress(ls)) if supports_progress(ls) else None
    project = Project(
        root,
        loaded.config(trust.trusted),
        notify=ls.tell_user,
        progress=progress,
        trust=trust,
        on_owner_gone=lambda: ls.run_task(_take_over(ls, root), name="take over"),
    )
    attach(ls, project)
    return project, loaded.problems


async def _take_over(ls: RemoraLanguageServer, root: Path) -> None:
    """The server that owned ``root``'s store stopped: own it now."""
    project = ls.projects.by_root.get(root)
    if project is None or project.closed:
        return
    owner = project.store_owner
    fresh = await restart_project(ls, root)
    if fresh is None:
        return
    if not await fresh.ready():
        return
    if not fresh.following:
        who = owner.describe() if owner is not None else "another process"
        ls.tell_user(
            f"Remora: the server that owned the store of {root.name} ({who}) "
            "stopped; this server owns it now (agents run here).",
            types.MessageType.Info,
        )


def attach(ls: RemoraLanguageServer, project: Project) -> None:
    """Connect a project (before it starts) to the editor: its events, the
    progress of its runs, its proposals as diagnostics.
    """
    forward_events(ls, project)
    follow_runs(ls, project)
    follow_proposals(ls, project)
    follow_graphs(ls, project)
    install_presenter(ls, project)


def register(server: RemoraLanguageServer) -> None:
    """Register the lifecycle handlers."""

    @server.feature(types.INITIALIZE)
    def initialize(ls: RemoraLanguageServer, params: types.InitializeParams) -> None:
        ls.encoding = encoding_of(ls.workspace.position_encoding)
        attach(ls, ls.projects.loose)
        ls.trust.client = client_trust(params.initialization_options)
        ls.initialization_settings = _editor_settings(params.initialization_options)
        ls.editor_settings = ls.initialization_settings
        _configure_loose(ls, restart=False)
        for root in _folders(params):
            project, _problems = make_project(ls, root, ls.editor_settings)
            ls.projects.add(project)  # problems are shown once the session is up
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
        for project in ls.projects:
            started = ls.run_task(_start(ls, project), name=f"start {project.root}")
            if project.root is not None:
                ls.starting[project.root] = started
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
    await asyncio.gather(
        *(project.close() for project in ls.projects), return_exceptions=True
    )
    await ls.tasks.close()


async def _start(ls: RemoraLanguageServer, project: Project) -> None:
    """Start a project, then move the start-up heap out of the collector's way.

    A large project leaves hundreds of thousands of long-lived objects; freezing
    them keeps full garbage collections (latency spikes while typing) short.
    """
    await project.start()
    if project.root is None:
        return  # files outside every folder: nothing was built
    if not project.following and not project.closed:
        # Imported here: the control socket (and every command it serves) is
        # not needed before the workspace is indexed.
        from remora_cli.control.server import serve_control

        # Lives as long as the project: closing it removes the socket.
        project.watchers.spawn(
            serve_control(ls.app(project), ControlEditor(ls, project)),
            name="control socket",
        )
    gc.collect()
    gc.freeze()
    if not project.graph.complete:
        ls.run_task(_freeze_when_loaded(project), name="freeze the graph")


async def _freeze_when_loaded(project: Project) -> None:
    """Freeze a lazily loaded graph too, once its background load is done
    (``core/remora_core/store/graph_loading.py``): like the start-up heap, it
    lives as long as the project, and full collections need not walk it.
    """
    while not project.graph.complete and not project.closed:
        await asyncio.sleep(GRAPH_POLL_S)
    if not project.closed:
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
    await _configure_loose_now(ls, restart)
    for root, project in list(ls.projects.by_root.items()):
        loaded = load_settings(root, ls.editor_settings)
        problems += [f"{root.name}: {p}" for p in loaded.problems]
        for message in loaded.refused:
            ls.tell_user(message)
        trust = ls.trust.for_project(root, loaded)
        config = loaded.config(trust.trusted)
        if config == project.config and (trust.trusted, trust.person_origins) == (
            project.trust.trusted,
            project.trust.person_origins,
        ):
            continue
        if not restart:
            project.reconfigure(config, trust)
            continue
        log.info("settings of %s changed: restarting its project", root)
        await restart_project(ls, root)
    if problems:
        ls.tell_user(describe_problems(problems))


async def restart_project(ls: RemoraLanguageServer, root: Path) -> Project | None:
    """Replace the project of ``root`` by one with the current settings and
    trust (a warm start: ids are kept, open documents carried over); the fresh
    one, None if ``root`` has no project.
    """
    starting = ls.starting.get(root)
    if starting is not None and not starting.done():
        # Two stores of one project opening at once race in their migrations.
        await asyncio.wait([starting])
    project = ls.projects.by_root.get(root)
    if project is None:
        return None
    fresh, _ = make_project(ls, root, ls.editor_settings)
    fresh.carry_documents(project)
    ls.projects.add(fresh)
    await project.close()  # gives up the store's lock before the fresh one opens it
    ls.starting[root] = ls.run_task(_start(ls, fresh), name=f"restart {root}")
    if ls.polling:
        _poll(ls, fresh)
    return fresh


def _loose_config(ls: RemoraLanguageServer):
    """The settings of files outside every workspace folder: the person's own
    (their settings file and the editor's), as no repository is involved.
    """
    return load_settings(None, ls.editor_settings).config(True)


def _configure_loose(ls: RemoraLanguageServer, *, restart: bool) -> bool:
    """Give the loose project the person's settings before it starts; whether
    it must be restarted to take them (it had started with others).
    """
    loose = ls.projects.loose
    config = _loose_config(ls)
    if config == loose.config:
        return False
    if loose.started or loose.closed:
        return restart
    loose.reconfigure(config)
    return False


async def _configure_loose_now(ls: RemoraLanguageServer, restart: bool) -> None:
    """Apply changed settings to the loose project, restarting it if it runs
    (its open documents are carried over, as for a workspace folder).
    """
    if not _configure_loose(ls, restart=restart):
        return
    old = ls.projects.loose
    fresh = Project(None, _loose_config(ls), notify=ls.tell_user)
    fresh.carry_documents(old)
    attach(ls, fresh)
    ls.projects.loose = fresh
    await old.close()
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
    for project in ls.projects.by_root.values():
        _poll(ls, project)


def _poll(ls: RemoraLanguageServer, project: Project) -> None:
    interval = project.config.discovery.poll_interval_ms / 1000
    if interval > 0:
        ls.run_task(project.disk.poll(interval), name=f"poll {project.root}")


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
