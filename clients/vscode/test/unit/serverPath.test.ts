/** Server path resolution: setting, then workspace .venv, then PATH, else a reason to show. */
import assert from "node:assert/strict";
import * as path from "node:path";
import { test } from "node:test";
import { resolveServer } from "../../src/serverPath";

const probeOf = (files: string[]) => ({ isExecutable: (f: string) => files.includes(f) });
const venv = path.join("/ws", ".venv", "bin", "remora-lsp");
const onPath = path.join("/usr/local/bin", "remora-lsp");

test("the setting wins when it names an executable", () => {
  const r = resolveServer("/opt/remora-lsp", ["/ws"], "/usr/local/bin", probeOf(["/opt/remora-lsp", venv, onPath]));
  assert.deepEqual(r, { found: true, command: "/opt/remora-lsp", source: "setting" });
});

test("a bad setting is reported, not silently replaced by a fallback", () => {
  const r = resolveServer("/nope/remora-lsp", ["/ws"], "/usr/local/bin", probeOf([venv, onPath]));
  assert.equal(r.found, false);
  assert.match(!r.found ? r.reason : "", /remora\.server\.path is "\/nope\/remora-lsp"/);
});

test("without a setting the workspace .venv comes before PATH", () => {
  const r = resolveServer("", ["/other", "/ws"], "/usr/local/bin", probeOf([venv, onPath]));
  assert.deepEqual(r, { found: true, command: venv, source: "workspace" });
});

test("PATH is the last resort", () => {
  const r = resolveServer("  ", ["/ws"], ["/empty", "/usr/local/bin"].join(path.delimiter), probeOf([onPath]));
  assert.deepEqual(r, { found: true, command: onPath, source: "path" });
});

test("nothing found says what to install and which setting to set", () => {
  const r = resolveServer("", ["/ws"], "/usr/bin", probeOf([]));
  assert.equal(r.found, false);
  const reason = !r.found ? r.reason : "";
  assert.match(reason, /pip install remora-lsp/);
  assert.match(reason, /remora\.server\.path/);
});

test("an untrusted workspace's own .venv server is never run (it is the repository's code)", () => {
  const trusted = resolveServer("", ["/ws"], "/usr/local/bin", probeOf([venv, onPath]), true);
  assert.deepEqual(trusted, { found: true, command: venv, source: "workspace" });
  const restricted = resolveServer("", ["/ws"], "/usr/local/bin", probeOf([venv, onPath]), false);
  assert.deepEqual(restricted, { found: true, command: onPath, source: "path" });
  assert.equal(resolveServer("", ["/ws"], "", probeOf([venv]), false).found, false);
});
