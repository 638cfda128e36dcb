/** What it cost and why it woke, as lines and on the node card. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { renderConversation, Conversation } from "../../src/conversationModel";
import { costText, subscriptionLines, usageLines, wakesText } from "../../src/costs";

const spent = { runs: 2, input_tokens: 2600, output_tokens: 100, cached_tokens: 1000, tokens: 2700, requests: 3, seconds: 4.2 };

test("the usage report lists the total, then by day, node and graph run", () => {
  const lines = usageLines({
    since: null,
    total: spent,
    by_day: [{ key: "2026-11-27", ...spent }],
    by_node: [{ key: "rm_1", name: "Service.helper", ...spent }],
    by_graph: [],
  });
  assert.deepEqual(lines, [
    "── what agents used ──",
    "  in all — 2 runs, 2700 tokens (2600 in, 100 out, 1000 cached), 4 s",
    "by day",
    "  2026-11-27 — 2 runs, 2700 tokens (2600 in, 100 out, 1000 cached), 4 s",
    "by node",
    "  Service.helper (rm_1) — 2 runs, 2700 tokens (2600 in, 100 out, 1000 cached), 4 s",
  ]);
  assert.equal(costText(spent), "2.7k tokens · 4 s");
});

test("a node's subscriptions say what each fired, and whether it is muted", () => {
  const found = {
    node_id: "rm_1",
    muted: true,
    subscriptions: [
      { id: "sub_msg_rm_1", default: true, text: "messages to it", fired: 0, matched: [] },
      { id: "sub_1", default: false, text: "agent_completed about rm_2", fired: 1, matched: [{ run_id: "run_9", event_type: "agent_completed", at: 1 }] },
    ],
  };
  assert.deepEqual(subscriptionLines(found, "order"), [
    "── what wakes order (rm_1): muted, only your messages ──",
    "  sub_msg_rm_1 [default] messages to it — fired no run lately",
    "  sub_1 [own] agent_completed about rm_2 — fired 1 runs, last run_9 (agent_completed)",
  ]);
  assert.equal(wakesText(found), "muted (only your messages) · messages to it; agent_completed about rm_2");
});

test("the node card shows what its runs cost and what wakes it", () => {
  const html = renderConversation(new Conversation("rm_1"), {
    id: "rm_1",
    qualified_name: "order",
    usage: spent,
    muted: false,
    subscriptions: [{ id: "sub_msg_rm_1", default: true, text: "messages to it" }],
  });
  assert.match(html, /2 runs, 2\.7k tokens · 4 s/);
  assert.match(html, /wakes for:<\/span> messages to it/);
});
