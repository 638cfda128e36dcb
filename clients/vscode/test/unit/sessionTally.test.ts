/** The status bar's counts: runs, pending proposals, the session's tokens. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { SessionTally, compactNumber, statusText } from "../../src/sessionTally";

test("tokens are the sum of the model responses' usage, per run too", () => {
  const tally = new SessionTally();
  assert.equal(tally.update({ type: "model_response", run_id: "run_1", usage: { input_tokens: 1000, output_tokens: 20 } }), true);
  tally.update({ type: "model_response", run_id: "run_1", usage: { input_tokens: 500, output_tokens: 5 } });
  tally.update({ type: "model_response", run_id: "run_2", usage: { input_tokens: 10 } });
  assert.equal(tally.update({ type: "agent_completed", run_id: "run_1", usage: { input_tokens: 99 } }), false);
  assert.equal(tally.update({ type: "model_response", usage: { input_tokens: -3, output_tokens: "x" } }), false);
  assert.equal(tally.tokens, 1535);
  assert.equal(tally.tokensOf("run_1"), 1525);
  assert.equal(tally.tokensOf("run_3"), undefined);
});

test("the status text shows runs in flight, pending proposals and tokens", () => {
  assert.equal(statusText(2, 3, 1535), "$(hubot) Remora $(sync~spin) 2 · 3 pending · 1.5k tokens");
  assert.equal(statusText(0, 0, 0), "$(hubot) Remora $(check) 0 · 0 pending · 0 tokens");
  assert.equal(compactNumber(25_400), "25k");
  assert.equal(compactNumber(2_500_000), "2.5M");
});
