/** The Runs view: groups, descriptions (trigger, outcome, duration, tokens), menus. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { RunRow, describeRun, formatDuration, groupRuns, runContext, runTooltip } from "../../src/runsModel";

const row = (over: Partial<RunRow>): RunRow => ({
  id: "run_1", node: { id: "rm_1", name: "Service.helper" }, status: "done",
  trigger: { kind: "person", text: "person", message: "Add a docstring" }, started_at: 100, ended_at: 112.4, outcome: "Done.", ...over,
});

test("runs are grouped as a person acts on them, empty groups left out", () => {
  const groups = groupRuns([
    row({ id: "run_a", status: "done" }),
    row({ id: "run_b", status: "running", ended_at: null }),
    row({ id: null, status: "queued" }),
    row({ id: "run_c", status: "waiting" }),
    row({ id: "run_d", status: "cancelled" }),
  ]);
  assert.deepEqual(groups.map((g) => [g.label, g.runs.map((r) => r.id)]), [
    ["Waiting for you", ["run_c"]],
    ["Running", ["run_b"]],
    ["Queued", [null]],
    ["Recent", ["run_a", "run_d"]],
  ]);
});

const usage = { input_tokens: 1200, output_tokens: 34, cached_tokens: 1000, tokens: 1234, requests: 2, seconds: 12.4 };

test("an item says its trigger, outcome, duration and stored tokens", () => {
  assert.equal(describeRun(row({ usage }), 0), "you: “Add a docstring” · done · 12 s · 1234 tokens");
  assert.equal(describeRun(row({ status: "running", ended_at: null, trigger: { kind: "change", text: "change of pkg/a.py" } }), 230), "change of pkg/a.py · 2 min 10 s");
  assert.match(runTooltip(row({ status: "failed", outcome: "model\nunreachable" }), 0), /tokens: none yet[\s\S]*outcome: model unreachable/);
  assert.match(runTooltip(row({ usage }), 0), /tokens: 1234 \(1200 in, 1000 of them cached; 34 out; 2 requests\)/);
});

test("an item names the subscription that woke the run, and a budget's stop", () => {
  const woken = row({ trigger: { kind: "agent_completed", text: "agent completed", subscription: { id: "sub_1", text: "sub_1" } } });
  assert.equal(describeRun(woken, 0), "agent completed [sub_1] · done · 12 s");
  const stopped = row({ status: "failed", reason: "limit_reached", usage });
  assert.equal(describeRun(stopped, 0), "you: “Add a docstring” · limit reached · 12 s · 1234 tokens");
  assert.match(runTooltip(stopped, 0), /stopped at a token budget/);
});

test("durations read naturally", () => {
  assert.equal(formatDuration(0.85), "850 ms");
  assert.equal(formatDuration(12.4), "12 s");
  assert.equal(formatDuration(184), "3 min 4 s");
  assert.equal(formatDuration(7500), "2 h 5 min");
});

test("only runs with an id and still going offer cancel; waiting ones an answer", () => {
  assert.equal(runContext(row({ status: "running" })), "run-running");
  assert.equal(runContext(row({ status: "waiting" })), "run-waiting");
  assert.equal(runContext(row({ status: "interrupted" })), "run-interrupted");
  assert.equal(runContext(row({ status: "done" })), "run-ended");
  assert.equal(runContext(row({ id: null, status: "queued" })), "run-queued-anonymous");
});
