// The event stream, newest first, filtered by type (agent_* for a prefix) and
// node. Events arrive many a second in a busy swarm: they are kept in a
// bounded list and the DOM is redrawn at most once a frame.

import { clock, h, show } from "./dom.js";
import { nodesOf } from "./agents.js";

const KEEP = 2000;
const SHOWN = 300;

export class EventsPanel {
  constructor(list, typeInput, nodeInput) {
    this.list = list;
    this.typeInput = typeInput;
    this.nodeInput = nodeInput;
    this.events = [];
    this.scheduled = false;
    typeInput.addEventListener("input", () => this.schedule());
    nodeInput.addEventListener("input", () => this.schedule());
  }

  add(event) {
    this.events.push(event);
    if (this.events.length > KEEP) this.events.splice(0, this.events.length - KEEP);
    this.schedule();
  }

  schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      this.render();
    });
  }

  render() {
    if (this.list.offsetParent === null) return; // hidden: drawn when shown
    const type = this.typeInput.value.trim();
    const node = this.nodeInput.value.trim();
    const rows = [];
    for (let i = this.events.length - 1; i >= 0 && rows.length < SHOWN; i--) {
      const event = this.events[i];
      if (type && !matchesType(event.type, type)) continue;
      if (node && ![...nodesOf(event)].some((id) => id.startsWith(node))) continue;
      rows.push(
        h(
          "li",
          { dataset: { seq: event.seq, type: event.type } },
          h("span", { class: "seq" }, event.seq),
          h("span", { class: "when" }, clock(event.timestamp)),
          h("span", { class: "type" }, event.type),
          h("span", { class: "what" }, summary(event)),
        ),
      );
    }
    show(this.list, rows);
  }
}

function matchesType(actual, wanted) {
  return wanted.endsWith("*") ? actual.startsWith(wanted.slice(0, -1)) : actual === wanted;
}

/** One line of what the event says. */
function summary(event) {
  const who = event.agent_id || event.node_id || event.to_agent || "";
  const said = event.message || event.result || event.error || event.question || event.reason || event.feedback || event.path || event.tool || event.name || "";
  const text = String(said).replace(/\s+/g, " ");
  return `${who} ${text.length > 160 ? `${text.slice(0, 159)}…` : text}`.trim();
}
