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

test("an item says its trigger, outcome, duration and tokens", () => {
  assert.equal(describeRun(row({}), 0, 1234), "you: “Add a docstring” · done · 12 s · 1234 tokens");
  assert.equal(describeRun(row({ status: "running", ended_at: null, trigger: { kind: "change", text: "change of pkg/a.py" } }), 230, undefined), "change of pkg/a.py · 2 min 10 s");
  assert.match(runTooltip(row({ status: "failed", outcome: "model\nunreachable" }), 0, undefined), /outcome: model unreachable[\s\S]*|tokens: not seen by this session/);
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
