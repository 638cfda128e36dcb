/** One readable line per event; runs in flight follow the event stream. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { RunTracker, formatEvent, isRemoraEvent, statusText } from "../../src/eventFormat";

test("an event becomes one line with time, seq, type and ids", () => {
  const line = formatEvent({
    type: "proposal_created",
    seq: 42,
    timestamp: "2026-11-24T10:31:02.123456+00:00",
    node_id: "rm_ab12",
    proposal_id: "pr_9",
    summary: "Handle the\nempty list",
  });
  assert.equal(line, "10:31:02 #42 proposal_created node_id=rm_ab12 proposal_id=pr_9 summary=Handle the empty list");
});

test("long values are cut with an ellipsis", () => {
  const line = formatEvent({ type: "agent_failed", error: "x".repeat(500) });
  assert.ok(line.endsWith("…"));
  assert.ok(line.length < 200);
});

test("only objects with a string type are events", () => {
  assert.equal(isRemoraEvent({ type: "a" }), true);
  assert.equal(isRemoraEvent({ type: 1 }), false);
  assert.equal(isRemoraEvent(null), false);
});

test("runs start and end with the stream", () => {
  const runs = new RunTracker();
  assert.equal(runs.update({ type: "agent_started", run_id: "r1", node_id: "n1" }), true);
  runs.update({ type: "agent_started", run_id: "r2", node_id: "n2" });
  assert.equal(runs.update({ type: "proposal_created", run_id: "r1" }), false);
  runs.update({ type: "agent_cancelled", run_id: "r2" });
  assert.deepEqual(runs.inFlight(), [{ runId: "r1", nodeId: "n1" }]);
  assert.match(statusText(1, 2), /1 · 2 pending/);
});
