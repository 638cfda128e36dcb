/** The status bar's counts: runs, pending proposals, today's stored tokens. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { SessionTally, compactNumber, statusText, statusTooltip } from "../../src/sessionTally";

test("tokens are the server's stored totals, read again after events that add some", () => {
  const tally = new SessionTally();
  assert.equal(tally.changes({ type: "model_response", run_id: "run_1", usage: { input_tokens: 1000 } }), true);
  assert.equal(tally.changes({ type: "agent_failed", run_id: "run_1" }), true);
  assert.equal(tally.changes({ type: "content_changed" }), false);
  assert.equal(tally.set({ input_tokens: 1500, output_tokens: 35, cached_tokens: 1200 }), true);
  assert.equal(tally.set({ input_tokens: 1500, output_tokens: 35, cached_tokens: 1200 }), false);
  assert.equal(tally.set(undefined), false);
  assert.equal(tally.tokens, 1535);
  assert.equal(tally.set({ input_tokens: -3, output_tokens: "x" }), true);
  assert.equal(tally.tokens, 0);
});

test("the status text shows runs in flight, pending proposals and today's tokens", () => {
  assert.equal(statusText(2, 3, 1535), "$(hubot) Remora $(sync~spin) 2 · 3 pending · 1.5k tokens today");
  assert.equal(statusText(0, 0, 0), "$(hubot) Remora $(check) 0 · 0 pending · 0 tokens today");
  assert.equal(compactNumber(25_400), "25k");
  assert.equal(compactNumber(2_500_000), "2.5M");
  const tally = new SessionTally();
  tally.set({ input_tokens: 1500, output_tokens: 35, cached_tokens: 1200 });
  assert.match(statusTooltip(1, 0, tally), /model tokens today: 1500 in \(1200 cached\), 35 out/);
});
