// Wiring: tabs, the graph, the panels, and the live event stream that keeps
// them current (a node's colour at once; panels refreshed soon after).

import { call, follow } from "./api.js";
import { COLOURS } from "./agents.js";
import { awaiting, nodesOf, stateAfter } from "./agents.js";
import { debounce, h, show, toast } from "./dom.js";
import { EventsPanel } from "./events.js";
import { GraphView } from "./graph.js";
import { GraphRunsPanel } from "./graphruns.js";
import { NodePanel } from "./node.js";
import { RunsPanel } from "./runs.js";

const $ = (id) => document.getElementById(id);
const REFRESH_MS = 150;

const graph = new GraphView($("graph"), pick);
const nodePanel = new NodePanel($("tab-node"), (id, status) => graph.setState(id, status));
const runs = new RunsPanel($("tab-runs"), pick);
const events = new EventsPanel($("event-list"), $("event-type"), $("event-node"));
const graphRuns = new GraphRunsPanel($("tab-graph-runs"), pick);

function tab(name) {
  for (const button of document.querySelectorAll("nav button")) button.classList.toggle("active", button.dataset.tab === name);
  for (const pane of document.querySelectorAll(".tab")) pane.hidden = pane.id !== `tab-${name}`;
  if (name === "events") events.render();
}

async function pick(nodeId) {
  tab("node");
  graph.focus(nodeId);
  try {
    await nodePanel.open(nodeId);
    graph.focus(nodePanel.nodeId);
  } catch (error) {
    toast(error.message, true);
  }
}

const quietly = (work) => () => work().catch((error) => toast(error.message, true));
const refreshRuns = debounce(quietly(() => runs.refresh()), REFRESH_MS);
const refreshNode = debounce(quietly(() => nodePanel.refresh()), REFRESH_MS);
const refreshGraphRuns = debounce(quietly(() => graphRuns.refresh()), REFRESH_MS * 3);
const reloadGraph = debounce(quietly(() => graph.load().then(paintNote).then(markAwaiting)), 2000);

function onEvent(event) {
  events.add(event);
  window.remoraLastSeq = event.seq; // how far the page has got (tests, console)
  const state = stateAfter(event);
  const about = nodesOf(event);
  if (state) for (const id of [event.agent_id || event.node_id]) if (id) graph.setState(id, state);
  if (event.type.startsWith("agent_") || event.type.startsWith("rewrite_") || event.type === "human_chat") refreshRuns();
  if (nodePanel.nodeId && [...about].some((id) => id === nodePanel.nodeId || id.startsWith(nodePanel.nodeId))) refreshNode();
  if (event.type.startsWith("graph_")) refreshGraphRuns();
  // Nodes added, removed or orphaned (a definition deleted: its history is
  // kept, but it is no longer in the code): the graph is read again.
  if (event.type === "topology_changed" && ["added", "removed", "orphaned"].some((k) => (event[k] || []).length)) reloadGraph();
}

/** Back after the server was gone: the events missed meanwhile arrive on
 * the stream; what they do not say (a run the stop interrupted, nodes edited
 * while no server ran) is read again. */
function caughtUp() {
  quietly(() => runs.refresh())();
  quietly(() => graphRuns.refresh())();
  quietly(() => nodePanel.refresh())();
  quietly(() => graph.load().then(paintNote).then(markAwaiting))();
}

function paintNote({ ms, nodes, calls }) {
  // For a person's console and the browser tests: what was painted, how fast,
  // and the graph itself (each node's colour and state).
  window.remoraGraphPaint = { ms, nodes, calls };
  window.remoraGraph = graph.graph;
  show($("graph-status"), `${nodes} nodes, ${calls} calls · painted in ${Math.round(ms)} ms`);
  document.body.dataset.graph = "painted";
}

/** Nodes with proposals waiting for the person look it (the engine's own
 * state says only whether the agent is idle). */
async function markAwaiting() {
  const pending = await call("remora.proposals.list", { status: "pending" });
  for (const nodeId of awaiting(pending)) if (graph.state(nodeId) === "idle") graph.setState(nodeId, "awaiting_review");
}

function legend() {
  show(
    $("legend"),
    Object.entries(COLOURS).map(([status, colour]) => h("span", { class: "key" }, h("i", { class: `dot ${status}` }), status.replace("_", " "))),
  );
}

function searchBox() {
  const input = $("search");
  const results = $("search-results");
  input.addEventListener("input", () => {
    const found = graph.search(input.value);
    results.hidden = !found.length;
    show(
      results,
      found.map((node) =>
        h(
          "li",
          {},
          h("a", { href: "#", dataset: { node: node.id }, onclick: (e) => (e.preventDefault(), (results.hidden = true), pick(node.id)) }, node.name || node.path),
          h("span", { class: "where" }, ` ${node.kind} · ${node.path}`),
        ),
      ),
    );
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") results.querySelector("a")?.click();
    if (e.key === "Escape") results.hidden = true;
  });
}

async function start() {
  for (const button of document.querySelectorAll("nav button")) button.addEventListener("click", () => tab(button.dataset.tab));
  $("zoom-out").addEventListener("click", () => graph.reset());
  legend();
  searchBox();
  const recent = await call("remora.events.list", { limit: 300 });
  for (const event of recent) events.add(event);
  const since = recent.length ? recent[recent.length - 1].seq : (await call("remora.events.last_seq", {})).seq;
  follow(since, onEvent, (state, resumed) => {
    show($("connection"), state === "live" ? "live" : "reconnecting…");
    $("connection").className = `pill ${state}`;
    document.body.dataset.stream = state;
    if (resumed) caughtUp();
  });
  await Promise.all([
    runs.refresh(),
    graphRuns.refresh(),
    graph.load().then(paintNote).then(markAwaiting),
  ]);
}

start().catch((error) => toast(`The dashboard could not start: ${error.message}`, true));
