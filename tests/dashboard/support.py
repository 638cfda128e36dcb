"""Running ``remora dashboard`` as a person does, and a real browser on it.

:func:`dashboard` starts the verb as a subprocess and yields the URL it
prints; leaving the block presses Ctrl-C and checks it ended cleanly.
:func:`browser` is Debian's Chromium driven by Playwright's bundled driver
(nothing downloads a browser: ``scripts/install_dashboard_e2e.sh`` installs
the Debian package when it is missing).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
REMORA = Path(sys.executable).with_name("remora")
CHROMIUM = Path("/usr/bin/chromium")
START_S = 120.0
"""A generous bound for the project to open (indexing a large one, a busy machine)."""


@contextlib.asynccontextmanager
async def dashboard(root: Path, *args: str) -> AsyncIterator[str]:
    """``remora --project root dashboard``: the URL it prints."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        # Ctrl-C at its default (a test run in the background inherits it ignored).
        "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
        "os.execv(sys.argv[1], sys.argv[1:])",
        str(REMORA),
        "-v",
        "--project",
        str(root),
        "dashboard",
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    url = ""
    try:
        while not url.startswith("http://"):
            line = await asyncio.wait_for(process.stdout.readline(), START_S)
            if not line:
                err = await process.stderr.read()
                raise AssertionError(f"remora dashboard ended: {err.decode()}")
            url = line.decode().strip()
        yield url
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGINT)
        try:
            code = await asyncio.wait_for(process.wait(), 30)
        except TimeoutError:
            process.kill()  # never left behind
            await process.wait()
            raise AssertionError("remora dashboard did not end on Ctrl-C") from None
        err = (await process.stderr.read()).decode()
        assert code == 0, f"remora dashboard exited {code}: {err}"
        assert "Traceback" not in err and "ERROR" not in err, err


def need_chromium() -> None:
    """Install Debian's Chromium if needed; skip (saying why) if impossible."""
    if CHROMIUM.exists():
        return
    if shutil.which("apt-get") is None:
        pytest.skip("the dashboard's browser tests need Debian's chromium package")
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "install_dashboard_e2e.sh")],
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0 or not CHROMIUM.exists():
        pytest.skip(f"could not install chromium: {(done.stdout + done.stderr)[-800:]}")


@contextlib.asynccontextmanager
async def browser(*extra: str) -> AsyncIterator[Any]:
    """A headless Chromium page (1400×850), with its console errors kept;
    ``extra``: more command-line switches for Chromium.
    """
    need_chromium()
    from playwright.async_api import async_playwright

    async with async_playwright() as driver:
        chromium = await driver.chromium.launch(
            executable_path=str(CHROMIUM),
            # WebGL (sigma) in software: no GPU in a test machine.
            args=[
                "--no-sandbox",
                "--enable-unsafe-swiftshader",
                "--use-angle=swiftshader",
                *extra,
            ],
        )
        try:
            page = await chromium.new_page(viewport={"width": 1400, "height": 850})
            page.problems = []  # type: ignore[attr-defined]
            page.on("pageerror", lambda error: page.problems.append(str(error)))
            page.on(
                "console",
                lambda m: m.type == "error" and page.problems.append(m.text),
            )
            yield page
        finally:
            await chromium.close()


async def painted(page: Any, timeout_s: float = 60) -> dict:
    """Wait for the graph's first paint; what it painted and how long it took."""
    await page.wait_for_selector("body[data-graph=painted]", timeout=timeout_s * 1000)
    return await page.evaluate("window.remoraGraphPaint")
