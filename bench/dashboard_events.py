"""The dashboard under a flood of events, and whether the page keeps up (issue 29).

Run with the project's interpreter (``.venv/bin/python bench/dashboard_events.py``);
it needs Debian's Chromium (``scripts/install_dashboard_e2e.sh``).

Setup (not timed): the generated 10,400-node project of
``tests/dashboard/test_scale.py`` (400 modules, ~9,200 calls) in a temporary
folder; a scripted OpenAI-compatible model on 127.0.0.1 answering every
request at once; the person's settings in a temporary folder (no cooldown,
``agents.max_concurrency`` ``--concurrency``); ``remora dashboard`` started as
a person starts it (no editor: it opens the project and serves its control
socket) and headless Chromium on its URL: WebGL in SwiftShader and software
compositing, which is what Chromium does by itself on a machine without a
usable GPU (``--gpu-compositing``: composite with SwiftShader too, as the
browser tests do — every frame then costs the GL compositor, far more on a
busy 2-core machine).

Measured:

- **First paint**: the page's own figure (``window.remoraGraphPaint.ms``: its
  script fetching every page of ``remora.nodes.graph`` and sigma drawing
  them) and the time from navigation to that paint.
- **The flood**: for ``--seconds``, ``--rate`` chats a second go to distinct
  function nodes through the control socket (as ``remora ask`` sends them,
  without waiting); each is a real run of the engine against the scripted
  model, which makes its events (``human_chat``, ``agent_started``, model
  request and response, ``agent_completed``, …) — real events through the
  real server, nothing injected. The page is on its Events tab; a
  ``MutationObserver`` notes when each event's row (``data-seq``) is first
  drawn. **Lag** = drawn (``Date.now()`` in the page) − the event's
  ``timestamp`` (stamped by the engine as it is stored; same clock). The
  **peer**, same run: a plain consumer of the control socket's event stream
  in this process (what ``remora logs -f`` does), noting when each event
  arrives — the floor any consumer of the engine pays. The page's extra cost
  is the difference; when the browser's network layer received each event
  (CDP ``Network.eventSourceMessageReceived``, noted here as it is reported)
  splits it into transport (the dashboard's server-sent events) and drawing.
- **Memory**: the page's JavaScript heap (CDP ``Performance.getMetrics``
  ``JSHeapUsedSize``) and the proportional set size of the tab's renderer
  process and of all of Chromium's processes (``/proc/*/smaps_rollup``), after
  the paint and after the flood.

Targets (exit status 1 if one fails, or if an event stored never reached the
page): first paint ≤ 2 s; the engine made ≥ 100 events/s; page lag p95 < 1 s;
the tab < 500 MB. Other load on the machine shows in every figure: the
script prints ``uptime``'s load; compare the page with the peer.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from index_stdlib import proc_fields  # noqa: E402
from remora_cli.control.backend import (  # noqa: E402
    ServerBackend,
    ServerGone,
    follow_server,
)
from remora_cli.dashboard.link import Link  # noqa: E402

from remora_lsp.testing.actions import model_settings  # noqa: E402
from remora_lsp.testing.model_server import ModelServer, Reply  # noqa: E402
from tests.dashboard.support import browser, dashboard, painted  # noqa: E402
from tests.dashboard.test_scale import NODES, generate  # noqa: E402

PAINT_S = 2.0
RATE = 100
LAG_P95_S = 1.0
TAB_MB = 500

WATCH = """() => {
  // When each event's row is first drawn on the page (the Events tab).
  window.benchDrawn = new Map();
  const list = document.getElementById("event-list");
  const note = () => {
    const now = Date.now();
    for (const li of list.children) {
      const seq = Number(li.dataset.seq);
      if (!window.benchDrawn.has(seq)) window.benchDrawn.set(seq, now);
    }
  };
  new MutationObserver(note).observe(list, { childList: true });
  note();
  // How long the page's frames take (a busy page draws less often).
  window.benchFrames = [];
  let previous = performance.now();
  const tick = (now) => {
    window.benchFrames.push(now - previous);
    previous = now;
    if (!window.benchStop) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}"""


def load() -> str:
    """The machine's load averages (1, 5, 15 min)."""
    return Path("/proc/loadavg").read_text().split(" ", 3)[:3].__repr__()


def pss_mb(pid: int) -> float:
    """The proportional set size of a process (MB), 0 when it is gone."""
    return proc_fields(pid, "smaps_rollup", "Pss")["Pss"] / 1024


def chromium_processes() -> list[tuple[int, str]]:
    """Our Chromium's processes: (pid, its --type or "browser")."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])

    def ours(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 1)
            if pid == os.getpid():
                return True
        return False

    found = []
    for pid in parents:
        if not ours(pid):
            continue
        try:
            # Chromium rewrites its children's titles: one string, spaces.
            argv = (
                Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").split()
            )
        except OSError:
            continue
        if not argv or b"chrom" not in argv[0]:
            continue
        kind = next(
            (a.decode().split("=", 1)[1] for a in argv if a.startswith(b"--type=")),
            "browser",
        )
        found.append((pid, kind))
    return found


async def memory(page: Any) -> dict[str, float]:
    """The page's heap, its renderer's and all of Chromium's memory (MB)."""
    cdp = await page.context.new_cdp_session(page)
    await cdp.send("Performance.enable")
    metrics = {
        m["name"]: m["value"]
        for m in (await cdp.send("Performance.getMetrics"))["metrics"]
    }
    processes = chromium_processes()
    renderers = [pss_mb(pid) for pid, kind in processes if kind == "renderer"]
    return {
        "heap": metrics["JSHeapUsedSize"] / 2**20,
        "renderer": max(renderers, default=0.0),
        "chromium": sum(pss_mb(pid) for pid, _ in processes),
    }


def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def flood(link: Link, nodes: list[str], rate: float, seconds: float) -> int:
    """Send ``rate`` chats a second for ``seconds``, each to its own node."""
    started = time.monotonic()
    tasks: list[asyncio.Task[Any]] = []
    sent = 0
    while (elapsed := time.monotonic() - started) < seconds and sent < len(nodes):
        due = int(elapsed * rate) + 1
        while sent < min(due, len(nodes)):
            tasks.append(
                asyncio.ensure_future(
                    link.call(
                        "remora.agent.chat",
                        {"node_id": nodes[sent], "message": "Say ok."},
                    )
                )
            )
            sent += 1
        await asyncio.sleep(0.01)
    refused: dict[str, int] = {}
    for outcome in await asyncio.gather(*tasks, return_exceptions=True):
        if isinstance(outcome, Exception):  # said, counted, not the end of it
            refused[str(outcome)[:120]] = refused.get(str(outcome)[:120], 0) + 1
    for message, count in refused.items():
        print(f"{count} chats refused: {message}")
    return sent - sum(refused.values())


async def peer(root: Path, since: int, arrived: dict[int, float]) -> None:
    """A plain consumer of the event stream: when each event arrives."""
    try:
        async for event in follow_server(root, since):
            arrived[int(event["seq"])] = time.time()
    except ServerGone:
        pass


async def main(args: argparse.Namespace) -> int:
    """Set up the project, the model and the settings; measure."""
    print(f"load before: {load()}")
    with tempfile.TemporaryDirectory(prefix="remora-dash-") as scratch:
        root = Path(scratch) / "big"
        generate(root)
        home = Path(scratch) / "person"
        (home / "config").mkdir(parents=True)
        model = ModelServer(responder=lambda request: Reply(text="ok."))
        with model:
            wanted = model_settings(model, preload=False)
            wanted["agents"] = {"max_concurrency": args.concurrency}
            (home / "config" / "config.yaml").write_text(yaml.safe_dump(wanted))
            os.environ["REMORA_CONFIG_HOME"] = str(home / "config")
            os.environ["REMORA_STATE_HOME"] = str(home / "state")
            return await measure(root, args)


async def measure(root: Path, args: argparse.Namespace) -> int:
    """The dashboard on ``root``, Chromium on it: figures; 1 if a target fails."""
    failed: list[str] = []
    switches = () if args.gpu_compositing else ("--disable-gpu-compositing",)
    async with dashboard(root) as url, browser(*switches) as page:
        try:
            return await flooded(page, url, root, args, failed)
        except Exception:
            # Said now: a dashboard slow to stop would hide it.
            traceback.print_exc()
            raise


async def flooded(
    page: Any, url: str, root: Path, args: argparse.Namespace, failed: list[str]
) -> int:
    """Paint, flood, measure (the body of :func:`measure`)."""
    started = time.monotonic()
    await page.goto(url)
    paint = await painted(page, timeout_s=180)
    navigation_s = time.monotonic() - started
    print(
        f"first paint of {paint['nodes']} nodes, {paint['calls']} calls: "
        f"{paint['ms'] / 1000:.2f} s (page script), "
        f"{navigation_s:.2f} s from navigation"
    )
    if paint["nodes"] != NODES:
        failed.append(f"painted {paint['nodes']} nodes, not {NODES}")
    if paint["ms"] / 1000 > PAINT_S:
        failed.append(f"first paint {paint['ms'] / 1000:.2f} s > {PAINT_S} s")
    painted_memory = await memory(page)

    first_connection = await _connected(root)
    link = Link(first_connection)
    nodes = await page.evaluate(
        "() => window.remoraGraph.filterNodes((id, a) =>"
        " a.kind === 'function' || a.kind === 'method')"
    )
    first = (await link.call("remora.events.last_seq", {}))["seq"]
    await page.click("nav button[data-tab=events]")
    await page.evaluate(WATCH)
    arrived: dict[int, float] = {}
    # When the browser's network layer got each event (CDP, observed).
    received: dict[int, float] = {}
    network = await page.context.new_cdp_session(page)
    await network.send("Network.enable")
    network.on(
        "Network.eventSourceMessageReceived",
        lambda m: received.setdefault(int(m["eventId"] or 0), time.time()),
    )
    listening = asyncio.ensure_future(peer(root, first, arrived))
    sent_at = time.time()
    sent = await flood(link, nodes, args.rate / args.events_per_run, args.seconds)
    # Until every run is over and the page has every event.
    while True:
        runs = await link.call("remora.runs.list", {"limit": 50})
        if not any(r["status"] in ("queued", "running") for r in runs):
            break
        await asyncio.sleep(0.5)
    last = (await link.call("remora.events.last_seq", {}))["seq"]
    try:
        await page.wait_for_function(
            "seq => (window.remoraLastSeq || 0) >= seq", arg=last, timeout=60_000
        )
    except Exception:
        failed.append("the page never got the last event")
    await asyncio.sleep(0.5)  # its last frame drawn
    listening.cancel()
    frames = await page.evaluate("() => (window.benchStop = true, window.benchFrames)")
    drawn = dict(await page.evaluate("() => [...window.benchDrawn.entries()]"))
    stored = await link.call(
        "remora.events.list", {"since_seq": first, "limit": 100_000}
    )
    flood_memory = await memory(page)
    await link.close()
    await first_connection.close()
    problems = list(page.problems)  # type: ignore[attr-defined]

    stamped = {int(e["seq"]): float(e["timestamp"]) for e in stored}
    span = max(stamped.values()) - sent_at if stamped else 0.0
    made = len(stamped)
    rate = made / span if span else 0.0
    print(
        f"flood: {sent} chats in {args.seconds:.0f} s made {made} events in "
        f"{span:.1f} s: {rate:.0f} events/s (a run makes ~{made / max(sent, 1):.1f})"
    )
    if rate < RATE:
        failed.append(f"the engine made {rate:.0f} events/s < {RATE}")
    drawn = {int(seq): at / 1000 for seq, at in drawn.items()}
    missing = sorted(set(stamped) - set(drawn))
    # An event whose row was never drawn (more arrived between two frames
    # than the list shows) was passed when a later one was drawn.
    shown: dict[int, float] = {}
    earliest = float("inf")
    for seq in sorted(set(stamped) | set(drawn), reverse=True):
        earliest = min(earliest, drawn.get(seq, earliest))
        if seq in stamped and earliest < float("inf"):
            shown[seq] = earliest
    lags = [shown[s] - t for s, t in stamped.items() if s in shown]
    floor = [arrived[s] - t for s, t in stamped.items() if s in arrived]
    browser_got = [received[s] - t for s, t in stamped.items() if s in received]
    for name, values in (
        ("page (drawn)", lags),
        ("browser (received, CDP)", browser_got),
        ("peer (socket)", floor),
    ):
        if values:
            print(
                f"lag {name}: p50 {statistics.median(values) * 1000:.0f} ms, "
                f"p95 {pct(values, 0.95) * 1000:.0f} ms, "
                f"max {max(values) * 1000:.0f} ms over {len(values)} events"
            )
    if frames:
        print(
            f"frames during the flood: p50 {statistics.median(frames):.0f} ms, "
            f"p95 {pct(frames, 0.95):.0f} ms, max {max(frames):.0f} ms ({len(frames)})"
        )
    if lags and floor:
        ratio = pct(lags, 0.95) / max(pct(floor, 0.95), 1e-3)
        print(f"page p95 / peer p95: {ratio:.1f}x")
    if missing:
        print(f"{len(missing)} rows never drawn (more came in a frame than shown)")
    if len(shown) < len(stamped):
        failed.append(f"the page never got past {len(stamped) - len(shown)} events")
    if not lags or pct(lags, 0.95) >= LAG_P95_S:
        failed.append(f"page lag p95 >= {LAG_P95_S} s")
    for label, figures in (
        ("after paint", painted_memory),
        ("after flood", flood_memory),
    ):
        print(
            f"memory {label}: JS heap {figures['heap']:.0f} MB, tab renderer "
            f"{figures['renderer']:.0f} MB, all Chromium "
            f"{figures['chromium']:.0f} MB (PSS)"
        )
    if flood_memory["renderer"] >= TAB_MB or flood_memory["heap"] >= TAB_MB:
        failed.append(f"the tab reached {flood_memory['renderer']:.0f} MB")
    if problems:
        failed.append(f"the page's console: {problems[:3]}")
    print(f"load after: {load()}")
    for problem in failed:
        print(f"FAILED: {problem}")
    print("all targets met" if not failed else "")
    return 1 if failed else 0


async def _connected(root: Path) -> ServerBackend:
    backend = await ServerBackend.connect(root)
    if backend is None:
        raise SystemExit("the dashboard serves no control socket")
    return backend


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--rate", type=float, default=150, help="events/s wanted")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--gpu-compositing",
        action="store_true",
        help="composite the page with SwiftShader too, as the tests do "
        "(default: software compositing, Chromium's own choice without a GPU)",
    )
    parser.add_argument(
        "--events-per-run", type=float, default=5, help="to pace the chats"
    )
    sys.exit(asyncio.run(main(parser.parse_args())))
