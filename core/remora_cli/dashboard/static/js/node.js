// The node page: its card, the whole conversation, its proposals (pending
// ones with Accept / Reject with feedback, past ones with their decision),
// each with its diff and checks; and a box to ask its agent something.

import { call } from "./api.js";
import { clock, diffView, h, latestOnly, show, toast } from "./dom.js";

export class NodePanel {
  constructor(element, onChanged) {
    this.element = element;
    this.onChanged = onChanged;
    this.nodeId = null;
    this.drafts = new Map(); // proposal id -> feedback typed so far
    this.turn = latestOnly();
  }

  async open(nodeId) {
    this.nodeId = nodeId;
    await this.refresh();
  }

  async refresh() {
    if (!this.nodeId) return;
    const nodeId = this.nodeId;
    const current = this.turn();
    const card = await call("remora.node.get", { node_id: nodeId });
    const [history, proposals] = await Promise.all([
      call("remora.agent.history", { node_id: card.id, limit: 1000 }),
      call("remora.proposals.list", { path: card.file_path }),
    ]);
    if (!current()) return; // a later refresh (another node picked, or newer) shows its own
    const mine = proposals.filter((p) => p.node_id === card.id);
    const waiting = card.agent_status === "idle" && card.pending_proposals > 0;
    this.onChanged(card.id, waiting ? "awaiting_review" : card.agent_status);
    const keepChat = this.element.querySelector("#chat-text")?.value || "";
    show(
      this.element,
      this.cardView(card),
      h("h3", {}, "Conversation"),
      this.conversation(history),
      this.chatBox(card.id, keepChat),
      h("h3", {}, `Proposals (${mine.length})`),
      mine.length ? mine.map((p) => this.proposal(p)) : h("p", { class: "hint" }, "None."),
    );
  }

  cardView(card) {
    const refs = (title, list) =>
      list.length ? h("p", { class: "refs" }, h("b", {}, title, ": "), list.map((r, i) => [i ? ", " : "", r.qualified_name || r.name])) : null;
    return h(
      "div",
      { class: "card", dataset: { node: card.id, status: card.agent_status } },
      h("h2", {}, card.qualified_name || card.file_path),
      h(
        "p",
        {},
        h("span", { class: `status ${card.agent_status}`, id: "node-status" }, card.agent_status),
        " ",
        card.kind,
        " · ",
        `${card.file_path}:${card.line + 1}`,
        " · ",
        h("code", {}, card.id),
      ),
      card.parent ? h("p", { class: "refs" }, h("b", {}, "in: "), card.parent.qualified_name || card.parent.file_path) : null,
      refs("calls", card.callees),
      refs("called by", card.callers),
      card.usage
        ? h("p", { class: "refs", id: "node-cost" }, h("b", {}, "cost: "), `${card.usage.tokens} tokens in ${card.usage.runs} runs (${card.usage.requests} requests)`)
        : null,
      card.subscriptions ? this.wakes(card) : null,
    );
  }

  /** What wakes the node's agent, and the person's say in it: mute or
   * unmute, remove one of its own subscriptions, add one. */
  wakes(card) {
    const act = (command, args, done) => async () => {
      try {
        await call(command, { node_id: card.id, ...args });
        toast(done);
      } catch (error) {
        toast(error.message, true);
      }
      await this.refresh();
    };
    const mute = card.muted
      ? h("button", { type: "button", id: "node-mute", onclick: act("remora.node.unmute", {}, "Unmuted: its subscriptions wake it again") }, "Unmute")
      : h("button", { type: "button", id: "node-mute", onclick: act("remora.node.mute", {}, "Muted: only your messages wake it") }, "Mute");
    return h(
      "div",
      { class: "refs", id: "node-wakes" },
      h("b", {}, card.muted ? "wakes: muted — only your messages" : "wakes on:"),
      " ",
      mute,
      h(
        "ul",
        {},
        card.subscriptions.map((sub) =>
          h(
            "li",
            { dataset: { subscription: sub.id } },
            sub.text,
            sub.default ? " (default)" : " (its own)",
            sub.fired ? ` — fired ${sub.fired} runs lately` : "",
            sub.default
              ? null
              : [" ", h("button", { type: "button", class: "remove-sub", onclick: act("remora.subscriptions.remove", { subscription_id: sub.id }, `Removed ${sub.id}`) }, "Remove")],
          ),
        ),
      ),
      this.subscribeForm(card.id),
    );
  }

