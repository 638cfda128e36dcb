// Agents' states: the colours of the graph, and how events move a node from
// one state to the next (so the page changes at once, without asking).

export const COLOURS = {
  idle: "#9aa5b1",
  running: "#1f7ae0",
  blocked: "#e8a317",
  awaiting_review: "#9b51e0",
  error: "#d64545",
};
export const FILE_COLOUR = "#52606d";

const pending = new Map(); // node id -> pending proposal ids

/** The state `event` puts its node in, or null when it does not change it. */
export function stateAfter(event) {
  const node = event.agent_id || event.node_id;
  switch (event.type) {
    case "agent_started":
    case "agent_resumed":
      return "running";
    case "agent_blocked":
      return "blocked";
    case "agent_failed":
      return "error";
    case "rewrite_proposed":
      add(node, event.proposal_id);
      return "awaiting_review";
    case "rewrite_applied":
    case "rewrite_rejected":
    case "rewrite_stale":
      drop(node, event.proposal_id);
      return waiting(node) ? "awaiting_review" : "idle";
    case "agent_completed":
    case "agent_cancelled":
      return waiting(node) ? "awaiting_review" : "idle";
    default:
      return null;
  }
}

/** What the server said of a node's agent (a fresh load forgets the rest). */
export function known(nodeId, status) {
  if (status === "idle") pending.delete(nodeId);
}

/** The proposals waiting for the person: their nodes await review. */
export function awaiting(proposals) {
  for (const p of proposals) add(p.node_id, p.id);
  return [...pending.keys()];
}

function add(node, proposal) {
  if (!pending.has(node)) pending.set(node, new Set());
  pending.get(node).add(proposal);
}

function drop(node, proposal) {
  const ids = pending.get(node);
  if (!ids) return;
  ids.delete(proposal);
  if (!ids.size) pending.delete(node);
}

function waiting(node) {
  return pending.has(node) && pending.get(node).size > 0;
}

/** The node ids an event concerns. */
export function nodesOf(event) {
  const ids = new Set();
  for (const key of ["agent_id", "node_id", "to_agent", "from_agent"]) if (event[key]) ids.add(event[key]);
  for (const id of event.node_ids || []) ids.add(id);
  return ids;
}
