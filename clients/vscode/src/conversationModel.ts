/**
 * A node's conversation as the Conversation view shows it. Pure.
 *
 * Loaded whole from `remora.agent.history` (so it survives a server restart)
 * and followed live from `remora/event`: `entryOf` turns an event into the
 * same entry the server builds (`core/remora_core/history/conversation.py`),
 * merged by event id, ordered by `seq`. Proposals carry their checks (from
 * `rewrite_proposed` / `proposal_checked`, or `remora.proposal.diff` after a
 * load) and their state (the later accepted / rejected / stale entries).
 * `renderConversation` makes the HTML, every model or repository text escaped.
 */
import { type Subscription, type Usage, costText, wakesText } from "./costs";
import { RemoraEvent, checkText, timeOf } from "./eventFormat";

export interface Party {
  id?: string | null;
  name?: string | null;
}

export interface Entry {
  role: "person" | "agent" | "node" | string;
  kind: string;
  text: string;
  run_id?: string | null;
  timestamp?: number;
  seq?: number;
  event_id: string;
  from?: Party;
  to?: Party;
  options?: string[];
  question_id?: string;
  proposal_id?: string | null;
  outcome?: string;
  /** On a run's end: the subscription that woke the run, and the event's type. */
  woken_by?: { id?: string; text?: string; event_type?: string | null };
}

export interface Check {
  name?: string;
  ok?: boolean | null;
  status?: string;
  detail?: string;
}

/** What the view shows about the node itself (from `remora.node.get`). */
export interface CardLike {
  id: string;
  kind?: string;
  name?: string;
  qualified_name?: string;
  file_path?: string;
  line?: number;
  agent_status?: string;
  pending_proposals?: number;
  callers?: { name?: string; qualified_name?: string; id?: string }[];
  callees?: { name?: string; qualified_name?: string; id?: string }[];
  last_answer?: { text?: string; truncated?: boolean; lines?: number } | null;
  /** What all the node's runs cost (stored by the server). */
  usage?: Usage;
  /** A person muted it: only their messages wake it. */
  muted?: boolean;
  subscriptions?: Subscription[];
  /** A person's standing instructions for its agent (Set Node Instructions). */
  instructions?: string | null;
}

const ENDS: Record<string, string> = {
  agent_completed: "answer",
  agent_failed: "failure",
  agent_cancelled: "cancelled",
  run_interrupted: "interrupted",
};

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** The conversation entry an event makes for node `me`, if it is part of it. */
export function entryOf(event: RemoraEvent, me: string): Entry | undefined {
  const e = event as Record<string, unknown>;
  if (typeof event.id !== "string") return undefined;
  if (e.answered_by) return undefined; // a coalesced run's end repeats the turn that answered it
  const base = {
    run_id: typeof event.run_id === "string" ? event.run_id : null,
    timestamp: typeof event.timestamp === "number" ? event.timestamp : undefined,
    seq: typeof event.seq === "number" ? event.seq : undefined,
    event_id: event.id,
  };
  if (event.type === "human_chat") {
    return e.to_agent === me ? { ...base, role: "person", kind: "message", text: str(e.message) } : undefined;
  }
  if (event.type === "agent_message") {
    const tags = Array.isArray(e.tags) ? e.tags : [];
    const kind = e.reply_to ? "reply" : tags.includes("request") ? "request" : "message";
    if (e.to_agent === me) return { ...base, role: "node", kind, text: str(e.message), from: { id: str(e.from_agent), name: str(e.from_name) || null } };
    if (e.from_agent === me) return { ...base, role: "agent", kind, text: str(e.message), to: { id: str(e.to_agent), name: str(e.to_name) || null } };
    return undefined;
  }
  if (e.agent_id !== me && e.node_id !== me) return undefined;
  switch (event.type) {
    case "agent_completed":
      return { ...base, role: "agent", kind: "answer", text: str(e.result) };
    case "agent_failed":
      return { ...base, role: "agent", kind: "failure", text: str(e.error) };
    case "agent_cancelled":
      return { ...base, role: "agent", kind: "cancelled", text: str(e.reason) || "cancelled" };
    case "run_interrupted":
      return { ...base, role: "agent", kind: "interrupted", text: "the server stopped during the run" };
    case "agent_blocked":
      return {
        ...base, role: "agent", kind: "question", text: str(e.question),
        options: Array.isArray(e.options) ? e.options.map(String) : [], question_id: str(e.question_id),
      };
    case "agent_resumed":
      return { ...base, role: "person", kind: "answer_given", text: str(e.answer), question_id: str(e.question_id), outcome: str(e.outcome) || "answered" };
    case "rewrite_proposed":
      return { ...base, role: "agent", kind: "proposal", text: str(e.diff), proposal_id: str(e.proposal_id) };
    case "rewrite_applied":
      return { ...base, role: "person", kind: "accepted", text: "accepted the proposal", proposal_id: str(e.proposal_id) };
    case "rewrite_rejected":
      return { ...base, role: "person", kind: "rejected", text: str(e.feedback) || "rejected the proposal", proposal_id: str(e.proposal_id) };
    case "rewrite_stale":
      return { ...base, role: "agent", kind: "stale", text: str(e.reason) || "the proposal went stale", proposal_id: str(e.proposal_id) };
    default:
      return undefined;
  }
}

