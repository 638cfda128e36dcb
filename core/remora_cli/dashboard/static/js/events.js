// The event stream, newest first, filtered by type (agent_* for a prefix) and
// node. Events arrive many a second in a busy swarm: they are kept in a
// bounded list, and once a frame at most the new ones are added to the DOM.

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
    this.filters = null; // the filters the list was drawn with (null: redraw it whole)
    this.drawnUpTo = 0; // the newest seq drawn
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

  /** Draw the list: whole when it is shown or its filters change, else only
   * the rows of the events that arrived since (a busy swarm adds a few a
   * frame; redrawing 300 rows each time would be most of the page's work). */
  render() {
    if (this.list.offsetParent === null) {
      this.filters = null; // hidden: drawn whole when shown
      return;
    }
    const type = this.typeInput.value.trim();
    const node = this.nodeInput.value.trim();
    const filters = `${type}\n${node}`;
    const newest = this.events.length ? this.events[this.events.length - 1].seq : 0;
    const whole = filters !== this.filters;
    const rows = [];
    for (let i = this.events.length - 1; i >= 0 && rows.length < SHOWN; i--) {
      const event = this.events[i];
      if (!whole && event.seq <= this.drawnUpTo) break;
      if (type && !matchesType(event.type, type)) continue;
      if (node && ![...nodesOf(event)].some((id) => id.startsWith(node))) continue;
      rows.push(row(event));
    }
    this.filters = filters;
    this.drawnUpTo = newest;
    if (whole) {
      show(this.list, rows);
      return;
    }
    this.list.prepend(...rows);
    while (this.list.childElementCount > SHOWN) this.list.lastElementChild.remove();
  }
}

function row(event) {
  return h(
    "li",
    { dataset: { seq: event.seq, type: event.type } },
    h("span", { class: "seq" }, event.seq),
    h("span", { class: "when" }, clock(event.timestamp)),
    h("span", { class: "type" }, event.type),
    h("span", { class: "what" }, summary(event)),
  );
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
