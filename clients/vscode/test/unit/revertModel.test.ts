/** What the editor says of a revert: the proposals to review, the lines refused. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Conversation, renderConversation } from "../../src/conversationModel";
import { filesProposedMessage, interruptedOffer, refusedMessage, revertMessage } from "../../src/revertModel";

test("a revert names its proposals and says nothing is written until accepted", () => {
  const one = revertMessage({ proposal_ids: ["pr_a"], reverted: ["pr_x"], refused: [] }, "proposal pr_x");
  assert.equal(one, "Remora: a revert proposal for proposal pr_x: pr_a. Review, then accept; nothing is written until you do.");
  const two = revertMessage({ proposal_ids: ["pr_a", "pr_b"] }, "graph run gr_1");
  assert.match(two, /2 revert proposals \(one per file, accept them together\) for graph run gr_1: pr_a, pr_b/);
  assert.equal(revertMessage({ proposal_ids: [] }, "proposal pr_x"), "Remora: nothing of proposal pr_x could be reverted.");
});

test("refused parts are named by file and lines", () => {
  assert.equal(refusedMessage({ proposal_ids: ["pr_a"], refused: [] }), undefined);
  const said = refusedMessage({
    proposal_ids: [],
    refused: [
      { proposal_id: "pr_x", path: "a.py", first_line: 6, last_line: 6, reason: "edited" },
      { proposal_id: "pr_y", path: "b.py", first_line: 2, last_line: 4, reason: "edited" },
    ],
  });
  assert.equal(said, "Remora: left as they are, edited after the accept — revert by hand: a.py line 6 (pr_x); b.py lines 2–4 (pr_y).");
});

test("a restore with files names the proposals and the files it could not restore", () => {
  assert.equal(filesProposedMessage({}), undefined);
  assert.equal(filesProposedMessage({ proposal_ids: [] }), "No file needs proposing back.");
  assert.equal(
    filesProposedMessage({ proposal_ids: ["pr_a"], not_restored: [{ path: "new.py", reason: "created since: delete it by hand" }] }),
    "1 proposal put files back as they were: pr_a; review, then accept. Not restored: new.py (created since: delete it by hand).",
  );
});

test("an accepted proposal in the conversation offers Revert", () => {
  const conv = new Conversation("rm_me");
  conv.apply({ type: "rewrite_proposed", id: "ev_1", seq: 1, run_id: "run_1", node_id: "rm_me", proposal_id: "pr_1", diff: "+x", checks: [] });
  assert.doesNotMatch(renderConversation(conv, { id: "rm_me", name: "f" }), /data-action="revert"/);
  conv.apply({ type: "rewrite_applied", id: "ev_2", seq: 2, run_id: "run_1", node_id: "rm_me", proposal_id: "pr_1" });
  assert.match(renderConversation(conv, { id: "rm_me", name: "f" }), /data-action="revert" data-proposal="pr_1"/);
});

test("a graph run a restart interrupted is offered to resume; others are not", () => {
  assert.equal(interruptedOffer({ type: "graph_completed", graph_run_id: "gr_1", outcome: "completed" }), undefined);
  assert.equal(interruptedOffer({ type: "graph_started", graph_run_id: "gr_1" }), undefined);
  assert.equal(
    interruptedOffer({ type: "graph_completed", graph_run_id: "gr_1", outcome: "interrupted", finished_nodes: ["rm_a"] }),
    "Remora: graph run gr_1 was interrupted by a restart (1 node had finished). Resume it? Finished steps are not run again.",
  );
  assert.match(interruptedOffer({ type: "graph_completed", graph_run_id: "gr_2", outcome: "interrupted", finished_nodes: [] }) ?? "", /no node had finished/);
});
