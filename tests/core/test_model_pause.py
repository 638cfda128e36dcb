"""The embedded model paused while the editor is answered (``model_pause.py``).

A ``sleep`` process stands in for the model (what is under test is the
pause, not the model; ``tests/lsp/test_model_pause.py`` runs the real one):
its state is read from ``/proc/PID/stat``, ``T`` while stopped. The last
tests kill a process while its child is stopped, as the language server
killed mid-request would be: the child must not stay stopped.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from remora_core.agents.model_pause import ModelPause

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads /proc; POSIX signals"
)


def state(pid: int) -> str:
    """The process's state letter (``T``: stopped; ``Z``, ``X`` or ``gone``)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "gone"


async def becomes(pid: int, wanted: set[str], seconds: float = 30) -> str:
    """Wait (on the loop) until the state is one of ``wanted``; the state."""
    deadline = time.monotonic() + seconds
    while (now := state(pid)) not in wanted and time.monotonic() < deadline:
        await asyncio.sleep(0.005)
    return now


RUNNING = {"S", "R", "D"}


@pytest.fixture
def model():
    child = subprocess.Popen(["sleep", "3600"])
    yield child
    child.send_signal(signal.SIGCONT)
    child.kill()
    child.wait()


async def test_a_request_stops_the_model_until_it_is_answered(model):
    pause = ModelPause(lambda: [model])
    pause.arrived(1)
    assert await becomes(model.pid, {"T"}) == "T"
    pause.handled()  # handed to its handler, not answered yet
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert state(model.pid) == "T"
    pause.answered(1)
    assert await becomes(model.pid, RUNNING) in RUNNING
    assert not pause.paused
    assert pause.pauses == 1


async def test_a_notification_stops_the_model_until_handled(model):
    pause = ModelPause(lambda: [model])
    pause.arrived()
    assert await becomes(model.pid, {"T"}) == "T"
    pause.arrived(7)  # a request right behind it: one pause for both
    pause.handled()
    pause.handled()
    pause.answered(7)
    assert await becomes(model.pid, RUNNING) in RUNNING
    assert pause.pauses == 1


async def test_a_long_request_does_not_keep_the_model_stopped(model):
    pause = ModelPause(lambda: [model], max_pause_s=0.05, rest_s=3600)
    pause.arrived(1)
    pause.handled()
    assert await becomes(model.pid, {"T"}) == "T"
    # Never answered: the bound resumes the model all the same.
    assert await becomes(model.pid, RUNNING) in RUNNING
    assert not pause.paused
    # Then the model runs for its rest: the next message does not stop it.
    pause.arrived(2)
    assert not pause.paused
    pause.handled()
    pause.answered(2)
    pause.answered(1)  # the long one's answer, late: nothing to resume
    assert state(model.pid) in RUNNING


async def test_a_request_from_before_the_pause_does_not_hold_it(model):
    generating: list[subprocess.Popen[bytes]] = []
    pause = ModelPause(lambda: generating)
    pause.arrived(1)  # a long command, while the model was idle
    pause.handled()
    generating.append(model)  # the model starts answering an agent
    pause.arrived()  # a keystroke
    assert await becomes(model.pid, {"T"}) == "T"
    pause.handled()
    assert await becomes(model.pid, RUNNING) in RUNNING


async def test_no_pause_beyond_the_budget(model):
    pause = ModelPause(lambda: [model], burst_s=0.0)
    pause.arrived(1)
    assert not pause.paused
    pause.handled()
    pause.answered(1)
    assert pause.pauses == 0


async def test_closing_resumes_and_ends_pausing(model):
    pause = ModelPause(lambda: [model])
    pause.arrived(1)
    assert await becomes(model.pid, {"T"}) == "T"
    pause.close()
    assert await becomes(model.pid, RUNNING) in RUNNING
    pause.arrived(2)
    assert not pause.paused


async def test_nothing_to_pause_and_a_process_gone_are_fine(model):
    model.kill()
    model.wait()
    pause = ModelPause(lambda: [model])
    pause.arrived(1)  # reaped: send_signal does nothing
    assert not pause.paused
    failing = ModelPause(lambda: 1 / 0)  # type: ignore[arg-type]
    failing.arrived(1)  # logged, the editor's message goes on
    assert not failing.paused


# ---- the server killed while the model is stopped ---------------------------------

PARENT = """
import os, signal, sys
from remora_core.agents import local

# The child as local.py starts the model: its own process group, the parent
# watch of local_server.py; SIGHUP ignored in the second case (a server
# started under nohup), so that only the watch can end it.
CHILD = '''
import signal, sys
if sys.argv[2] == "ignore":
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
from remora_core.agents.local_server import _watch_parent
_watch_parent(int(sys.argv[1]))
'''
child = local.spawn_child(
    [sys.executable, "-c", CHILD, str(os.getpid()), sys.argv[1]],
    stdout=sys.stderr.fileno(),
)
os.kill(child.pid, signal.SIGSTOP)
sys.stdout.write(f"{child.pid}\\n")
sys.stdout.flush()
signal.pause()
"""


@pytest.mark.parametrize("hangup", ["default", "ignore"])
async def test_a_model_stopped_when_the_server_is_killed_does_not_stay_stopped(
    hangup,
):
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, hangup],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    assert parent.stdout is not None
    child = 0
    try:
        child = int(parent.stdout.readline())
        assert os.getpgid(child) == child != os.getpgid(parent.pid)
        assert await becomes(child, {"T"}) == "T"
        parent.kill()  # SIGKILL: no finally, no atexit in the server
        parent.wait()
        # The kernel continues the orphaned group (SIGHUP ends it, or its
        # parent watch does when SIGHUP is ignored).
        assert await becomes(child, {"gone", "Z", "X"}) in {"gone", "Z", "X"}
    finally:
        parent.kill()
        parent.wait()
        parent.stdout.close()
        if child and state(child) not in {"gone", "Z", "X"}:
            os.kill(child, signal.SIGKILL)


# ---- which models a message may pause -----------------------------------------------


@pytest.mark.parametrize(
    ("setting", "requests", "pausable"),
    [
        ("generating", 0, False),
        ("generating", 1, True),
        ("always", 0, True),
        ("off", 1, False),
    ],
)
def test_which_models_the_editor_pauses(model, tmp_path, setting, requests, pausable):
    from remora_core.agents import local

    embedded = local.LocalModel(cache_dir=tmp_path, pause_for_editor=setting)
    assert model not in local.editor_pausable()  # not started: never paused
    embedded._process, embedded._base_url = model, "http://127.0.0.1:1/v1"
    embedded.requests = requests
    try:
        assert (model in local.editor_pausable()) is pausable
    finally:
        embedded._process = None


async def test_a_request_to_the_embedded_model_counts_as_generating(tmp_path):
    from remora_core.agents.local import LocalModel
    from remora_core.agents.providers import Endpoint, ModelResolver
    from remora_core.config import ModelSettings

    resolver = ModelResolver(ModelSettings(provider="local"), cache_dir=tmp_path)
    resolver.local = LocalModel(cache_dir=tmp_path)
    endpoint = Endpoint(
        base_url="http://127.0.0.1:9/v1",
        model_name="m",
        protocol="fenced",
        local=True,
    )
    route = resolver.route(endpoint)
    lease, _model = await route.acquire()
    assert resolver.local.requests == 1
    route.release(lease, ConnectionError("refused"))
    assert resolver.local.requests == 0
    await resolver.close()
