/**
 * Batch work in the editor: Run Graph (a quick pick of the project's graphs,
 * progress with Cancel, the run's proposals in the Proposals view at the end),
 * Graph Status, Accept All of a graph run, checkpoints (create, list, restore
 * with a confirmation naming what changes, and optionally proposing the files
 * back), Revert Proposal / Revert Graph Run (a revert is a proposal to review),
 * and Toggle Blame. `registerBatch`
 * wires them; the extension hands it every `remora/event`.
 *
 * Each command takes an optional argument object (so keybindings, other
 * extensions and the e2e can call it without UI) and asks only for what is
 * missing; it answers what the server answered.
 */
import { State } from "vscode-languageclient/node";
import type { ServerManager } from "./client";
import { Blame } from "./blame";
import {
  CheckpointLike,
  GraphListing,
  GraphProgress,
  GraphStatusLike,
  checkpointLabel,
  completionMessage,
  countsLine,
  graphPicks,
  restoreConfirmation,
  restoredMessage,
  statusMarkdown,
} from "./batchModel";
import { ProposalsElement, ProposalsProvider, acceptMany } from "./proposalsView";
import { AppliedLike, GraphRunLike, graphRunProposalIds } from "./proposalsModel";
import { RevertedLike, filesProposedMessage, interruptedOffer, refusedMessage, revertMessage } from "./revertModel";
import { Exec, serverExec } from "./serverCommand";
import { vscode } from "./vscodeapi";

type Args = Record<string, unknown> | undefined;
type Event = { type: string; [key: string]: unknown };

/** Events after which the project's pending proposals may differ. */
const PROPOSAL_EVENTS = new Set([
  "rewrite_proposed",
  "rewrite_applied",
  "rewrite_rejected",
  "rewrite_stale",
  "rewrite_not_applied",
  "proposal_checked",
  "graph_completed",
  "checkpoint_restored",
]);
const KEPT_EVENTS = 200;
const STATUS_POLL_MS = 5000;