const DECISIONS: Record<string, string> = { accepted: "accepted", rejected: "rejected", stale: "stale" };

export class Conversation {
  private readonly entries = new Map<string, Entry>();
  private readonly checks = new Map<string, Check[]>();
  private readonly statuses = new Map<string, string>();
  /** Runs of this node in flight (started, not ended), with their status. */
  readonly running = new Map<string, string>();
  /**
   * The last changes to :attr:`running` followed live, numbered: a read of
   * the runs list that began before one of them answers what was true then
   * (a question asked while the view loaded showed as never asked).
   */
  private runChanges: { n: number; runId: string; status: string | null }[] = [];
  private runChangeCount = 0;

  constructor(readonly nodeId: string) {}

  /** Replace everything with the server's history (oldest first). */
  /**
   * The conversation as the server read it. Entries followed live that are
   * newer than anything it read stay: the read may have begun before they
   * were written (a proposal arriving while the view loads was lost).
   */
  load(entries: readonly Entry[]): void {
    const loaded = new Map<string, Entry>();
    let newest = 0;
    for (const entry of entries) {
      if (!entry || typeof entry.event_id !== "string") continue;
      loaded.set(entry.event_id, entry);
      newest = Math.max(newest, entry.seq ?? 0);
    }
    const live = [...this.entries.values()].filter((e) => !loaded.has(e.event_id) && (e.seq ?? 0) > newest);
    this.entries.clear();
    for (const entry of [...loaded.values(), ...live]) this.entries.set(entry.event_id, entry);
  }

  setProposal(proposalId: string, status: string | undefined, checks: readonly Check[] | undefined): void {
    if (status) this.statuses.set(proposalId, status);
    if (checks) this.checks.set(proposalId, [...checks]);
  }

  /** A mark to pass to {@link setRunsRead} when a read of the runs list begins. */
  runsMark(): number {
    return this.runChangeCount;
  }

  /** The runs in flight as the server listed them, then every change followed
   * live since the read began (``mark``), which the list may not have seen. */
  setRunsRead(runs: readonly { id?: string | null; status?: string }[], mark: number): void {
    this.running.clear();
    for (const run of runs) {
      if (run.id && (run.status === "running" || run.status === "waiting" || run.status === "queued")) this.running.set(run.id, run.status);
    }
    for (const change of this.runChanges) {
      if (change.n <= mark) continue;
      if (change.status === null) this.running.delete(change.runId);
      else this.running.set(change.runId, change.status);
    }
  }

  private followRun(runId: string, status: string | null): void {
    this.runChangeCount += 1;
    this.runChanges.push({ n: this.runChangeCount, runId, status });
    if (this.runChanges.length > 200) this.runChanges.splice(0, this.runChanges.length - 200);
    if (status === null) this.running.delete(runId);
    else this.running.set(runId, status);
  }

  /** Follow one live event; true if what is shown changed. */
  apply(event: RemoraEvent): boolean {
    const e = event as Record<string, unknown>;
    const mine = e.agent_id === this.nodeId || e.node_id === this.nodeId;
    let changed = false;
    const runId = typeof event.run_id === "string" ? event.run_id : undefined;
    if (mine && runId) {
      if (event.type === "agent_started" || event.type === "agent_resumed") {
        this.followRun(runId, "running");
        changed = true;
      } else if (event.type === "agent_blocked") {
        this.followRun(runId, "waiting");
        changed = true;
      } else if (event.type in ENDS) {
        changed = this.running.has(runId) || changed;
        this.followRun(runId, null);
      }
    }
    if (mine && event.type === "rewrite_proposed" && typeof e.proposal_id === "string" && Array.isArray(e.checks)) {
      this.checks.set(e.proposal_id, e.checks as Check[]);
    }
    if (mine && event.type === "proposal_checked" && typeof e.proposal_id === "string" && typeof e.check === "object" && e.check !== null) {
      const check = e.check as Check;
      const list = (this.checks.get(e.proposal_id) ?? []).filter((c) => c.name !== check.name);
      this.checks.set(e.proposal_id, [...list, check]);
      changed = true;
    }
    if (mine && event.type === "rewrite_not_applied" && typeof e.proposal_id === "string") changed = true;
    const entry = entryOf(event, this.nodeId);
    if (entry && !this.entries.has(entry.event_id)) {
      this.entries.set(entry.event_id, entry);
      if (entry.proposal_id && entry.kind in DECISIONS) this.statuses.set(entry.proposal_id, DECISIONS[entry.kind]!);
      changed = true;
    }
    return changed;
  }

