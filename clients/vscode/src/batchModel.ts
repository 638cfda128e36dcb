/**
 * Batch work as the person sees it: the graph picker's items
 * (`remora.graphs.list`), a graph run's progress from its events, its status
 * as Markdown, and the checkpoint restore's confirmation and outcome. Pure.
 */
export interface GraphListing {
  name: string;
  steps?: string[];
  problems?: string[];
}

export interface GraphPick {
  label: string;
  description: string;
  detail: string | undefined;
  name: string;
  runnable: boolean;
}

export interface CheckpointLike {
  checkpoint_id: string;
  label?: string | null;
  created_at?: number;
  git_head?: string | null;
}

export interface PendingLike {
  id: string;
  node?: string | null;
  node_id?: string;
  file_path?: string;
  created_at?: number;
}

export interface GraphStatusLike {
  graph_run_id: string;
  name?: string;
  status?: string;
  counts?: Record<string, number>;
  steps?: { step: string; nodes: Record<string, string> }[];
  proposals?: unknown;
}

/** One quick-pick item per graph; one that cannot run says why and is not picked. */
export function graphPicks(listing: readonly GraphListing[]): GraphPick[] {
  return listing.map((graph) => {
    const problems = graph.problems ?? [];
    const steps = graph.steps ?? [];
    return {
      label: problems.length > 0 ? `$(error) ${graph.name}` : graph.name,
      description: problems.length > 0 ? "cannot run" : steps.join(" → "),
      detail: problems.length > 0 ? problems.join("; ") : undefined,
      name: graph.name,
      runnable: problems.length === 0,
    };
  });
}

/** A graph run's progress, from its events (`graph_started` says N). */
export class GraphProgress {
  total = 0;
  done = 0;
  outcome: string | undefined;
  counts: Record<string, number> = {};

  constructor(readonly graphRunId: string) {}

  /** Returns true when the event was this run's. */
  update(event: { type: string; [key: string]: unknown }): boolean {
    if (event.graph_run_id !== this.graphRunId) return false;
    if (event.type === "graph_started") {
      const targets = event.targets;
      if (typeof targets === "object" && targets !== null) {
        this.total = Object.values(targets).reduce((n: number, nodes) => n + (Array.isArray(nodes) ? nodes.length : 0), 0);
      }
      if (this.total === 0 && typeof event.node_count === "number") this.total = event.node_count;
    } else if (event.type === "graph_step_finished") {
      this.done += 1;
    } else if (event.type === "graph_completed") {
      this.outcome = typeof event.outcome === "string" ? event.outcome : "completed";
      if (typeof event.counts === "object" && event.counts !== null) this.counts = event.counts as Record<string, number>;
    } else {
      return false;
    }
    return true;
  }

  message(name: string): string {
    return this.total > 0 ? `${name} ${this.done}/${this.total}` : `${name}: starting`;
  }

  /** The percentage one step adds (for VS Code's progress increment). */
  increment(): number {
    return this.total > 0 ? 100 / this.total : 0;
  }
}

/** "completed 4, failed 1". */
export function countsLine(counts: Record<string, number> | undefined): string {
  return Object.entries(counts ?? {})
    .map(([outcome, n]) => `${outcome} ${n}`)
    .join(", ");
}

/** What the person is told when a graph run ends. */
export function completionMessage(name: string, outcome: string, counts: Record<string, number>, pending: number): string {
  const tally = countsLine(counts);
  const review = pending > 0 ? ` ${pending} proposal${pending === 1 ? "" : "s"} to review in the Proposals view.` : "";
  return `Remora: graph ${name} ${outcome}${tally ? ` (${tally})` : ""}.${review}`;
}

/** A graph run's steps × nodes as Markdown (node ids named when known). */
export function statusMarkdown(status: GraphStatusLike, names: ReadonlyMap<string, string> = new Map()): string {
  const lines = [`# Graph ${status.name ?? ""} \`${status.graph_run_id}\``, "", `- status: ${status.status ?? "unknown"}`];
  const tally = countsLine(status.counts);
  if (tally) lines.push(`- outcomes: ${tally}`);
  for (const step of status.steps ?? []) {
    lines.push("", `## Step ${step.step}`, "", "| node | outcome |", "|---|---|");
    for (const [node, outcome] of Object.entries(step.nodes)) lines.push(`| ${names.get(node) ?? node} | ${outcome} |`);
  }
  const proposals = status.proposals;
  if (typeof proposals === "object" && proposals !== null && Object.keys(proposals).length > 0) {
    lines.push("", "## Proposals", "");
    for (const [node, id] of Object.entries(proposals)) lines.push(`- ${names.get(node) ?? node}: \`${String(id)}\``);
  }
  return `${lines.join("\n")}\n`;
}

function clock(seconds: number | undefined): string {
  if (typeof seconds !== "number") return "";
  return new Date(seconds * 1000).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

/** A checkpoint in a list: "before graph docs · 2026-11-27 08:30:00 UTC". */
export function checkpointLabel(checkpoint: CheckpointLike): string {
  const when = clock(checkpoint.created_at);
  return [checkpoint.label || checkpoint.checkpoint_id, when].filter((p) => p !== "").join(" · ");
}

/**
 * The confirmation before a restore: what comes back, which pending proposals
 * made since are withdrawn (by name), and that no project file is written.
 */
export function restoreConfirmation(checkpoint: CheckpointLike, pending: readonly PendingLike[]): string {
  const since = pending.filter((p) => typeof p.created_at === "number" && typeof checkpoint.created_at === "number" && p.created_at > checkpoint.created_at);
  const names = since.map((p) => `${p.node ?? p.node_id ?? p.id}${p.file_path ? ` (${p.file_path})` : ""}`);
  const withdrawn =
    since.length === 0
      ? "No pending proposal was made since."
      : `${since.length} pending proposal${since.length === 1 ? "" : "s"} made since will be withdrawn: ${names.join(", ")}.`;
  return (
    `Restore the agents' state to checkpoint "${checkpointLabel(checkpoint)}"? Every agent's chat history, memory, ` +
    `overlay files and pending proposals go back to then. ${withdrawn} Your project files are not changed.`
  );
}

/** What the person is told after a restore. */
export function restoredMessage(answer: { restored?: boolean; files_differing?: string[] }): string {
  if (!answer.restored) return "Remora: the checkpoint was not restored.";
  const files = answer.files_differing ?? [];
  const differ =
    files.length === 0
      ? "Every project file is as it was then."
      : `${files.length} file${files.length === 1 ? "" : "s"} differ${files.length === 1 ? "s" : ""} from the checkpoint and ${files.length === 1 ? "was" : "were"} left as ${files.length === 1 ? "it is" : "they are"}: ${files.join(", ")}.`;
  return `Remora: agents' state restored (project files are never written by a restore). ${differ}`;
}