function str(args: Args, key: string): string | undefined {
  const value = args?.[key];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** What the extension's API exposes of batch work (other extensions, the e2e). */
export interface BatchApi {
  proposals: ProposalsProvider;
  blame: Blame;
  onEvent(event: Event): void;
  /** The last confirmation asked before a restore (the e2e checks its words). */
  lastConfirmation: string | undefined;
  /** The last messages shown after a revert (the e2e checks their words). */
  lastRevertMessages: string[];
  /** The last offer to resume an interrupted graph run. */
  lastResumeOffer: string | undefined;
}

export class Batch implements BatchApi {
  readonly proposals: ProposalsProvider;
  readonly blame: Blame;
  lastConfirmation: string | undefined;
  lastRevertMessages: string[] = [];
  lastResumeOffer: string | undefined;
  private readonly recent: Event[] = [];
  private readonly watchers = new Set<(event: Event) => void>();
  private refreshTimer: NodeJS.Timeout | undefined;

  constructor(private readonly exec: Exec) {
    this.proposals = new ProposalsProvider(exec);
    this.blame = new Blame(exec);
  }

  onEvent(event: Event): void {
    this.recent.push(event);
    if (this.recent.length > KEPT_EVENTS) this.recent.shift();
    for (const watch of this.watchers) watch(event);
    if (event.type === "rewrite_stale" && typeof event.proposal_id === "string") {
      this.proposals.noteStale(event.proposal_id, typeof event.reason === "string" ? event.reason : "");
    }
    if (PROPOSAL_EVENTS.has(event.type)) this.refreshSoon();
    if (event.type === "rewrite_applied") this.blame.refreshSoon();
    const offer = interruptedOffer(event);
    if (offer) {
      this.lastResumeOffer = offer;
      void vscode.window.showWarningMessage(offer, "Resume").then((choice) => {
        if (choice === "Resume") void vscode.commands.executeCommand("remora.resumeGraphRun", { graph_run_id: event.graph_run_id });
      });
    }
  }

  /** Remora: Resume Graph Run — go on with a run a restart interrupted (same id). */
  async resumeGraphRun(args?: Args): Promise<unknown> {
    const id = await this.pickRun(args, "Resume which interrupted graph run?", (r) => r.status === "interrupted");
    if (!id) return undefined;
    const answer = await this.exec<{ graph_run_id: string }>("remora.graph.resume", { graph_run_id: id });
    void vscode.window.showInformationMessage(`Remora: graph run ${id} goes on; the steps that had finished are not run again.`);
    return answer;
  }

  private refreshSoon(): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => void this.proposals.refresh(), 200);
  }

  /** Remora: Run Graph. */
  async runGraph(args?: Args): Promise<unknown> {
    const name = str(args, "name") ?? (await this.pickGraph());
    if (!name) return undefined;
    const { graph_run_id: graphRunId } = await this.exec<{ graph_run_id: string }>("remora.graph.run", { graph: name });
    const progress = new GraphProgress(graphRunId);
    const outcome = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Remora: graph ${name}`, cancellable: true },
      (report, token) =>
        new Promise<string>((resolve) => {
          const watch = (event: Event): void => {
            if (!progress.update(event)) return;
            if (event.type === "graph_step_finished") report.report({ message: progress.message(name), increment: progress.increment() });
            else report.report({ message: progress.message(name) });
            if (progress.outcome) {
              this.watchers.delete(watch);
              resolve(progress.outcome);
            }
          };
          token.onCancellationRequested(() => void this.exec("remora.graph.cancel", { graph_run_id: graphRunId }).catch(() => undefined));
          this.watchers.add(watch);
          // Events that arrived before the answer did.
          for (const event of this.recent.filter((e) => e.graph_run_id === graphRunId)) watch(event);
          // A server that restarted (or events missed) must not leave the notification up forever:
          // now and then ask how the run stands.
          const poll = setInterval(() => {
            if (progress.outcome) return clearInterval(poll);
            void this.exec<GraphStatusLike>("remora.graph.status", { graph_run_id: graphRunId }).then(
              (status) => {
                if (status.status && status.status !== "running" && !progress.outcome) {
                  watch({ type: "graph_completed", graph_run_id: graphRunId, outcome: status.status, counts: status.counts ?? {} });
                }
              },
              () => undefined,
            );
          }, STATUS_POLL_MS);
        }),
    );
    await this.proposals.refresh();
    const mine = this.proposals.runs.find((r) => r.run.graph_run_id === graphRunId)?.proposalIds ?? [];
    if (mine.length > 0) void vscode.commands.executeCommand("remora.proposals.focus");
    void vscode.window.showInformationMessage(completionMessage(name, outcome, progress.counts, mine.length));
    return { graph_run_id: graphRunId, outcome, counts: progress.counts, proposal_ids: mine };
  }

  private async pickGraph(): Promise<string | undefined> {
    const listing = await this.exec<GraphListing[]>("remora.graphs.list", {});
    if (listing.length === 0) {
      void vscode.window.showInformationMessage("Remora: this project has no graphs (.remora/graphs/<name>.yaml; see docs/batch.md).");
      return undefined;
    }
    const picked = await vscode.window.showQuickPick(graphPicks(listing), { placeHolder: "Run which graph?", matchOnDetail: true });
    if (!picked) return undefined;
    if (!picked.runnable) {
      void vscode.window.showErrorMessage(`Remora: graph ${picked.name} cannot run: ${picked.detail ?? ""}`);
      return undefined;
    }
    return picked.name;
  }

  /** A graph run: given, or picked from the latest (the newest when `latest`). */
  private async pickRun(args: Args, placeHolder: string, only?: (run: GraphRunLike) => boolean): Promise<string | undefined> {
    const given = str(args, "graph_run_id");
    if (given) return given;
    const runs = (await this.exec<GraphRunLike[]>("remora.graph.runs", { limit: 20 })).filter((r) => !only || only(r));
    if (runs.length === 0) {
      void vscode.window.showInformationMessage("Remora: no graph run to choose from.");
      return undefined;
    }
    if (runs.length === 1) return runs[0]!.graph_run_id;
    const picked = await vscode.window.showQuickPick(
      runs.map((r) => ({ label: r.name ?? r.graph_run_id, description: `${r.status ?? ""} ${countsLine((r as { counts?: Record<string, number> }).counts)}`, detail: r.graph_run_id })),
      { placeHolder },
    );
    return picked?.detail;
  }

  /** Remora: Graph Status — a run's steps × nodes, as a Markdown preview. */
  async graphStatus(args?: Args): Promise<unknown> {
    const id = await this.pickRun(args, "Status of which graph run?");
    if (!id) return undefined;
    const status = await this.exec<GraphStatusLike>("remora.graph.status", { graph_run_id: id });
    const names = new Map<string, string>();
    const nodes = new Set((status.steps ?? []).flatMap((s) => Object.keys(s.nodes)));
    for (const node of [...nodes].slice(0, 50)) {
      const card = await this.exec<{ qualified_name?: string } | null>("remora.node.get", { node_id: node }).catch(() => null);
      if (card?.qualified_name) names.set(node, card.qualified_name);
    }
    const doc = await vscode.workspace.openTextDocument({ language: "markdown", content: statusMarkdown(status, names) });
    await vscode.commands.executeCommand("markdown.showPreview", doc.uri).then(undefined, async () => {
      await vscode.window.showTextDocument(doc, { preview: true });
    });
    return status;
  }

  /** Remora: Accept All of a graph run's pending proposals (one result each). */
  async acceptAll(args?: Args): Promise<AppliedLike[] | undefined> {
    await this.proposals.refresh();
    const pending = new Set(this.proposals.pending.map((p) => p.id));
    const withPending = new Set(this.proposals.runs.map((r) => r.run.graph_run_id));
    const id = await this.pickRun(args, "Accept the proposals of which graph run?", (r) => withPending.has(r.graph_run_id));
    if (!id) return undefined;
    const status = await this.exec<GraphStatusLike>("remora.graph.status", { graph_run_id: id });
    const ids = graphRunProposalIds(status as GraphRunLike).filter((p) => pending.has(p));
    if (ids.length === 0) {
      void vscode.window.showInformationMessage(`Remora: graph run ${id} has no pending proposal.`);
      return [];
    }
    const results = await acceptMany(this.exec, ids);
    await this.proposals.refresh();
    return results;
  }

  /** Remora: Create Checkpoint. */
  async createCheckpoint(args?: Args): Promise<unknown> {
    let label = str(args, "label");
    if (label === undefined && args?.label === undefined) {
      label = await vscode.window.showInputBox({ prompt: "Checkpoint label (optional)", placeHolder: "e.g. before the refactor" });
      if (label === undefined) return undefined;
    }
    const answer = await this.exec<{ checkpoint_id: string }>("remora.checkpoint.create", label ? { label } : {});
    void vscode.window.showInformationMessage(
      `Remora: checkpoint ${answer.checkpoint_id}${label ? ` "${label}"` : ""} taken: every agent's state (your files are not part of it).`,
    );
    return answer;
  }

  /** Remora: Checkpoints… — the list; picking one offers to restore it. */
  async listCheckpoints(args?: Args): Promise<unknown> {
    const checkpoints = await this.exec<CheckpointLike[]>("remora.checkpoint.list", {});
    if (args?.pick === false) return checkpoints;
    if (checkpoints.length === 0) {
      void vscode.window.showInformationMessage("Remora: no checkpoint yet (Remora: Create Checkpoint).");
      return checkpoints;
    }
    const picked = await vscode.window.showQuickPick(
      checkpoints.map((c) => ({ label: checkpointLabel(c), description: c.checkpoint_id, detail: c.git_head ? `git ${c.git_head.slice(0, 12)}` : undefined })),
      { placeHolder: "Restore the agents' state to which checkpoint?" },
    );
    if (!picked) return checkpoints;
    return this.restoreCheckpoint({ checkpoint_id: picked.description });
  }

  /** Remora: Restore Checkpoint… — asks first, naming what changes. */
  async restoreCheckpoint(args?: Args): Promise<unknown> {
    const checkpoints = await this.exec<CheckpointLike[]>("remora.checkpoint.list", {});
    let id = str(args, "checkpoint_id");
    if (!id) {
      const picked = await vscode.window.showQuickPick(
        checkpoints.map((c) => ({ label: checkpointLabel(c), description: c.checkpoint_id })),
        { placeHolder: "Restore the agents' state to which checkpoint?" },
      );
      id = picked?.description;
    }
    if (!id) return undefined;
    const checkpoint = checkpoints.find((c) => c.checkpoint_id === id) ?? { checkpoint_id: id };
    await this.proposals.refresh();
    this.lastConfirmation = restoreConfirmation(checkpoint, this.proposals.pending);
    // `confirmed: true` (a keybinding's or a program's argument) has already said yes.
    const withFiles = "Restore and Propose Files Back";
    const choice =
      args?.confirmed === true
        ? args?.files === true
          ? withFiles
          : "Restore"
        : await vscode.window.showWarningMessage(this.lastConfirmation, { modal: true }, "Restore", withFiles);
    if (choice !== "Restore" && choice !== withFiles) return { restored: false, cancelled: true };
    const files = choice === withFiles;
    const answer = await this.exec<{ restored?: boolean; files_differing?: string[]; proposal_ids?: string[]; not_restored?: { path: string; reason: string }[] }>(
      "remora.checkpoint.restore",
      files ? { checkpoint_id: id, files: true } : { checkpoint_id: id },
    );
    const proposed = files ? filesProposedMessage(answer) : undefined;
    void vscode.window.showInformationMessage(proposed ? `${restoredMessage(answer)} ${proposed}` : restoredMessage(answer));
    await this.proposals.refresh();
    return answer;
  }

  /** Remora: Revert Proposal — propose undoing an accepted proposal (given, or picked). */
  async revertProposal(args?: Args): Promise<RevertedLike | undefined> {
    const id = str(args, "proposal_id") ?? (await this.pickAccepted());
    if (!id) return undefined;
    const answer = await this.exec<RevertedLike>("remora.proposal.revert", { proposal_id: id });
    this.tellReverted(answer, `proposal ${id}`);
    return answer;
  }

  /** Remora: Revert Graph Run — one proposal per file undoing what the run changed. */
  async revertGraphRun(args?: Args): Promise<RevertedLike | undefined> {
    const id = await this.pickRun(args, "Revert which graph run?");
    if (!id) return undefined;
    const answer = await this.exec<RevertedLike>("remora.graph.revert", { graph_run_id: id });
    this.tellReverted(answer, `graph run ${id}`);
    return answer;
  }

  private async pickAccepted(): Promise<string | undefined> {
    const accepted = await this.exec<{ id: string; node?: string | null; file_path?: string; reasoning?: string }[]>("remora.proposals.list", { status: "accepted" });
    if (accepted.length === 0) {
      void vscode.window.showInformationMessage("Remora: no accepted proposal to revert.");
      return undefined;
    }
    const picked = await vscode.window.showQuickPick(
      accepted.map((p) => ({ label: p.node ?? p.file_path ?? p.id, description: p.id, detail: p.reasoning || undefined })),
      { placeHolder: "Revert which accepted proposal?" },
    );
    return picked?.description;
  }

  /** Say what a revert proposed (with Show Diff / Accept) and what it refused. */
  private tellReverted(answer: RevertedLike, what: string): void {
    const ids = answer.proposal_ids;
    const info = revertMessage(answer, what);
    const warning = refusedMessage(answer);
    this.lastRevertMessages = warning ? [info, warning] : [info];
    void this.proposals.refresh();
    if (warning) void vscode.window.showWarningMessage(warning);
    if (ids.length === 0) return;
    const accept = ids.length === 1 ? "Accept" : "Accept All";
    // Not awaited: the command answers now; the buttons act when clicked.
    void vscode.window.showInformationMessage(info, "Show Diff", accept).then((choice) => {
      if (choice === "Show Diff") void vscode.commands.executeCommand("remora.showDiff", { proposal_id: ids[0] });
      else if (choice === "Accept") void vscode.commands.executeCommand("remora.acceptProposal", { proposal_id: ids[0] });
      else if (choice === accept) void acceptMany(this.exec, ids).then(() => this.proposals.refresh());
    });
  }

  dispose(): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.proposals.dispose();
    this.blame.dispose();
  }
}

