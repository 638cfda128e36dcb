// The runs panel: queued, running, waiting for the person, then the latest
// ended runs — trigger, outcome, time — with Cancel for what is not over.

import { call } from "./api.js";
import { clock, h, latestOnly, show, took, toast } from "./dom.js";

const LIVE = new Set(["queued", "running", "waiting"]);

export class RunsPanel {
  constructor(element, onPick) {
    this.element = element;
    this.onPick = onPick;
    this.turn = latestOnly();
  }

  async refresh() {
    const current = this.turn();
    const runs = await call("remora.runs.list", { limit: 100 });
    const live = runs.filter((r) => LIVE.has(r.status));
    const ended = runs.filter((r) => !LIVE.has(r.status));
    const count = (status) => live.filter((r) => r.status === status).length;
    const today = await call("remora.usage", { since: "today", limit: 1 }).catch(() => null);
    const spent = today ? ` · today ${today.total.tokens} tokens, ${today.total.runs} runs, ${seconds(today.total.seconds)}` : "";
    if (!current()) return; // a later refresh shows what is newer
    show(document.getElementById("totals"), `running ${count("running")} · queued ${count("queued")} · waiting for you ${count("waiting")}${spent}`);
    show(
      this.element,
      h("h2", {}, `Now (${live.length})`),
      live.length ? this.table(live) : h("p", { class: "hint" }, "No agent is running."),
      h("h2", {}, "Recent"),
      ended.length ? this.table(ended.slice(0, 50)) : h("p", { class: "hint" }, "No run yet."),
    );
  }

  table(runs) {
    return h(
      "table",
      { class: "runs" },
      h("tr", {}, h("th", {}, "node"), h("th", {}, "status"), h("th", {}, "trigger"), h("th", {}, "outcome"), h("th", {}, "started"), h("th", {}, "time"), h("th", {}, "tokens"), h("th", {})),
      runs.map((run) =>
        h(
          "tr",
          { dataset: { run: run.id || "", status: run.status } },
          h("td", {}, h("a", { href: "#", dataset: { node: run.node.id }, onclick: (e) => (e.preventDefault(), this.onPick(run.node.id)) }, run.node.name || run.node.id)),
          h("td", {}, h("span", { class: `status ${run.status}` }, run.status)),
          h("td", { title: run.trigger.text }, run.trigger.kind, ": ", short(run.trigger.text), run.trigger.subscription ? ` (by ${run.trigger.subscription.text})` : ""),
          h("td", { title: run.outcome || "" }, short(run.outcome || "")),
          h("td", {}, clock(run.started_at || run.queued_at)),
          h("td", {}, took(run.started_at, run.ended_at)),
          h("td", { class: "tokens" }, run.usage ? String(run.usage.tokens) : ""),
          h("td", {}, run.id && LIVE.has(run.status) ? h("button", { type: "button", class: "cancel", onclick: () => cancel(run.id) }, "Cancel") : ""),
        ),
      ),
    );
  }
}

async function cancel(runId) {
  try {
    const { cancelled } = await call("remora.agent.cancel", { run_id: runId });
    toast(cancelled ? `Cancelled ${runId}` : `${runId} had already ended`);
  } catch (error) {
    toast(error.message, true);
  }
}

function short(text) {
  const line = String(text).split("\n")[0];
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

function seconds(value) {
  const s = Number(value) || 0;
  return s < 60 ? `${s.toFixed(1)} s` : `${Math.round(s / 60)} min`;
}
