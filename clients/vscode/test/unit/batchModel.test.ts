/** Graphs picked, a run's progress, its status, and the checkpoint restore's words. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  GraphProgress,
  completionMessage,
  graphPicks,
  restoreConfirmation,
  restoredMessage,
  statusMarkdown,
} from "../../src/batchModel";

test("the graph picker lists each graph with its steps, or why it cannot run", () => {
  const picks = graphPicks([
    { name: "docs", steps: ["hints", "docs"], problems: [] },
    { name: "broken", steps: [], problems: ["unknown bundle 'nope'", "a cycle: a → b → a"] },
  ]);
  assert.deepEqual(picks[0], { label: "docs", description: "hints → docs", detail: undefined, name: "docs", runnable: true });
  assert.equal(picks[1]!.runnable, false);
  assert.equal(picks[1]!.detail, "unknown bundle 'nope'; a cycle: a → b → a");
  assert.match(picks[1]!.label, /broken/);
});

test("a graph run's progress follows its own events: k/N, then the outcome", () => {
  const progress = new GraphProgress("gr_1");
  assert.equal(progress.update({ type: "graph_started", graph_run_id: "gr_2", targets: { a: ["x"] } }), false);
  progress.update({ type: "graph_started", graph_run_id: "gr_1", targets: { hints: ["rm_a", "rm_b"], docs: ["rm_a", "rm_b"] } });
  assert.equal(progress.message("docs"), "docs 0/4");
  assert.equal(progress.increment(), 25);
  progress.update({ type: "graph_step_finished", graph_run_id: "gr_1", step: "hints", node_id: "rm_a" });
  assert.equal(progress.message("docs"), "docs 1/4");
  assert.equal(progress.outcome, undefined);
  progress.update({ type: "graph_completed", graph_run_id: "gr_1", outcome: "cancelled", counts: { completed: 1, cancelled: 3 } });
  assert.equal(progress.outcome, "cancelled");
  assert.equal(
    completionMessage("docs", progress.outcome!, progress.counts, 0),
    "Remora: graph docs cancelled (completed 1, cancelled 3).",
  );
  assert.match(completionMessage("docs", "completed", { completed: 2 }, 2), /2 proposals to review in the Proposals view/);
});

test("a run's status names the nodes", () => {
  const md = statusMarkdown(
    {
      graph_run_id: "gr_1",
      name: "docs",
      status: "completed",
      counts: { completed: 2 },
      steps: [{ step: "docs", nodes: { rm_a: "completed", rm_b: "failed" } }],
      proposals: { rm_a: "pr_1" },
    },
    new Map([["rm_a", "make_item"]]),
  );
  assert.match(md, /\| make_item \| completed \|/);
  assert.match(md, /\| rm_b \| failed \|/);
  assert.match(md, /make_item: `pr_1`/);
});

test("the restore confirmation names what changes, and that files are not written", () => {
  const checkpoint = { checkpoint_id: "cp_1", label: "before docs", created_at: 1000 };
  const pending = [
    { id: "pr_old", node: "order", file_path: "pkg/service.py", created_at: 900 },
    { id: "pr_new", node: "make_item", file_path: "pkg/models.py", created_at: 1100 },
  ];
  const text = restoreConfirmation(checkpoint, pending);
  assert.match(text, /"before docs · 1970-01-01 00:16:40 UTC"/);
  assert.match(text, /1 pending proposal made since will be withdrawn: make_item \(pkg\/models\.py\)\./);
  assert.doesNotMatch(text, /order/);
  assert.match(text, /chat history, memory, overlay files and pending proposals go back/);
  assert.match(text, /Your project files are not changed\./);
  assert.match(restoreConfirmation(checkpoint, []), /No pending proposal was made since\./);
});

test("after a restore: what came back and which files differ (left as they are)", () => {
  assert.equal(
    restoredMessage({ restored: true, files_differing: ["pkg/models.py", "pkg/service.py"] }),
    "Remora: agents' state restored (project files are never written by a restore). 2 files differ from the checkpoint and were left as they are: pkg/models.py, pkg/service.py.",
  );
  assert.match(restoredMessage({ restored: true, files_differing: [] }), /Every project file is as it was then\./);
  assert.equal(restoredMessage({ restored: false }), "Remora: the checkpoint was not restored.");
});
