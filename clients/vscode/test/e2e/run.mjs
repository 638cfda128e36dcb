// Starts code-server 4.100.3 (VS Code 1.100's server and workbench) offline on
// 127.0.0.1, opens the workbench in Debian's Chromium through playwright-core with
// extensionTestsPath = suite.js, serves the suite's snapshot requests (screenshot +
// notifications on screen) and webview reads (the Conversation view's DOM), and exits with the workbench's exit code.
// Usage: node run.mjs <workspace> <out.json> <screenshot.png> <state dir>
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { createRequire } from "node:module";

const here = path.dirname(new URL(import.meta.url).pathname);
const source = path.resolve(here, "..", "..");
const e2e = path.join(source, ".e2e");
// The extension under test: the unpacked .vsix when given, else the source folder.
const ext = process.env.REMORA_E2E_EXTENSION || source;
const require = createRequire(path.join(e2e, "package.json"));
const { chromium } = require("playwright-core");
const [workspace, out, screenshot, state] = process.argv.slice(2);
const verbose = process.env.REMORA_E2E_VERBOSE === "1";

const port = await new Promise((resolve) => {
  const s = net.createServer();
  s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => resolve(p)); });
});
fs.mkdirSync(state, { recursive: true });
const config = path.join(state, "config.yaml");
// A step's answer for the suite (suite.js polls for the marker): written
// whole under another name, then renamed, so that the suite never reads it
// half-written ("Unexpected end of JSON input", once in a loaded run).
function markDone(name, text) {
  const marker = `${out}.${name}.done`;
  fs.writeFileSync(`${marker}.partial`, text);
  fs.renameSync(`${marker}.partial`, marker);
}
fs.writeFileSync(config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
const server = spawn(path.join(e2e, "node_modules", ".bin", "code-server"), [
  "--config", config, "--user-data-dir", path.join(state, "user"), "--extensions-dir", path.join(state, "extensions"),
  "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override",
], { detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, REMORA_E2E_OUT: out } });
let serverLog = "";
server.stdout.on("data", (d) => { serverLog += d; });
server.stderr.on("data", (d) => { serverLog += d; });
const stopServer = () => { try { process.kill(-server.pid, "SIGKILL"); } catch { /* gone */ } };
process.on("exit", stopServer);

