// The project's nodes as a graph (sigma.js on graphology, vendored): files,
// classes, functions and methods, containment and calls, each node coloured
// by its agent's state. The layout is computed here in one pass (no
// iterative force layout: a 10,000-node project must paint in well under two
// seconds): files on a sunflower spiral in path order — a package's modules
// sit together — and each definition on a small spiral around its container.

import { call } from "./api.js";
import { COLOURS, FILE_COLOUR, known } from "./agents.js";

const PAGE = 5000;
const FILE_SIZE = 10;
const CHILD_SCALE = 0.4;
const GOLDEN = Math.PI * (3 - Math.sqrt(5));
const CALL_COLOUR = "#829ab1";
const CONTAINS_COLOUR = "#d9e2ec";
const BATCH_MS = 100;
const GRAPH_SHARE = 10; // recolouring takes at most a tenth of the page's time
const DRAWN_MS = 3000;

export class GraphView {
  constructor(container, onPick) {
    this.container = container;
    this.onPick = onPick;
    this.graph = new graphology.Graph({ multi: false, type: "directed" });
    this.renderer = null;
    this.selected = null;
    this.pending = new Map(); // node id -> state, not drawn yet
    this.recolouring = false;
  }

  /** Load every page of the node graph and paint it; how long it took (ms). */
  async load() {
    const started = performance.now();
    const nodes = [];
    const calls = [];
    let offset = 0;
    while (offset !== null) {
      const page = await call("remora.nodes.graph", { offset, limit: PAGE });
      nodes.push(...page.nodes);
      calls.push(...page.calls);
      offset = page.next_offset;
    }
    this.build(nodes, calls);
    await nextFrame();
    return { ms: performance.now() - started, nodes: nodes.length, calls: calls.length };
  }

  build(nodes, calls) {
    const graph = this.graph;
    graph.clear();
    const children = new Map();
    for (const node of nodes) {
      const parent = node.parent_id || "";
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(node);
    }
    const files = children.get("") || [];
    const layout = new Map(); // id -> [dx, dy] from its container
    const extents = files.map((file) => arrange(file, FILE_SIZE, children, layout));
    const spacing = spread(extents.reduce((a, b) => Math.max(a, b), 1));
    files.forEach((file, i) => {
      const radius = spacing * Math.sqrt(i);
      this.place(file, radius * Math.cos(i * GOLDEN), radius * Math.sin(i * GOLDEN), FILE_SIZE, children, layout);
    });
    // Definitions whose container is not in the graph (an orphaned parent).
    for (const node of nodes) {
      if (graph.hasNode(node.id)) continue;
      arrange(node, FILE_SIZE / 2, children, layout);
      this.place(node, 0, 0, FILE_SIZE / 2, children, layout);
    }
    for (const node of nodes) {
      if (node.parent_id && graph.hasNode(node.parent_id) && !graph.hasEdge(node.parent_id, node.id)) {
        graph.addDirectedEdge(node.parent_id, node.id, { color: CONTAINS_COLOUR, size: 0.5 });
      }
    }
    for (const [from, to] of calls) {
      if (graph.hasNode(from) && graph.hasNode(to) && from !== to && !graph.hasEdge(from, to)) {
        graph.addDirectedEdge(from, to, { color: CALL_COLOUR, size: 1, type: "arrow" });
      }
    }
    if (!this.renderer) {
      this.renderer = new Sigma(graph, this.container, {
        labelRenderedSizeThreshold: 6,
        // Sizes in the layout's units: zooming in spreads a module out
        // instead of swelling its discs into each other.
        itemSizesReference: "positions",
        zoomToSizeRatioFunction: (ratio) => ratio,
        defaultEdgeType: "line",
        zIndex: true,
      });
      this.renderer.on("clickNode", ({ node }) => this.onPick(node));
    } else {
      this.renderer.refresh();
    }
  }

  place(node, x, y, size, children, layout) {
    this.graph.addNode(node.id, {
      x,
      y,
      size,
      label: node.kind === "file" ? node.file_path : node.name,
      color: colour(node.kind, node.agent_status),
      kind: node.kind,
      status: node.agent_status,
      name: node.qualified_name,
      path: node.file_path,
      zIndex: node.kind === "file" ? 0 : 1,
    });
    known(node.id, node.agent_status);
    for (const child of children.get(node.id) || []) {
      const [dx, dy] = layout.get(child.id);
      this.place(child, x + dx, y + dy, size * CHILD_SCALE, children, layout);
    }
  }

