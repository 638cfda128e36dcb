/** One readable line per event; runs in flight follow the event stream. */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { DESCRIBE, RunTracker, describeEvent, formatEvent, isRemoraEvent } from "../../src/eventFormat";

/** Every event type the engine defines, read from its source (out-test/test/unit → repo root). */
function engineEventTypes(): string[] {
  const models = path.resolve(__dirname, "..", "..", "..", "..", "..", "core", "remora_core", "events", "models.py");
  const text = fs.readFileSync(models, "utf8");
  return [...text.matchAll(/type: Literal\["(\w+)"\]/g)].map((m) => m[1]!);
}

/** One event of each type as the server sends it (fields from events/models.py). */
const SAMPLES: Record<string, Record<string, unknown>> = {
  content_changed: { path: "pkg/a.py", node_ids: ["rm_1", "rm_2"], change: "modified" },
  topology_changed: { path: "pkg/a.py", added: ["rm_3"], removed: [], orphaned: ["rm_4"] },
  human_chat: { to_agent: "rm_1", message: "Add a docstring" },
  agent_message: { from_agent: "rm_1", to_agent: "rm_2", from_name: "a.f", to_name: "a.g", message: "rename x", tags: ["request"] },
  agent_started: { agent_id: "rm_1", trigger_ids: ["ev_1"] },
  agent_completed: { agent_id: "rm_1", result: "It sorts the list." },
  agent_failed: { agent_id: "rm_1", error: "model unreachable" },
  agent_cancelled: { agent_id: "rm_1", reason: "cancelled by the person" },
  agent_blocked: { agent_id: "rm_1", question_id: "q_1", question: "Which name?", options: ["a", "b"] },
  agent_resumed: { agent_id: "rm_1", question_id: "q_1", answer: "Ada", outcome: "answered" },
  model_request: { agent_id: "rm_1", model: "scripted", attempt: 2, retry_reason: "HTTP 503" },
  model_response: { agent_id: "rm_1", usage: { input_tokens: 1200, output_tokens: 34 }, finish_reason: "stop" },
  tool_called: { agent_id: "rm_1", tool: "rewrite_self", arguments: { new_source: "def f(): pass" } },
  tool_result: { agent_id: "rm_1", tool: "rewrite_self", ok: true, summary: "proposed pr_1" },
  rewrite_proposed: { proposal_id: "pr_1", node_id: "rm_1", diff: "-a\n+b", checks: [{ name: "guard", ok: true, detail: "docstring only" }] },
  rewrite_applied: { proposal_id: "pr_1", node_id: "rm_1" },
  rewrite_rejected: { proposal_id: "pr_1", node_id: "rm_1", feedback: "keep it", by: "person" },
  rewrite_stale: { proposal_id: "pr_1", node_id: "rm_1", reason: "the node changed" },
  rewrite_not_applied: { proposal_id: "pr_1", node_id: "rm_1", reason: "the document moved on" },
  proposal_checked: { proposal_id: "pr_1", node_id: "rm_1", check: { name: "tests", ok: false, detail: "1 failed" } },
  checkpoint_created: { checkpoint_id: "cp_1" },
  checkpoint_restored: { checkpoint_id: "cp_1" },
  graph_started: { graph_run_id: "gr_1", name: "docs", steps: ["doc", "check"], node_count: 3 },
  graph_step_finished: { graph_run_id: "gr_1", step: "doc", node_id: "rm_1", outcome: "completed", detail: "ok" },
  graph_completed: { graph_run_id: "gr_1", outcome: "completed", counts: { completed: 3 } },
  trigger_refused: { agent_id: "rm_1", trigger_id: "ev_1", rule: "max_depth", reason: "depth 5 > 4" },
  limit_reached: { agent_id: "rm_1", limit: "limits.tool_calls_per_run", reason: "20 tool calls" },
  run_interrupted: { agent_id: "rm_1" },
};