  /** A new subscription: event types, files, nodes it comes from (each
   * optional; what is given must all match). */
  subscribeForm(nodeId) {
    // What was typed survives the page being redrawn by a live event.
    const field = (name, placeholder) => {
      const input = h("input", { class: `sub-${name}`, placeholder, autocomplete: "off" });
      input.value = this.element.querySelector(`.sub-${name}`)?.value || "";
      return input;
    };
    const types = field("types", "event types");
    const files = field("path", "files, e.g. pkg/*.py");
    const from = field("from", "from nodes");
    const list = (input) => input.value.split(/[\s,]+/).filter(Boolean);
    const subscribe = async () => {
      const pattern = {};
      if (list(types).length) pattern.event_types = list(types);
      if (files.value.trim()) pattern.path_glob = files.value.trim();
      if (list(from).length) pattern.from_agents = list(from);
      try {
        const { subscription_id } = await call("remora.subscriptions.add", { node_id: nodeId, pattern });
        toast(`Subscribed: ${subscription_id}`);
        for (const input of [types, files, from]) input.value = "";
      } catch (error) {
        toast(error.message, true);
        return; // keep what was typed
      }
      await this.refresh();
    };
    return h("div", { class: "subscribe" }, types, files, from, h("button", { type: "button", class: "add-sub", onclick: subscribe }, "Subscribe"));
  }

  conversation(entries) {
    if (!entries.length) return h("p", { class: "hint" }, "Nothing said yet.");
    return h(
      "ol",
      { class: "conversation", id: "conversation" },
      entries.map((entry) => {
        const who = entry.role === "person" ? "you" : entry.role === "agent" ? "agent" : (entry.from && entry.from.name) || "another node";
        return h(
          "li",
          { class: `entry ${entry.role} ${entry.kind}` },
          h("div", { class: "meta" }, who, " · ", entry.kind, " · ", clock(entry.timestamp)),
          h("div", { class: "text" }, entry.text),
        );
      }),
    );
  }

  chatBox(nodeId, text) {
    const input = h("textarea", { id: "chat-text", rows: 2, placeholder: "Ask this node's agent…" });
    input.value = text;
    const send = async () => {
      const message = input.value.trim();
      if (!message) return;
      try {
        const { run_id } = await call("remora.agent.chat", { node_id: nodeId, message });
        input.value = "";
        toast(`Asked: ${run_id}`);
      } catch (error) {
        toast(error.message, true);
      }
    };
    return h("div", { class: "chat" }, input, h("button", { type: "button", id: "chat-send", onclick: send }, "Ask"));
  }

  proposal(p) {
    const pending = p.status === "pending";
    const checks = (p.checks || []).map((c) =>
      h("li", { class: c.ok === true ? "ok" : c.ok === false ? "bad" : "" }, c.name, ": ", c.status, c.detail ? ` — ${c.detail}` : ""),
    );
    const feedback = h("textarea", { class: "feedback", rows: 2, placeholder: "What should the agent do differently? (empty: reject without a retry)" });
    feedback.value = this.drafts.get(p.id) || "";
    feedback.addEventListener("input", () => this.drafts.set(p.id, feedback.value));
    return h(
      "div",
      { class: `proposal ${p.status}`, dataset: { proposal: p.id } },
      h("div", { class: "meta" }, h("code", {}, p.id), " · ", h("span", { class: `status ${p.status}` }, p.status), " · ", clock(p.created_at)),
      p.reasoning ? h("p", { class: "reasoning" }, p.reasoning) : null,
      diffView(p.diff),
      checks.length ? h("ul", { class: "checks" }, checks) : null,
      p.feedback ? h("p", { class: "feedback-given" }, h("b", {}, "feedback: "), p.feedback) : null,
      pending
        ? h(
            "div",
            { class: "decide" },
            h("button", { type: "button", class: "accept", onclick: () => this.accept(p.id) }, "Accept"),
            feedback,
            h("button", { type: "button", class: "reject", onclick: () => this.reject(p.id, feedback.value) }, "Reject"),
          )
        : null,
    );
  }

  async accept(proposalId) {
    try {
      const result = await call("remora.proposal.accept", { proposal_id: proposalId });
      toast(result.applied ? `Accepted ${proposalId}: applied` : `Not applied: ${result.reason}`, !result.applied);
    } catch (error) {
      toast(error.message, true);
    }
    await this.refresh();
  }

  async reject(proposalId, text) {
    const feedback = text.trim();
    try {
      const { run_id } = await call("remora.proposal.reject", { proposal_id: proposalId, feedback, retry: Boolean(feedback) });
      this.drafts.delete(proposalId);
      toast(run_id ? `Rejected; the agent retries as ${run_id}` : "Rejected; no feedback, so no retry");
    } catch (error) {
      toast(error.message, true);
    }
    await this.refresh();
  }
}
