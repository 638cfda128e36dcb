"""The embedded model starts with the server, so the first ask does not wait for it.

With zero configuration and the ``local`` extra installed, agents run on the
embedded model; ``model.preload`` (default on) starts it in the background once
the project is indexed, and has it read the part of the prompt every
function's agent shares. What a person notices: the model's log says it is
serving and has read a prompt before anything was asked, no agent's model
request was made to get there, and it stops with the server. Tests elsewhere
run with ``preload: false`` in the person's settings (``tests/conftest.py``);
here the editor turns it back on.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from remora_core.agents.local import local_extra_installed

from remora_lsp.pygls_private import server_process
from tests.lsp.conftest import EDITORS, session

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not local_extra_installed(),
        reason="the 'local' extra (xllamacpp + the model wheels) is not installed",
    ),
    pytest.mark.skipif(
        not Path("/proc/self/cmdline").exists(), reason="reads processes from /proc"
    ),
]

LOAD_S = 180.0
"""How long the model may take to load on a machine busy with other tests."""


async def log_says(log, texts: tuple[str, ...], timeout: float) -> bool:
    """Whether ``log`` comes to contain one of ``texts`` within ``timeout`` s."""
    for _ in range(int(timeout * 10)):
        if log.exists():
            written = log.read_text(encoding="utf-8", errors="replace")
            if any(text in written for text in texts):
                return True
        await asyncio.sleep(0.1)
    return False


def model_children(server_pid: int) -> list[int]:
    """Embedded-model processes started by the server ``server_pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # gone meanwhile
            continue
        if b"remora_core.agents.local_server" in argv and (
            str(server_pid).encode() in argv
        ):
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("editor", EDITORS[:1])
async def test_the_embedded_model_is_ready_before_the_first_ask(editor, workspace):
    log = workspace / ".remora" / "local-model.log"
    async with session(editor, workspace, {"model": {"preload": True}}) as client:
        server_pid = server_process(client).pid
        assert await log_says(log, ("remora local_server: serving",), LOAD_S), (
            "the embedded model was not started ahead of the first ask"
        )
        assert model_children(server_pid), "no model process of this server"
        # It also read the prompt every function's agent starts with.
        assert await log_says(log, ("prompt eval time",), LOAD_S), (
            "the shared prompt was not read ahead"
        )
        assert not [e for e in client.events if e["type"] == "model_request"]
    # Stopped with the server (terminated, killed if still starting, or on its
    # own when it sees the server gone): no model process outlives it.
    for _ in range(300):
        if not model_children(server_pid):
            break
        await asyncio.sleep(0.1)
    assert not model_children(server_pid), "the model outlived the server"
