/** A node's conversation: history + live events, proposals, questions, and safe HTML. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Conversation, Entry, entryOf, escapeHtml, renderConversation } from "../../src/conversationModel";

const ME = "rm_me";
let seq = 0;
const ev = (type: string, fields: Record<string, unknown>) => ({ type, id: `ev_${++seq}`, seq, timestamp: 1_790_000_000 + seq, run_id: "run_1", ...fields });

/** The HTML as text, as a browser shows it (tags dropped, entities decoded). */
function shown(html: string): string {
  return html.replace(/<[^>]*>/g, " ").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");
}

test("events become the entries the server's history has", () => {
  assert.deepEqual(entryOf(ev("human_chat", { to_agent: ME, message: "hi" }), ME)?.kind, "message");
  assert.equal(entryOf(ev("human_chat", { to_agent: "rm_other", message: "hi" }), ME), undefined);
  const reply = entryOf(ev("agent_message", { from_agent: "rm_b", to_agent: ME, from_name: "b.g", message: "ok", reply_to: "ev_1", tags: [] }), ME);
  assert.deepEqual([reply?.role, reply?.kind, reply?.from?.name], ["node", "reply", "b.g"]);
  const sent = entryOf(ev("agent_message", { from_agent: ME, to_agent: "rm_b", to_name: "b.g", message: "rename?", tags: ["request"] }), ME);
  assert.deepEqual([sent?.role, sent?.kind, sent?.to?.name], ["agent", "request", "b.g"]);
  assert.equal(entryOf(ev("agent_completed", { agent_id: ME, result: "It sorts." }), ME)?.text, "It sorts.");
  assert.equal(entryOf(ev("agent_completed", { agent_id: ME, result: "x", answered_by: "run_0" }), ME), undefined);
  assert.equal(entryOf(ev("agent_failed", { agent_id: ME, error: "boom" }), ME)?.kind, "failure");
  assert.equal(entryOf(ev("agent_cancelled", { agent_id: ME, reason: "" }), ME)?.text, "cancelled");
  assert.equal(entryOf(ev("run_interrupted", { agent_id: ME }), ME)?.kind, "interrupted");
  assert.equal(entryOf(ev("model_response", { agent_id: ME, usage: {} }), ME), undefined);
});

test("history and live events merge by event id, in log order", () => {
  const conv = new Conversation(ME);
  const history: Entry[] = [{ role: "person", kind: "message", text: "first", run_id: "run_1", timestamp: 1, seq: 10, event_id: "ev_a" }];
  conv.load(history);
  assert.equal(conv.apply({ type: "human_chat", id: "ev_a", seq: 10, to_agent: ME, message: "first" }), false);
  conv.apply({ type: "agent_started", id: "ev_b", seq: 11, agent_id: ME, run_id: "run_1" });
  assert.deepEqual([...conv.running], [["run_1", "running"]]);
  conv.apply({ type: "agent_completed", id: "ev_c", seq: 12, agent_id: ME, run_id: "run_1", result: "second" });
  assert.deepEqual(conv.ordered().map((e) => e.text), ["first", "second"]);
  assert.equal(conv.running.size, 0);
});

test("a history read before a live entry was written keeps that entry", () => {
  const conv = new Conversation(ME);
  // The view asked for the history; meanwhile the answer arrived live.
  conv.apply({ type: "agent_completed", id: "ev_z", seq: 21, agent_id: ME, run_id: "run_2", result: "live answer" });
  const read: Entry[] = [{ role: "person", kind: "message", text: "question", run_id: "run_2", timestamp: 1, seq: 20, event_id: "ev_y" }];
  conv.load(read);
  assert.deepEqual(conv.ordered().map((e) => e.text), ["question", "live answer"]);
  // A later read that has it replaces it; an entry older than the read and not in it is gone.
  conv.apply({ type: "human_chat", id: "ev_old", seq: 5, to_agent: ME, message: "forgotten" });
  conv.load([...read, { role: "agent", kind: "answer", text: "live answer", run_id: "run_2", timestamp: 2, seq: 21, event_id: "ev_z" }]);
  assert.deepEqual(conv.ordered().map((e) => e.text), ["question", "live answer"]);
});

test("a proposal shows its diff, checks and the buttons while it is pending", () => {
  const conv = new Conversation(ME);
  conv.apply(ev("rewrite_proposed", { node_id: ME, proposal_id: "pr_1", diff: "-old\n+new", checks: [{ name: "guard", ok: true, detail: "docstring only" }] }));
  conv.apply(ev("proposal_checked", { node_id: ME, proposal_id: "pr_1", check: { name: "tests", ok: null, status: "running" } }));
  let html = renderConversation(conv, { id: ME, name: "helper" });
  assert.match(html, /data-action="accept" data-proposal="pr_1"/);
  assert.match(html, /data-action="diff"/);
  assert.match(shown(html), /✓ guard passed: docstring only/);
  assert.match(shown(html), /… tests running/);
  assert.match(html, /<span class="add">\+new<\/span>/);
  conv.apply(ev("rewrite_rejected", { node_id: ME, proposal_id: "pr_1", feedback: "keep it" }));
  html = renderConversation(conv, { id: ME, name: "helper" });
  assert.doesNotMatch(html, /data-action="accept"/);
  assert.match(shown(html), /rejected[\s\S]*You rejected the proposal\s+\S+\s+keep it/);
  // After a load, the server's word on the proposal (superseded) counts.
  const loaded = new Conversation(ME);
  loaded.load([{ role: "agent", kind: "proposal", text: "+x", proposal_id: "pr_2", event_id: "ev_p", seq: 1 }]);
  loaded.setProposal("pr_2", "superseded", []);
  assert.equal(loaded.proposalStatus("pr_2"), "superseded");
});

