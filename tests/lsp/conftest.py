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
from pytest_lsp import ClientServerConfig, LanguageClient

from remora_lsp.testing.client import EDITORS as KIT_EDITORS
from remora_lsp.testing.client import initialize_params, plain, start_session
from tests.lsp.helpers import wait_indexed

SERVER = Path(sys.executable).with_name("remora-lsp")
EDITORS = list(KIT_EDITORS)


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
    """A hand-started session on ``root`` (for restarts, failures, encodings):
    the kit's :func:`remora_lsp.testing.start_session`.

    ``args``: the server's command-line options; ``setup(client)`` runs before
    ``initialize`` (to register handlers for requests the server sends early);
    ``command`` starts the server another way (e.g. in a mount namespace).
    """

    def prepare(params: types.InitializeParams) -> None:
        if utf32:
            params.capabilities.general = types.GeneralClientCapabilities(
                position_encodings=[types.PositionEncodingKind.Utf32]
            )
        if adjust is not None:  # a client with other capabilities
            adjust(params.capabilities)

    async with start_session(
        editor,
        root,
        settings,
        args=args,
        setup=setup,
        command=command,
        prepare=prepare,
    ) as client:
        yield client


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
