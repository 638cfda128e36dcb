"""A person types while the real embedded model generates (``model_pause.py``).

The real server and model: the editor's requests stop the model for the
moment they are answered — a sampler reading ``/proc/PID/stat`` sees it
stopped (``T``) while the person types — and the model goes on: the run
ends with the model's answer, and once the typing stops the model is not
left stopped. With ``model.pause_for_editor: off`` it is never stopped.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from remora_core.agents.local import local_extra_installed

from remora_lsp.pygls_private import server_process
from tests.core.test_model_pause import RUNNING, becomes, state
from tests.lsp.conftest import EDITORS, session
from tests.lsp.helpers import Buffer, eventually, raw_request
from tests.lsp.test_agent_runs import LOCAL_RUN_S, chat, node_of, of_type
from tests.lsp.test_preload import LOAD_S, model_children

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not local_extra_installed(),
        reason="the 'local' extra (xllamacpp + the model wheels) is not installed",
    ),
    pytest.mark.skipif(
        not Path("/proc/self/stat").exists(), reason="reads processes from /proc"
    ),
]

ASKS = 3
"""Asks at most, typing through each until the model was seen stopped."""
KEYSTROKES = 200
"""Requests per ask at most: back-to-back typing must not outlast the
model's answer on a busy machine, where ``SCHED_IDLE`` leaves the model
little CPU beside the typing itself (with the pause ``off`` nothing else
would end the loop)."""


class Sampler:
    """Reads the model's state in a thread until stopped; whether it saw ``T``."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.stopped_seen = False
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.done.is_set() and not self.stopped_seen:
            self.stopped_seen = state(self.pid) == "T"
            time.sleep(0.0005)  # a pause lasts ~the answer: a few ms

    def stop(self) -> None:
        self.done.set()
        self.thread.join()


def generating(client, run_id: str) -> bool:
    requests = of_type(client, "model_request", run_id=run_id)
    answers = of_type(client, "model_response", run_id=run_id)
    return len(requests) > len(answers)


def ended(client, run_id: str) -> bool:
    return any(
        of_type(client, kind, run_id=run_id)
        for kind in ("agent_completed", "agent_failed", "agent_cancelled")
    )


@pytest.mark.parametrize("pause", ["generating", "off"])
async def test_typing_while_the_model_generates_pauses_it_and_it_goes_on(
    workspace, pause
):
    settings = {"model": {"provider": "local", "preload": True}}
    settings["model"]["pause_for_editor"] = pause
    async with session(EDITORS[0], workspace, settings) as client:
        buffer = Buffer(client, "pkg/service.py")
        node = await node_of(client, buffer, "def helper")
        server = server_process(client).pid
        children = await eventually(lambda: model_children(server), timeout=LOAD_S)
        sampler = Sampler(children[0])
        answered = 0
        try:
            for _ask in range(ASKS):
                run_id = await chat(client, node, "Say what this function does.")
                await eventually(
                    lambda run_id=run_id: (
                        generating(client, run_id) or ended(client, run_id)
                    ),
                    timeout=LOCAL_RUN_S,
                )
                typed = 0
                while (
                    generating(client, run_id)
                    and not sampler.stopped_seen
                    and typed < KEYSTROKES
                ):
                    typed += 1
                    await raw_request(
                        client,
                        "textDocument/documentSymbol",
                        {"textDocument": {"uri": buffer.uri}},
                    )
                    answered += 1
                await eventually(
                    lambda run_id=run_id: ended(client, run_id), timeout=LOCAL_RUN_S
                )
                assert of_type(client, "model_response", run_id=run_id), (
                    "the model's answer never came"
                )
                if sampler.stopped_seen or (pause == "off" and answered >= KEYSTROKES):
                    break
        finally:
            sampler.stop()
        assert answered, "the model never generated while the person typed"
        assert sampler.stopped_seen is (pause == "generating")
        # Typing stopped: the model is not left stopped.
        assert await becomes(children[0], RUNNING) in RUNNING