/** What each line must say (beyond not being raw). */
const SAYS: Record<string, RegExp> = {
  agent_completed: /rm_1 answered: “It sorts the list\.”/,
  limit_reached: /rm_1 reached limits\.tool_calls_per_run: 20 tool calls/,
  model_response: /1200 in \/ 34 out tokens/,
  agent_blocked: /asks you: “Which name\?” \[a \| b\]/,
  rewrite_proposed: /rm_1 proposes pr_1 — guard passed: docstring only/,
  proposal_checked: /pr_1: tests failed: 1 failed/,
  agent_message: /a\.f → a\.g \(request\): “rename x”/,
  run_interrupted: /interrupted/,
  trigger_refused: /not started \(max depth\): depth 5 > 4/,
};

test("every event type of the engine has its own readable line", () => {
  const types = engineEventTypes();
  assert.ok(types.length >= 28, `read ${types.length} types from events/models.py`);
  for (const type of types) {
    assert.ok(DESCRIBE[type], `no line for ${type}`);
    const sample = SAMPLES[type];
    assert.ok(sample, `no sample for ${type}`);
    const line = describeEvent({ type, id: "ev_x", seq: 1, run_id: "run_1", timestamp: 1_790_000_000, ...sample });
    // A readable sentence: no JSON braces, no key=value dump, not just the type.
    assert.doesNotMatch(line, /[{}]|\w=\S/, `${type}: ${line}`);
    assert.notEqual(line.trim(), type);
    assert.doesNotMatch(line, /undefined|null|\[object/, `${type}: ${line}`);
    if (SAYS[type]) assert.match(line, SAYS[type]!, `${type}: ${line}`);
  }
});

test("a line has the time, the seq, the sentence and the run", () => {
  const line = formatEvent({ type: "agent_completed", seq: 42, timestamp: 1_790_000_000.5, agent_id: "rm_ab12", run_id: "run_9", result: "All\nfine" });
  assert.match(line, /^\d\d:\d\d:\d\d #42 rm_ab12 answered: “All fine” \[run_9\]$/);
});

test("an unknown type (a newer server) still shows its fields", () => {
  const line = formatEvent({ type: "proposal_created", seq: 4, timestamp: "2026-11-24T10:31:02.123456+00:00", node_id: "rm_ab12", summary: "Handle the\nempty list" });
  assert.equal(line, "10:31:02 #4 proposal_created node_id=rm_ab12 summary=Handle the empty list");
});

test("long values are cut with an ellipsis", () => {
  const line = formatEvent({ type: "agent_failed", agent_id: "rm_1", error: "x".repeat(500) });
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
  assert.equal(runs.update({ type: "agent_started", run_id: "r1", agent_id: "n1" }), true);
  runs.update({ type: "agent_started", run_id: "r2", agent_id: "n2" });
  assert.equal(runs.update({ type: "proposal_checked", run_id: "r1" }), false);
  runs.update({ type: "agent_cancelled", run_id: "r2" });
  assert.deepEqual(runs.inFlight(), [{ runId: "r1", nodeId: "n1" }]);
  runs.clear();
  assert.deepEqual(runs.inFlight(), []);
});

test("one refusal naming many agents says how many", () => {
  const line = describeEvent({
    type: "trigger_refused",
    agent_id: "rm_1",
    agent_ids: ["rm_1", "rm_2", "rm_3"],
    trigger_id: "ev_1",
    rule: "turn_budget",
    reason: "the cascade has used its budget of 20 turns",
  });
  assert.match(line, /rm_1 and 2 others not started \(turn budget\)/);
});

test("a member of a change set rejected says so", () => {
  const line = describeEvent({ type: "rewrite_rejected", id: "ev_x", seq: 1, timestamp: 1, proposal_id: "pr_1", node_id: "rm_1", feedback: "keep it", by: "person", members: [0] });
  assert.match(line, /^a member of pr_1 rejected by you: “keep it”$/);
});
