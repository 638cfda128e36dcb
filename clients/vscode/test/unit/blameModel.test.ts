/** Blame: the server's line ranges, the annotation and the hover with its conversation link. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ago, annotation, blameLines, hoverMarkdown } from "../../src/blameModel";

const range = (start: number, end: number) => ({ start: { line: start, character: 0 }, end: { line: end, character: 0 } });

test("ranges (end exclusive at column 0) become inclusive line spans; malformed ones are dropped", () => {
  const lines = blameLines([
    { range: range(4, 5), agent_id: "rm_a", proposal_id: "pr_1", accepted_at: 100 },
    { range: range(10, 13), agent_id: "rm_b", proposal_id: "pr_2", accepted_at: 200 },
    { range: { start: { line: 20 } }, agent_id: "rm_c" },
    "nonsense",
  ]);
  assert.deepEqual(lines, [
    { start: 4, end: 4, agentId: "rm_a", proposalId: "pr_1", acceptedAt: 100 },
    { start: 10, end: 12, agentId: "rm_b", proposalId: "pr_2", acceptedAt: 200 },
  ]);
});

test("the annotation and the hover say which node's agent, which proposal, when", () => {
  const [span] = blameLines([{ range: range(10, 13), agent_id: "rm_b", proposal_id: "pr_2", accepted_at: 1_000_000 }]);
  assert.equal(annotation(span!, "Service.helper", 1_000_000 + 300), "Service.helper's agent · pr_2 · 5 min ago");
  assert.equal(annotation(span!, undefined, 1_000_000 + 7200), "rm_b's agent · pr_2 · 2 h ago");
  const hover = hoverMarkdown(span!, "Service.helper", 1_000_000 + 90_000);
  assert.match(hover, /Lines 11–13 written by `Service.helper`'s agent \(`rm_b`\)/);
  assert.match(hover, /Proposal `pr_2`, accepted 1970-01-12 13:46:40 UTC \(1 day ago\)/);
  const link = /\[Show the conversation\]\(command:remora\.showHistory\?([^)]+)\)/.exec(hover);
  assert.ok(link);
  assert.deepEqual(JSON.parse(decodeURIComponent(link[1]!)), [{ node_id: "rm_b" }]);
  const revert = /\[Revert…\]\(command:remora\.revertProposal\?([^)]+)\)/.exec(hover);
  assert.ok(revert);
  assert.deepEqual(JSON.parse(decodeURIComponent(revert[1]!)), [{ proposal_id: "pr_2" }]);
  assert.equal(ago(50, 60), "just now");
});