  ordered(): Entry[] {
    return [...this.entries.values()].sort((a, b) => (a.seq ?? Number.MAX_SAFE_INTEGER) - (b.seq ?? Number.MAX_SAFE_INTEGER) || (a.timestamp ?? 0) - (b.timestamp ?? 0));
  }

  /** Proposal ids of the conversation, oldest first. */
  proposalIds(): string[] {
    return this.ordered().filter((e) => e.kind === "proposal" && e.proposal_id).map((e) => e.proposal_id!);
  }

  /** pending, accepted, rejected, stale, superseded… (pending until decided). */
  proposalStatus(proposalId: string): string {
    const decided = this.ordered().filter((e) => e.proposal_id === proposalId && e.kind in DECISIONS).pop();
    if (decided) return DECISIONS[decided.kind]!;
    return this.statuses.get(proposalId) ?? "pending";
  }

  checksOf(proposalId: string): Check[] {
    return this.checks.get(proposalId) ?? [];
  }

  /** Whether a question still waits: not answered, its run not ended. */
  isOpen(question: Entry): boolean {
    const all = this.ordered();
    const after = all.slice(all.indexOf(question) + 1);
    if (after.some((e) => e.kind === "answer_given" && e.question_id === question.question_id)) return false;
    if (question.run_id && after.some((e) => e.run_id === question.run_id && Object.values(ENDS).includes(e.kind))) return false;
    return true;
  }

