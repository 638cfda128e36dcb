/** The workspace/configuration answer holds engine settings only. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { engineSettings, readSettings } from "../../src/settings";

test("the answer for section remora is initializationOptions, never the client's own keys", () => {
  const all: Record<string, unknown> = {
    "server.path": "/x/remora-lsp",
    "server.args": ["-v", 3],
    initializationOptions: { model: { name: "m" }, agents: { max_concurrent: 2 } },
  };
  const settings = readSettings((key) => all[key]);
  assert.deepEqual(settings.initializationOptions, { model: { name: "m" }, agents: { max_concurrent: 2 } });
  assert.equal("server" in settings.initializationOptions, false);
  assert.deepEqual(settings.serverArgs, ["-v"]);
  assert.equal(settings.serverPath, "/x/remora-lsp");
});

test("a non-object initializationOptions becomes empty settings", () => {
  assert.deepEqual(engineSettings("model: x"), {});
  assert.deepEqual(engineSettings(["a"]), {});
  assert.deepEqual(engineSettings(undefined), {});
});