  /** Recolour a node for its agent's new state: at once when the graph is
   * quiet; in a flood of events, in batches, each once the last one is drawn
   * and the page has had several times as long for everything else (the wait
   * doubles from BATCH_MS while changes keep coming, up to GRAPH_SHARE - 1
   * times what drawing took). Every recolouring redraws the whole graph —
   * milliseconds with a GPU, about a second for 10,000 nodes in software
   * WebGL on a busy machine — and the event list, the panels and the rest
   * of the page are only painted between. */
  setState(nodeId, status) {
    if (!this.graph.hasNode(nodeId)) return;
    if (this.state(nodeId) === status) return; // nothing to redraw
    this.pending.set(nodeId, status);
    if (!this.recolouring) this.recolour();
  }

  async recolour() {
    this.recolouring = true;
    try {
      for (let pressure = 0; this.pending.size; pressure++) {
        const batch = this.pending;
        this.pending = new Map();
        for (const [nodeId, status] of batch) {
          if (!this.graph.hasNode(nodeId)) continue;
          const kind = this.graph.getNodeAttribute(nodeId, "kind");
          this.graph.mergeNodeAttributes(nodeId, { status, color: colour(kind, status) });
        }
        const cost = await drawn(this.renderer);
        await sleep(Math.max(BATCH_MS, Math.min(cost * (GRAPH_SHARE - 1), BATCH_MS * 2 ** pressure)));
      }
    } finally {
      this.recolouring = false;
    }
  }

  state(nodeId) {
    if (this.pending.has(nodeId)) return this.pending.get(nodeId);
    return this.graph.hasNode(nodeId) ? this.graph.getNodeAttribute(nodeId, "status") : null;
  }

  /** Nodes whose name, path or id contains every word of `query`. */
  search(query, limit = 20) {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) return [];
    const found = [];
    this.graph.forEachNode((id, a) => {
      if (found.length >= limit) return;
      const text = `${id} ${a.path} ${a.name}`.toLowerCase();
      if (words.every((w) => text.includes(w))) found.push({ id, ...a });
    });
    return found;
  }

  /** Centre on a node (a module: its definitions fill the view) and mark it. */
  focus(nodeId) {
    if (!this.renderer || !this.graph.hasNode(nodeId)) return;
    if (this.selected && this.graph.hasNode(this.selected)) {
      this.graph.setNodeAttribute(this.selected, "highlighted", false);
    }
    this.selected = nodeId;
    this.graph.setNodeAttribute(nodeId, "highlighted", true);
    const at = this.renderer.getNodeDisplayData(nodeId);
    if (!at) return;
    // Close enough to read a module's definitions, whatever the project's size.
    const near = Math.min(1, Math.sqrt(60 / this.graph.order));
    const ratio = this.graph.getNodeAttribute(nodeId, "kind") === "file" ? 2 * near : near;
    this.renderer.getCamera().animate({ x: at.x, y: at.y, ratio }, { duration: 400 });
  }

  /** Back to the whole project. */
  reset() {
    this.renderer?.getCamera().animatedReset({ duration: 400 });
  }
}

/** Lay out `node`'s definitions around it (each on a sunflower spiral far
 * enough out for their own definitions not to overlap); `node`'s radius with
 * all of them. Offsets go to `layout`. */
function arrange(node, size, children, layout) {
  const inside = children.get(node.id) || [];
  if (!inside.length) return size;
  const extents = inside.map((child) => arrange(child, size * CHILD_SCALE, children, layout));
  const widest = extents.reduce((a, b) => Math.max(a, b), 0);
  const step = spread(widest);
  const first = Math.ceil(((size + widest) / step) ** 2);
  inside.forEach((child, j) => {
    const radius = step * Math.sqrt(first + j);
    const angle = (first + j) * GOLDEN;
    layout.set(child.id, [radius * Math.cos(angle), radius * Math.sin(angle)]);
  });
  return step * Math.sqrt(first + inside.length - 1) + widest;
}

/** The spiral's step for discs of radius `extent` not to overlap (its
 * nearest neighbours are about 1.7 steps apart), with a little air. */
function spread(extent) {
  return (2.4 * extent) / 1.7;
}

function colour(kind, status) {
  if (kind === "file" && (!status || status === "idle")) return FILE_COLOUR;
  return COLOURS[status] || COLOURS.idle;
}

/** Once sigma has drawn the graph and the browser its next frame: how long
 * that took from the start of sigma's drawing (ms); BATCH_MS if nothing was
 * drawn within DRAWN_MS. */
function drawn(renderer) {
  if (!renderer) return Promise.resolve(BATCH_MS);
  return new Promise((resolve) => {
    let started = 0;
    const begin = () => (started = performance.now());
    const done = () => {
      clearTimeout(timer);
      renderer.removeListener("beforeRender", begin);
      renderer.removeListener("afterRender", done);
      if (!started) resolve(BATCH_MS);
      else requestAnimationFrame(() => resolve(performance.now() - started));
    };
    const timer = setTimeout(done, DRAWN_MS);
    renderer.on("beforeRender", begin);
    renderer.on("afterRender", done);
  });
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function nextFrame() {
  return new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
}