/** Register the batch commands, the Proposals view and blame. */
export function registerBatch(context: vscode.ExtensionContext, server: ServerManager): Batch {
  const batch = new Batch(serverExec(server));
  context.subscriptions.push(batch, vscode.window.registerTreeDataProvider("remora.proposals", batch.proposals));
  const add = (id: string, fn: (args: Args) => unknown): void => {
    context.subscriptions.push(
      vscode.commands.registerCommand(id, async (args?: unknown) => {
        try {
          // A tree item passes its element: its ids are the argument.
          const plain = typeof args === "object" && args !== null ? (args as Args) : undefined;
          return await fn(plain);
        } catch (error) {
          void vscode.window.showErrorMessage(error instanceof Error ? error.message : String(error));
          return undefined;
        }
      }),
    );
  };
  add("remora.runGraph", (a) => batch.runGraph(a));
  add("remora.graphStatus", (a) => batch.graphStatus(a));
  add("remora.acceptAll", (a) => batch.acceptAll(a));
  add("remora.createCheckpoint", (a) => batch.createCheckpoint(a));
  add("remora.listCheckpoints", (a) => batch.listCheckpoints(a));
  add("remora.restoreCheckpoint", (a) => batch.restoreCheckpoint(a));
  add("remora.revertProposal", (a) => batch.revertProposal(a));
  add("remora.revertGraphRun", (a) => batch.revertGraphRun(a));
  add("remora.resumeGraphRun", (a) => batch.resumeGraphRun(a));
  add("remora.toggleBlame", (a) => batch.blame.toggle(typeof a?.enabled === "boolean" ? a.enabled : undefined));
  add("remora.refreshProposals", () => batch.proposals.refresh());
  add("remora.dismissProposal", (a) => (typeof a?.proposal_id === "string" ? batch.proposals.dismiss(a.proposal_id) : undefined));
  context.subscriptions.push(vscode.window.onDidChangeActiveTextEditor(() => batch.proposals.updateStatus()));
  server.onStarted((client) => {
    // Handlers go on before the client starts: list once it runs.
    client.onDidChangeState((change) => {
      if (change.newState === State.Running) void batch.proposals.refresh();
    });
  });
  return batch;
}

export type { ProposalsElement };