test("a question waits for an answer until answered or its run ends", () => {
  const conv = new Conversation(ME);
  conv.apply(ev("agent_blocked", { agent_id: ME, question_id: "q_1", question: "Which name?", options: [] }));
  assert.deepEqual([...conv.running], [["run_1", "waiting"]]);
  let html = renderConversation(conv, { id: ME, name: "helper" });
  assert.match(html, /<input type="text" data-question="q_1"/);
  assert.match(shown(html), /helper waits for your answer/);
  conv.apply(ev("agent_resumed", { agent_id: ME, question_id: "q_1", answer: "Ada", outcome: "answered" }));
  html = renderConversation(conv, { id: ME, name: "helper" });
  assert.doesNotMatch(html, /<input/);
  assert.match(shown(html), /Your answer\s+\S+\s+Ada/);
  conv.apply({ ...ev("agent_blocked", { agent_id: ME, question_id: "q_2", question: "Sure?", options: ["yes", "no"] }), run_id: "run_2" });
  assert.match(renderConversation(conv, undefined), /data-action="answer" data-question="q_2" data-answer="yes"/);
  conv.apply({ ...ev("run_interrupted", { agent_id: ME }), run_id: "run_2" });
  assert.doesNotMatch(renderConversation(conv, undefined), /data-question="q_2"/);
});

test("model and repository text is escaped: HTML in an answer shows as text", () => {
  const conv = new Conversation(ME);
  const evil = `<script>alert(1)</script><img src=x onerror="alert(2)"> & 'quotes'`;
  conv.apply(ev("agent_completed", { agent_id: ME, result: evil }));
  conv.apply(ev("rewrite_proposed", { node_id: ME, proposal_id: `pr_"><b>`, diff: `+<b>bold</b>`, checks: [{ name: "<i>", ok: false, detail: "</li>" }] }));
  const html = renderConversation(conv, { id: ME, name: "<u>helper</u>", last_answer: { text: "<hr>" } });
  assert.doesNotMatch(html, /<script|<img|<b>|<i>|<u>|<hr>|<\/li>\s*<\/li>/);
  assert.ok(shown(html).includes(evil));
  assert.ok(shown(html).includes("<b>bold</b>"));
  assert.equal(escapeHtml(`<a href="x">'&'</a>`), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
});

test("the card on top says where the node is, its agent and its last answer", () => {
  const conv = new Conversation(ME);
  const html = renderConversation(conv, {
    id: ME, kind: "method", qualified_name: "Service.helper", file_path: "pkg/service.py", line: 4, agent_status: "idle",
    pending_proposals: 1, callers: [{ qualified_name: "Service.run" }], last_answer: { text: "It orders two b's.", truncated: false, lines: 1 },
  });
  const text = shown(html);
  assert.match(text, /Service\.helper/);
  assert.match(text, /method · pkg\/service\.py:5 · agent idle · 1 pending/);
  assert.match(text, /callers:\s+Service\.run/);
  assert.match(text, /last answer:\s+It orders two b's\./);
  assert.match(text, /No conversation yet/);
});

test("messages to and from other agents name the other side", () => {
  const conv = new Conversation(ME);
  conv.apply(ev("agent_message", { from_agent: "rm_b", to_agent: ME, from_name: "mod.caller", message: "please rename", tags: ["request"] }));
  conv.apply(ev("agent_message", { from_agent: ME, to_agent: "rm_b", to_name: "mod.caller", message: "done", reply_to: "ev_x", tags: [] }));
  const text = shown(renderConversation(conv, { id: ME, name: "helper" }));
  assert.match(text, /mod\.caller → helper \(request\)[\s\S]*please rename/);
  assert.match(text, /helper → mod\.caller \(reply\)[\s\S]*done/);
});

test("the card shows a person's standing instructions, escaped", () => {
  const conv = new Conversation(ME);
  const html = renderConversation(conv, { id: ME, name: "helper", instructions: "Keep <cents> integer." });
  assert.match(shown(html), /instructions:\s+Keep <cents> integer\./);
  assert.doesNotMatch(html, /<cents>/);
  assert.doesNotMatch(shown(renderConversation(conv, { id: ME, name: "helper", instructions: null })), /instructions:/);
});

test("a runs list read before a question was asked still shows the run waiting", () => {
  const conv = new Conversation("rm_helper01");
  conv.apply({ type: "agent_started", agent_id: "rm_helper01", run_id: "run_1", seq: 1, event_id: "e1" });
  const mark = conv.runsMark(); // the view starts reading the runs list…
  conv.apply({ type: "agent_blocked", agent_id: "rm_helper01", run_id: "run_1", seq: 2, event_id: "e2", question: "Which name?" });
  conv.apply({ type: "agent_started", agent_id: "rm_helper01", run_id: "run_2", seq: 3, event_id: "e3" });
  conv.apply({ type: "agent_completed", agent_id: "rm_helper01", run_id: "run_2", seq: 4, event_id: "e4" });
  // …which answers what was true when it began.
  conv.setRunsRead([{ id: "run_1", status: "running" }, { id: "run_0", status: "running" }], mark);
  assert.deepEqual([...conv.running], [["run_1", "waiting"], ["run_0", "running"]]);
  const html = renderConversation(conv, { id: "rm_helper01", name: "helper" });
  assert.match(html, /helper waits for your answer/);
});