const deadline = Date.now() + 60000;
for (;;) {
  const up = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
  if (up) break;
  if (Date.now() > deadline) { console.error(`code-server did not start:\n${serverLog}`); process.exit(3); }
  await new Promise((r) => setTimeout(r, 200));
}

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--no-first-run", "--disable-sync", "--disable-dev-shm-usage"],
});
const page = await browser.newPage({ viewport: { width: 1400, height: 850 } });
let exitCode;
const exited = new Promise((resolve) => {
  void page.exposeFunction("codeAutomationExit", (code) => { exitCode = code; resolve(code); });
});
page.on("console", async (message) => {
  const text = message.text();
  const typing = /REMORA_TYPE (\w+) (.+)/.exec(text);
  if (typing) {
    const [, name, value] = typing;
    let result = { typed: value };
    try {
      const input = page.locator(".quick-input-widget input");
      await input.waitFor({ state: "visible", timeout: 20000 });
      result.prompt = await page.locator(".quick-input-widget").innerText();
      result.value = await input.inputValue(); // what the box started with
      await input.fill(value);
      await input.press("Enter");
    } catch (error) {
      result = { error: String(error) };
    }
    markDone(name, JSON.stringify(result));
    return;
  }
  const key = /REMORA_KEY (\w+) (\w+)/.exec(text);
  if (key) {
    // Press a key in the open input box (Escape: the person dismisses it).
    let result = { pressed: key[2] };
    try {
      const input = page.locator(".quick-input-widget input");
      await input.waitFor({ state: "visible", timeout: 20000 });
      result.prompt = await page.locator(".quick-input-widget").innerText();
      await input.press(key[2]);
      await page.locator(".quick-input-widget").waitFor({ state: "hidden", timeout: 10000 });
    } catch (error) {
      result = { error: String(error) };
    }
    markDone(key[1], JSON.stringify(result));
    return;
  }
  const webview = /REMORA_WEBVIEW (\w+)/.exec(text);
  if (webview) {
    // The Conversation view's DOM, wherever the workbench nests its webview frames.
    let result = { error: "no frame holds #remora-conversation" };
    const until = Date.now() + 20000;
    while (result.error && Date.now() < until) {
      for (const frame of page.frames()) {
        const found = await frame.evaluate(() => {
          const log = document.getElementById("remora-conversation");
          if (!log) return null;
          const box = log.getBoundingClientRect();
          return { text: log.innerText, tags: [...new Set([...log.querySelectorAll("*")].map((e) => e.tagName.toLowerCase()))], visible: box.width > 0 && box.height > 0 };
        }).catch(() => null);
        if (found) { result = found; break; }
      }
      if (result.error) await new Promise((r) => setTimeout(r, 250));
    }
    markDone(webview[1], JSON.stringify(result));
    return;
  }
  const click = /REMORA_CLICK (\w+) (.+)/.exec(text);
  if (click) {
    // Click a button in the Conversation webview, as a person would.
    const [, name, selector] = click;
    let result = { error: `no frame holds ${selector}` };
    const until = Date.now() + 20000;
    while (result.error && Date.now() < until) {
      for (const frame of page.frames()) {
        const button = frame.locator(selector).last();
        if ((await button.count().catch(() => 0)) === 0) continue;
        try {
          await button.scrollIntoViewIfNeeded({ timeout: 5000 });
          await button.click({ timeout: 5000 });
          result = { clicked: selector, label: await button.innerText() };
        } catch (error) {
          result = { error: String(error) };
        }
        break;
      }
      if (result.error) await new Promise((r) => setTimeout(r, 250));
    }
    markDone(name, JSON.stringify(result));
    return;
  }
  const match = /REMORA_SNAPSHOT (\w+)/.exec(text);
  if (match) {
    const name = match[1];
    if (name === "conversation") {
      // Stage the picture as a person would: a wider side bar, the Nodes view folded.
      const bar = await page.locator(".part.sidebar").boundingBox().catch(() => null);
      if (bar) {
        const x = bar.x + bar.width + 1;
        const y = bar.y + bar.height / 2;
        await page.mouse.move(x, y);
        await page.mouse.down();
        await page.mouse.move(x + 230, y, { steps: 8 });
        await page.mouse.up();
      }
      await page.locator(".part.sidebar .pane-header").filter({ hasText: "Nodes" }).first().click().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 300));
      // The sash above the Runs view, dragged down: the conversation gets the height.
      const runs = await page.locator(".part.sidebar .pane-header").filter({ hasText: "Runs" }).first().boundingBox().catch(() => null);
      if (runs) {
        const x = runs.x + runs.width / 2;
        await page.mouse.move(x, runs.y - 1);
        await page.mouse.down();
        await page.mouse.move(x, runs.y + 260, { steps: 8 });
        await page.mouse.up();
      }
    }
    if (name === "sets") {
      // The Proposals view alone in the side bar, wide enough for a set's title.
      const bar = await page.locator(".part.sidebar").boundingBox().catch(() => null);
      if (bar && bar.width < 500) {
        const x = bar.x + bar.width + 1;
        const y = bar.y + bar.height / 2;
        await page.mouse.move(x, y);
        await page.mouse.down();
        await page.mouse.move(x + 520 - bar.width, y, { steps: 8 });
        await page.mouse.up();
      }
      for (const view of ["Nodes", "Conversation", "Runs"]) {
        await page.locator('.part.sidebar .pane-header[aria-expanded="true"]').filter({ hasText: view }).first().click({ timeout: 2000 }).catch(() => undefined);
      }
    }
    await new Promise((r) => setTimeout(r, 1500)); // let the workbench paint
    const file = name === "conversation" ? screenshot : path.join(state, `${name}.png`);
    await page.screenshot({ path: file });
    const notifications = await page.$$eval(".notification-toast", (nodes) => nodes.map((n) => (n instanceof HTMLElement ? n.innerText : n.textContent) || ""));
    markDone(name, JSON.stringify({ file, notifications }));
  } else if (verbose || /REMORA|Error|error/.test(text)) {
    console.log(`[page] ${text.slice(0, 500)}`);
  }
});
const remote = (p) => `vscode-remote://127.0.0.1:${port}${p}`;
const payload = JSON.stringify([["extensionDevelopmentPath", remote(ext)], ["extensionTestsPath", remote(path.join(here, "suite.js"))]]);
await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(payload)}`);
const timeout = new Promise((resolve) => setTimeout(() => resolve("timeout"), 360000));
const result = await Promise.race([exited, timeout]);
if (result === "timeout") console.error("the workbench did not exit within 360 s");
await browser.close().catch(() => undefined);
stopServer();
process.exit(result === "timeout" ? 4 : exitCode ?? 5);
