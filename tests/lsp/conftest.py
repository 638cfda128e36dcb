"""pytest-lsp fixtures: the real ``remora-lsp`` over stdio, as Neovim and VS Code.

Every test using ``client`` runs twice, once with the capabilities Neovim 0.11
announces (UTF-8 positions, no dynamic file watching, no file operations) and
once with VS Code's (UTF-16, dynamic registration, ``didRenameFiles``).
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.lsp.helpers import wait_indexed

SERVER = Path(sys.executable).with_name("remora-lsp")
EDITORS = ["neovim", "visual-studio-code"]


def initialize_params(editor: str, root: Path, **extra) -> types.InitializeParams:
    """What ``editor`` sends to open ``root`` as its only workspace folder."""
    return types.InitializeParams(
        capabilities=client_capabilities(editor),
        root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        **extra,
    )


def plain(value):
    """JSON-like data from what pygls gives for custom messages (named tuples)."""
    if hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


def record_server_messages(client: LanguageClient) -> None:
    """Keep what an editor would react to: registrations, events, refreshes."""
    client.registrations = []  # type: ignore[attr-defined]
    client.events = []  # type: ignore[attr-defined]
    client.lens_refreshes = 0  # type: ignore[attr-defined]

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    @client.feature("remora/event")
    def remora_event(params) -> None:
        client.events.append(plain(params))  # type: ignore[attr-defined]

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def code_lens_refresh(params) -> None:
        client.lens_refreshes += 1  # type: ignore[attr-defined]


@contextlib.asynccontextmanager
async def session(
    editor: str,
    root: Path,
    settings: dict | None = None,
    *,
    utf32: bool = False,
    adjust=None,
    args: tuple[str, ...] = ("-v",),
    setup=None,
    command: list[str] | None = None,
):
    """A hand-started session on ``root`` (for restarts, failures, encodings).

    ``args``: the server's command-line options; ``setup(client)`` runs before
    ``initialize`` (to register handlers for requests the server sends early);
    ``command`` starts the server another way (e.g. in a mount namespace).
    """
    client = await ClientServerConfig(
        server_command=command or [str(SERVER), *args]
    ).start()
    client.editor = editor  # type: ignore[attr-defined]
    client.root = root  # type: ignore[attr-defined]
    record_server_messages(client)
    if setup is not None:
        setup(client)
    params = initialize_params(editor, root, initialization_options=settings)
    if utf32:
        params.capabilities.general = types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind.Utf32]
        )
    if adjust is not None:  # a client with other capabilities
        adjust(params.capabilities)
    try:
        result = await client.initialize_session(params)
        client.position_encoding = result.capabilities.position_encoding  # type: ignore[attr-defined]
        await wait_indexed(client)
        yield client
        await client.shutdown_session()
    finally:
        server = client._server
        if server is not None and server.returncode is None:
            server.kill()  # the test failed half-way: do not wait for an exit
        await client.stop()


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[str(SERVER), "-v"]),
    params=EDITORS,
)
async def client(
    lsp_client: LanguageClient, request: pytest.FixtureRequest, workspace: Path
):
    """A session on a copy of the test's workspace, indexed and ready."""
    lsp_client.editor = request.param  # type: ignore[attr-defined]
    lsp_client.root = workspace  # type: ignore[attr-defined]
    record_server_messages(lsp_client)

    marker = request.node.get_closest_marker("editor_settings")
    settings = marker.args[0] if marker else None
    await lsp_client.initialize_session(
        initialize_params(request.param, workspace, initialization_options=settings)
    )
    await wait_indexed(lsp_client)
    yield
    await lsp_client.shutdown_session()
