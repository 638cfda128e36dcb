/** The remora-proposal: documents: addressing and content of each side. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { diffTitle, parseProposalPath, proposalPath, sideContent } from "../../src/proposalDiff";

test("a proposal path round-trips, even with odd characters in the id", () => {
  const p = proposalPath("pr/1 x", "proposed", "mod.py");
  assert.deepEqual(parseProposalPath(p), { proposalId: "pr/1 x", side: "proposed" });
  assert.equal(parseProposalPath("/pr_1/sideways/mod.py"), undefined);
});

test("each side shows its source; a missing side says so", () => {
  const answer = { old_source: "def f():\n    return 1\n", new_source: "def f():\n    return 2\n", status: "pending" };
  assert.equal(sideContent(answer, "current"), answer.old_source);
  assert.equal(sideContent(answer, "proposed"), answer.new_source);
  assert.match(sideContent({ status: "rejected" }, "proposed"), /no proposed source \(status: rejected\)/);
  assert.match(diffTitle("pr_1", "accepted"), /pr_1 \(accepted\)/);
});
