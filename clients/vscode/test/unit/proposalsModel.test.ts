/** The Proposals view: grouped by file with checks, graph runs to accept, results by reason. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  acceptSummary,
  checksLine,
  countForFile,
  describeProposal,
  fileStatusText,
  groupByFile,
  proposalLabel,
  runsWithPending,
} from "../../src/proposalsModel";

const p = (id: string, file: string, start: number, extra: Record<string, unknown> = {}) => ({
  id,
  file_path: file,
  uri: `file:///w/${file}`,
  start_byte: start,
  node: `${id}_node`,
  diff: "--- a\n+++ b\n@@\n def f():\n+    \"\"\"Doc.\"\"\"\n-    x\n+    y\n",
  ...extra,
});

test("pending proposals are grouped by file, files by path, each file's in source order", () => {
  const groups = groupByFile([p("pr_3", "pkg/service.py", 90), p("pr_1", "pkg/models.py", 10), p("pr_2", "pkg/service.py", 5)]);
  assert.deepEqual(
    groups.map((g) => [g.filePath, g.proposals.map((x) => x.id)]),
    [
      ["pkg/models.py", ["pr_1"]],
      ["pkg/service.py", ["pr_2", "pr_3"]],
    ],
  );
  assert.equal(groups[0]!.uri, "file:///w/pkg/models.py");
});

test("each proposal shows its node, its size and its checks", () => {
  const checks = [
    { name: "intent", ok: true },
    { name: "tests", ok: false, detail: "1 failed" },
    { name: "types", ok: null },
  ];
  assert.equal(checksLine(checks), "✓ intent · ✗ tests · … types");
  assert.equal(describeProposal(p("pr_1", "a.py", 0, { checks })), "+2 −1 · ✓ intent · ✗ tests · … types");
  assert.equal(describeProposal(p("pr_1", "a.py", 0, { kind: "new_node", diff: "" })), "new node · +0 −0");
  assert.equal(proposalLabel({ id: "pr_1", node: null, node_id: "rm_1" }), "rm_1");
  assert.equal(proposalLabel({ id: "pr_1" }), "pr_1");
});

test("graph runs with pending proposals, for Accept All", () => {
  const runs = [
    { graph_run_id: "gr_new", name: "docs", proposals: { rm_a: "pr_1", rm_b: "pr_2" } },
    { graph_run_id: "gr_old", name: "docs", proposals: { rm_a: "pr_0" } },
  ];
  const found = runsWithPending(runs, new Set(["pr_1", "pr_2", "pr_9"]));
  assert.deepEqual(found.map((r) => [r.run.graph_run_id, r.proposalIds]), [["gr_new", ["pr_1", "pr_2"]]]);
});

test("accepting several says how many landed and the others by reason", () => {
  const all = acceptSummary([
    { proposal_id: "pr_1", applied: true },
    { proposal_id: "pr_2", applied: true },
  ]);
  assert.deepEqual(all, { message: "Remora: accepted 2 of 2 proposals.", failed: 0 });
  const some = acceptSummary([
    { proposal_id: "pr_1", applied: true },
    { proposal_id: "pr_2", applied: false, reason: "stale: the file changed" },
    { proposal_id: "pr_3", applied: false, reason: "stale: the file changed" },
    { proposal_id: "pr_4", applied: false, reason: "overlaps pr_1" },
  ]);
  assert.equal(some.failed, 3);
  assert.equal(
    some.message,
    "Remora: accepted 1 of 4 proposals; not applied: stale: the file changed (pr_2, pr_3); overlaps pr_1 (pr_4).",
  );
});

test("the open file's count", () => {
  const pending = [p("pr_1", "a.py", 0), p("pr_2", "a.py", 9), p("pr_3", "b.py", 0)];
  assert.equal(countForFile(pending, "file:///w/a.py"), 2);
  assert.equal(countForFile(pending, "file:///w/c.py"), 0);
  assert.equal(fileStatusText(1), "$(git-pull-request) 1 proposal here");
  assert.equal(fileStatusText(2), "$(git-pull-request) 2 proposals here");
});