  get size(): number {
    return this.entries.size;
  }
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

function attr(text: string): string {
  return escapeHtml(text);
}

function partyName(party: Party | undefined): string {
  return party?.name || party?.id || "another agent";
}

/** Who said it, as the entry's heading. */
export function speaker(entry: Entry, agentName: string): string {
  const say: Record<string, string> = {
    message: "You",
    answer: agentName,
    failure: `${agentName} failed`,
    cancelled: `${agentName}: run cancelled`,
    interrupted: `${agentName}: run interrupted`,
    question: `${agentName} asks you`,
    answer_given: "Your answer",
    proposal: `${agentName} proposes a change`,
    accepted: "You accepted the proposal",
    rejected: "You rejected the proposal",
    stale: "The proposal went stale",
  };
  if (entry.role === "node") return `${partyName(entry.from)} → ${agentName}${entry.kind === "message" ? "" : ` (${entry.kind})`}`;
  if (entry.role === "agent" && ["message", "request", "reply"].includes(entry.kind)) {
    return `${agentName} → ${partyName(entry.to)}${entry.kind === "message" ? "" : ` (${entry.kind})`}`;
  }
  if (entry.kind === "answer_given" && entry.outcome && entry.outcome !== "answered") return `The question ${entry.outcome.replace("_", " ")}`;
  return say[entry.kind] ?? entry.kind;
}

function diffHtml(diff: string): string {
  const lines = diff.split("\n").map((line) => {
    const cls = line.startsWith("+++") || line.startsWith("---") ? "meta" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "meta" : "";
    return `<span class="${cls}">${escapeHtml(line)}</span>`;
  });
  return `<pre class="diff">${lines.join("\n")}</pre>`;
}

function checksHtml(checks: readonly Check[]): string {
  if (checks.length === 0) return `<div class="checks muted">nothing checked yet</div>`;
  const items = checks.map((c) => {
    const cls = c.ok === true ? "ok" : c.ok === false ? "bad" : "wait";
    const mark = c.ok === true ? "✓" : c.ok === false ? "✗" : "…";
    return `<li class="${cls}">${mark} ${escapeHtml(checkText(c))}</li>`;
  });
  return `<ul class="checks">${items.join("")}</ul>`;
}

function button(action: string, label: string, data: Record<string, string>, primary = false): string {
  const extra = Object.entries(data).map(([k, v]) => ` data-${k}="${attr(v)}"`).join("");
  return `<button class="${primary ? "primary" : "secondary"}" data-action="${action}"${extra}>${escapeHtml(label)}</button>`;
}

function entryHtml(conv: Conversation, entry: Entry, agentName: string): string {
  const classes = ["entry", `role-${entry.role}`, `kind-${entry.kind}`].map((c) => c.replace(/[^\w-]/g, "")).join(" ");
  const when = timeOf(entry.timestamp);
  const woke = entry.woken_by ? ` <span class="muted">(woken by ${escapeHtml(entry.woken_by.text ?? entry.woken_by.id ?? "?")}${entry.woken_by.event_type ? `: ${escapeHtml(entry.woken_by.event_type)}` : ""})</span>` : "";
  const head = `<div class="who">${escapeHtml(speaker(entry, agentName))}${woke}${when ? ` <span class="when">${when}</span>` : ""}</div>`;
  let body: string;
  if (entry.kind === "proposal" && entry.proposal_id) {
    const id = entry.proposal_id;
    const status = conv.proposalStatus(id);
    const actions = [button("diff", "Diff", { proposal: id })];
    if (status === "pending") actions.unshift(button("accept", "Accept", { proposal: id }, true), button("reject", "Reject…", { proposal: id }));
    if (status === "accepted") actions.push(button("revert", "Revert…", { proposal: id }));
    body = `<div class="proposal-head"><code>${escapeHtml(id)}</code> <span class="status status-${attr(status)}">${escapeHtml(status)}</span></div>`
      + diffHtml(entry.text) + checksHtml(conv.checksOf(id)) + `<div class="actions">${actions.join("")}</div>`;
  } else if (entry.kind === "question") {
    body = `<div class="text">${escapeHtml(entry.text)}</div>`;
    if (entry.question_id && conv.isOpen(entry)) {
      const q = entry.question_id;
      const options = (entry.options ?? []).map((o) => button("answer", o, { question: q, answer: o }, true));
      body += options.length > 0
        ? `<div class="actions">${options.join("")}</div>`
        : `<div class="reply"><input type="text" data-question="${attr(q)}" placeholder="Your answer"/>${button("answer", "Answer", { question: q }, true)}</div>`;
    }
  } else {
    body = `<div class="text">${escapeHtml(entry.text)}</div>`;
  }
  return `<div class="${classes}" data-event="${attr(entry.event_id)}">${head}${body}</div>`;
}

function cardHtml(card: CardLike | undefined, conv: Conversation): string {
  if (!card) return `<div class="card"><div class="title">${escapeHtml(conv.nodeId)}</div></div>`;
  const where = card.file_path ? `${card.file_path}${typeof card.line === "number" ? `:${card.line + 1}` : ""}` : "";
  const facts = [card.kind ?? "node", where, `agent ${card.agent_status ?? "?"}`, `${card.pending_proposals ?? 0} pending`, card.usage ? `${card.usage.runs ?? 0} runs, ${costText(card.usage)}` : ""].filter((f) => f);
  const names = (refs: CardLike["callers"]): string => (refs ?? []).map((r) => r.qualified_name ?? r.name ?? r.id ?? "").filter((n) => n).join(", ");
  const wakes = card.subscriptions ? wakesText(card) : "";
  const rel = [["callers", names(card.callers)], ["callees", names(card.callees)], ["wakes for", wakes], ["instructions", card.instructions ?? ""]]
    .filter(([, v]) => v)
    .map(([k, v]) => `<div class="rel"><span class="muted">${k}:</span> ${escapeHtml(v!)}</div>`)
    .join("");
  const last = card.last_answer?.text
    ? `<div class="last"><span class="muted">last answer${card.last_answer.truncated ? ` (first lines of ${card.last_answer.lines ?? "?"})` : ""}:</span> ${escapeHtml(card.last_answer.text)}</div>`
    : "";
  return `<div class="card"><div class="title">${escapeHtml(card.qualified_name ?? card.name ?? card.id)}</div>`
    + `<div class="facts muted">${escapeHtml(facts.join(" · "))} · <code>${escapeHtml(card.id)}</code></div>${rel}${last}</div>`;
}

/** The view's HTML (the node card, then the conversation, then runs in flight). */
export function renderConversation(conv: Conversation, card: CardLike | undefined): string {
  const agentName = card?.name ?? card?.qualified_name ?? conv.nodeId;
  const entries = conv.ordered();
  const body = entries.length === 0
    ? `<div class="empty muted">No conversation yet: ask the node below.</div>`
    : entries.map((e) => entryHtml(conv, e, agentName)).join("");
  const running = [...conv.running].map(([runId, status]) =>
    `<div class="running">${escapeHtml(status === "waiting" ? `${agentName} waits for your answer` : status === "queued" ? `${agentName}: queued` : `${agentName} is working…`)} `
    + `<code>${escapeHtml(runId)}</code> ${button("cancel", "Cancel", { run: runId })}</div>`).join("");
  return cardHtml(card, conv) + `<div class="entries">${body}</div>${running}`;
}
