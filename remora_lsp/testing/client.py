"""The test client: the real ``remora-lsp`` over stdio, driven by pytest-lsp
with the capabilities of Neovim 0.11 or VS Code.

- :func:`launch` starts the server and always stops it (killed if a test
  failed half-way, so nothing waits for an exit that never comes);
  :func:`start_session` also initializes it on a project and waits until the
  first indexing has ended.
- :class:`RemoraClient` records what an editor reacts to: every
  ``remora/event`` (as JSON-like dicts, in ``events``), registrations and code
  lens refreshes.
- :func:`remora_converter` fixes lsprotocol 2025.0.0's client-side structure
  hook for ``Command | CodeAction``: it decides on the mere presence of a
  ``command`` key, so every ``CodeAction`` carrying a command (Remora's
  "Accept: …" does) comes back as a ``Command`` whose ``command`` is the
  stringified command object. Here a ``Command`` is recognised by its
  ``command`` being a string, as the protocol defines it.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any, Union

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from remora_lsp import pygls_private
from remora_lsp.testing.waiting import wait_indexed

log = logging.getLogger(__name__)

EDITORS = ("neovim", "visual-studio-code")
"""The client capabilities every end-to-end test runs with (pytest-lsp names)."""


def server_command() -> list[str]:
    """The ``remora-lsp`` console script next to this interpreter (or on PATH)."""
    beside = Path(sys.executable).with_name("remora-lsp")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("remora-lsp")
    if found is None:
        raise RuntimeError(
            "remora-lsp is not installed in this environment: "
            "pip install 'remora-lsp[testing]'"
        )
    return [found]


def remora_converter():
    """Pygls's converter with a correct ``Command | CodeAction`` structure hook."""
    converter = default_converter()

    def command_or_action(value: Any, _: type) -> types.Command | types.CodeAction:
        if isinstance(value, dict) and isinstance(value.get("command"), str):
            return converter.structure(value, types.Command)
        return converter.structure(value, types.CodeAction)

    # Registered for the exact union lsprotocol registers its own hook for.
    converter.register_structure_hook(
        Union[types.Command, types.CodeAction],  # noqa: UP007 (cattrs needs typing.Union)
        command_or_action,
    )
    return converter


def plain(value: Any) -> Any:
    """JSON-like data from what pygls gives for custom messages (named tuples)."""
    if hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


class RemoraClient(LanguageClient):
    """A pytest-lsp client that keeps what an editor would react to."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("converter_factory", remora_converter)
        super().__init__(*args, **kwargs)
        self.editor: str = "neovim"
        """Whose capabilities this client announces (``EDITORS``)."""
        self.root: Path = Path()
        """The project folder the session opened."""
        self.position_encoding: str | None = None
        """The position encoding the server chose."""
        self.events: list[dict[str, Any]] = []
        """Every ``remora/event`` received, oldest first."""
        self.registrations: list[types.Registration] = []
        self.lens_refreshes = 0
        self.buffers: dict[str, Any] = {}
        """Documents opened through :class:`remora_lsp.testing.buffers.Buffer`."""
        self._record()

    def _record(self) -> None:
        @self.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register_capability(params: types.RegistrationParams) -> None:
            self.registrations.extend(params.registrations)

        @self.feature("remora/event")
        def remora_event(params: Any) -> None:
            self.events.append(plain(params))

        @self.feature(types.WORKSPACE_CODE_LENS_REFRESH)
        def code_lens_refresh(params: Any) -> None:
            self.lens_refreshes += 1


def make_client() -> RemoraClient:
    """A :class:`RemoraClient` with pytest-lsp's default handlers (diagnostics,
    progress, messages) — a ``client_factory`` for ``ClientServerConfig``.
    """
    client = RemoraClient()
    register_lsp_features(client)
    return client


def initialize_params(editor: str, root: Path, **extra: Any) -> types.InitializeParams:
    """What ``editor`` sends to open ``root`` as its only workspace folder."""
    return types.InitializeParams(
        capabilities=client_capabilities(editor),
        root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        **extra,
    )


@contextlib.asynccontextmanager
async def launch(
    *,
    args: tuple[str, ...] = ("-v",),
    command: list[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> AsyncIterator[RemoraClient]:
    """A started server and its client, not yet initialized; stopped after."""
    config = ClientServerConfig(
        server_command=command or [*server_command(), *args],
        client_factory=make_client,
        server_env=dict(env) if env is not None else None,
    )
    client = await config.start()
    assert isinstance(client, RemoraClient)
    try:
        yield client
    finally:
        server = pygls_private.server_process(client)
        if server is not None and server.returncode is None:
            server.kill()  # the test failed half-way: do not wait for an exit
        await client.stop()


@contextlib.asynccontextmanager
async def start_session(
    editor: str,
    root: Path,
    settings: dict[str, Any] | None = None,
    *,
    args: tuple[str, ...] = ("-v",),
    command: list[str] | None = None,
    env: Mapping[str, str] | None = None,
    setup: Callable[[RemoraClient], None] | None = None,
    prepare: Callable[[types.InitializeParams], None] | None = None,
) -> AsyncIterator[RemoraClient]:
    """A session of ``editor`` on ``root``, initialized with ``settings`` as
    ``initializationOptions`` and indexed; shut down cleanly after.

    ``setup(client)`` runs before ``initialize`` (to register handlers for
    requests the server sends early); ``prepare(params)`` may change the
    initialize params (other capabilities).
    """
    async with launch(args=args, command=command, env=env) as client:
        client.editor = editor
        client.root = root
        if setup is not None:
            setup(client)
        params = initialize_params(editor, root, initialization_options=settings)
        if prepare is not None:
            prepare(params)
        result = await client.initialize_session(params)
        client.position_encoding = result.capabilities.position_encoding
        await wait_indexed(client)
        yield client
        await client.shutdown_session()
