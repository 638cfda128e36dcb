/**
 * The Proposals view's data: every pending proposal of the project (as
 * `remora.proposals.list {status: "pending"}` lists them) grouped by file, each
 * with its checks; graph runs that still have pending proposals (for "Accept
 * all"); and what to say after accepting several (`remora.proposals.accept`
 * answers one result per proposal). Pure.
 */
import type { MemberLike } from "./changeSetModel";

export interface CheckLike {
  name?: string;
  ok?: boolean | null;
  detail?: string;
  status?: string;
}

export interface ListedProposal {
  id: string;
  node_id?: string;
  node?: string | null;
  kind?: string;
  file_path?: string;
  uri?: string;
  start_byte?: number;
  diff?: string;
  reasoning?: string;
  created_at?: number;
  checks?: CheckLike[];
  status?: string;
  /** A change set's: what it does, its edits, which needs which (`[i, j]`: i needs j). */
  summary?: string;
  members?: MemberLike[];
  depends_on?: unknown;
}

export interface FileGroup {
  filePath: string;
  uri: string | undefined;
  proposals: ListedProposal[];
}

export interface GraphRunLike {
  graph_run_id: string;
  name?: string;
  status?: string;
  proposals?: unknown;
  started_at?: number;
}

export interface AppliedLike {
  proposal_id?: string;
  applied?: boolean;
  reason?: string;
}

export function isListedProposal(value: unknown): value is ListedProposal {
  return typeof value === "object" && value !== null && typeof (value as { id?: unknown }).id === "string";
}

/** Proposals grouped by file (files by path), each file's in source order; a
 * change set spans files: it is an item of its own (`changeSets`). */
export function groupByFile(proposals: readonly ListedProposal[]): FileGroup[] {
  const groups = new Map<string, FileGroup>();
  for (const proposal of proposals) {
    if (proposal.kind === "change_set") continue;
    const filePath = proposal.file_path ?? "(unknown file)";
    const group = groups.get(filePath) ?? { filePath, uri: proposal.uri, proposals: [] };
    group.proposals.push(proposal);
    groups.set(filePath, group);
  }
  const sorted = [...groups.values()].sort((a, b) => a.filePath.localeCompare(b.filePath));
  for (const group of sorted) group.proposals.sort((a, b) => (a.start_byte ?? 0) - (b.start_byte ?? 0));
  return sorted;
}

/** The node's name as the person knows it. */
export function proposalLabel(proposal: ListedProposal): string {
  return proposal.node ?? proposal.node_id ?? proposal.id;
}

/** Lines added and removed, from the unified diff. */
export function diffCounts(diff: string | undefined): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of (diff ?? "").split("\n")) {
    if (line.startsWith("+") && !line.startsWith("+++")) added += 1;
    else if (line.startsWith("-") && !line.startsWith("---")) removed += 1;
  }
  return { added, removed };
}

/** A check's state in one word. */
export function checkState(check: CheckLike): "passed" | "failed" | "pending" {
  return check.ok === true ? "passed" : check.ok === false ? "failed" : "pending";
}

/** The checks in one line: "✓ intent · ✗ tests". */
export function checksLine(checks: readonly CheckLike[] | undefined): string {
  const mark = { passed: "✓", failed: "✗", pending: "…" } as const;
  return (checks ?? []).map((c) => `${mark[checkState(c)]} ${c.name ?? "check"}`).join(" · ");
}

/** The description beside a proposal: "+3 −1 · ✓ intent · ✗ tests". */
export function describeProposal(proposal: ListedProposal): string {
  const { added, removed } = diffCounts(proposal.diff);
  const kind = proposal.kind === "new_node" ? "new node · " : proposal.kind === "new_file" ? "new file · " : "";
  const checks = checksLine(proposal.checks);
  return `${kind}+${added} −${removed}${checks ? ` · ${checks}` : ""}`;
}

/** A graph run's proposal ids (its status holds `{node_id: proposal_id}`). */
export function graphRunProposalIds(run: GraphRunLike): string[] {
  const proposals = run.proposals;
  if (Array.isArray(proposals)) return proposals.filter((p): p is string => typeof p === "string");
  if (typeof proposals === "object" && proposals !== null) {
    return Object.values(proposals).filter((p): p is string => typeof p === "string");
  }
  return [];
}

/** Graph runs with proposals still pending, each with those ids (newest first, as listed). */
export function runsWithPending(
  runs: readonly GraphRunLike[],
  pending: ReadonlySet<string>,
): { run: GraphRunLike; proposalIds: string[] }[] {
  return runs
    .map((run) => ({ run, proposalIds: graphRunProposalIds(run).filter((id) => pending.has(id)) }))
    .filter((entry) => entry.proposalIds.length > 0);
}

/** The change sets among the pending proposals (newest first, as listed). */
export function changeSets(proposals: readonly ListedProposal[]): ListedProposal[] {
  return proposals.filter((p) => p.kind === "change_set");
}

/** The pending proposals of one file (by its URI or project path); a change
 * set counts in each file it edits. */
export function countForFile(proposals: readonly ListedProposal[], uri: string): number {
  return proposals.filter((p) => p.uri === uri || (p.kind === "change_set" && (p.members ?? []).some((m) => m.path !== undefined && uri.endsWith(`/${m.path}`)))).length;
}

/**
 * What to tell the person after accepting several: how many landed, and the
 * others grouped by reason ("stale: the file changed since (pr_a, pr_b)").
 */
export function acceptSummary(results: readonly AppliedLike[]): { message: string; failed: number } {
  const applied = results.filter((r) => r.applied === true).length;
  const byReason = new Map<string, string[]>();
  for (const result of results) {
    if (result.applied === true) continue;
    const reason = result.reason || "not applied";
    byReason.set(reason, [...(byReason.get(reason) ?? []), result.proposal_id ?? "?"]);
  }
  const failed = results.length - applied;
  const parts = [...byReason].map(([reason, ids]) => `${reason} (${ids.join(", ")})`);
  const head = `Remora: accepted ${applied} of ${results.length} proposal${results.length === 1 ? "" : "s"}`;
  return { message: failed === 0 ? `${head}.` : `${head}; not applied: ${parts.join("; ")}.`, failed };
}

/** The status-bar text for the open file: "$(git-pull-request) 2 proposals here". */
export function fileStatusText(count: number): string {
  return `$(git-pull-request) ${count} proposal${count === 1 ? "" : "s"} here`;
}
