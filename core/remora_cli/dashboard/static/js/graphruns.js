// Graph runs (batch work, DESIGN §10): the latest runs and, for the one
// picked, its steps × nodes with each outcome.

import { call } from "./api.js";
import { clock, h, latestOnly, show, toast } from "./dom.js";

export class GraphRunsPanel {
  constructor(element, onPickNode) {
    this.element = element;
    this.onPickNode = onPickNode;
    this.open = null;
    this.turn = latestOnly();
  }

  async refresh() {
    const current = this.turn();
    const runs = await call("remora.graph.runs", { limit: 20 });
    const status = this.open ? await call("remora.graph.status", { graph_run_id: this.open }) : null;
    if (!current()) return; // a later refresh shows what is newer
    show(
      this.element,
      h("h2", {}, "Graph runs"),
      runs.length
        ? h(
            "table",
            { class: "graph-runs" },
            h("tr", {}, h("th", {}, "run"), h("th", {}, "graph"), h("th", {}, "status"), h("th", {}, "outcomes"), h("th", {}, "started"), h("th", {})),
            runs.map((run) =>
              h(
                "tr",
                {},
                h("td", {}, h("a", { href: "#", onclick: (e) => (e.preventDefault(), this.show(run.graph_run_id)) }, run.graph_run_id)),
                h("td", {}, run.name),
                h("td", {}, h("span", { class: `status ${run.status}` }, run.status)),
                h("td", {}, counts(run.counts)),
                h("td", {}, clock(run.started_at)),
                h("td", {}, run.status === "running" ? h("button", { type: "button", onclick: () => cancel(run.graph_run_id) }, "Cancel") : ""),
              ),
            ),
          )
        : h("p", { class: "hint" }, "No graph run yet (remora graph run NAME)."),
      status ? this.steps(status) : null,
    );
  }

  async show(graphRunId) {
    this.open = graphRunId;
    await this.refresh();
  }

  steps(status) {
    return h(
      "div",
      { class: "graph-status" },
      h("h3", {}, `${status.name} · ${status.graph_run_id} · ${status.status}`),
      status.steps.map((step) =>
        h(
          "div",
          { class: "step" },
          h("h4", {}, step.step),
          h(
            "ul",
            {},
            Object.entries(step.nodes).map(([node, outcome]) =>
              h("li", {}, h("a", { href: "#", onclick: (e) => (e.preventDefault(), this.onPickNode(node)) }, node), " ", h("span", { class: `status ${outcome}` }, outcome)),
            ),
          ),
        ),
      ),
    );
  }
}

function counts(counted) {
  return Object.entries(counted || {})
    .map(([outcome, n]) => `${outcome} ${n}`)
    .join(", ");
}

async function cancel(graphRunId) {
  try {
    await call("remora.graph.cancel", { graph_run_id: graphRunId });
    toast(`Cancelled ${graphRunId}`);
  } catch (error) {
    toast(error.message, true);
  }
}
