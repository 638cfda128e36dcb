/**
 * The Proposals view: every pending proposal of the project, grouped by file,
 * each with its checks; graph runs with pending proposals on top, each with
 * "Accept All"; then each change set as one item ("Change set: add currency
 * (2 definitions in 2 files, 1 new file)") whose children are its members
 * (file, +/- lines, "new file", what each needs) and its checks. Items carry
 * `proposal_id` / `graph_run_id` (a member also its `member` index), so the
 * context-menu commands (Accept, Reject…, Show Diff, Accept All, Accept Only
 * This Member, Reject Only This Member…) get what they act on. Also the status-bar item with the open
 * file's count.
 */
import {
  AppliedLike,
  CheckLike,
  FileGroup,
  GraphRunLike,
  ListedProposal,
  acceptSummary,
  changeSets,
  checkState,
  checksLine,
  countForFile,
  describeProposal,
  fileStatusText,
  groupByFile,
  isListedProposal,
  proposalLabel,
  runsWithPending,
} from "./proposalsModel";
import { isNewFile, memberDescription, memberLabel, newFileTitle, setTitle, setTooltip } from "./changeSetModel";
import { inTurn } from "./inTurn";
import type { Exec } from "./serverCommand";
import { vscode } from "./vscodeapi";

export type ProposalsElement =
  | { kind: "graphRun"; graph_run_id: string; name: string; proposalIds: string[] }
  | { kind: "file"; group: FileGroup }
  | { kind: "proposal"; proposal_id: string; proposal: ListedProposal }
  | { kind: "changeSet"; proposal_id: string; proposal: ListedProposal }
  | { kind: "member"; proposal_id: string; member: number; proposal: ListedProposal }
  | { kind: "check"; check: CheckLike };

const CHECK_ICON = { passed: "pass", failed: "error", pending: "clock" } as const;

export class ProposalsProvider implements vscode.TreeDataProvider<ProposalsElement> {
  private readonly changed = new vscode.EventEmitter<ProposalsElement | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  /** The pending proposals last listed (newest first, as the server lists them). */
  pending: ListedProposal[] = [];
  /** Change sets that went stale in this session (their reason from `rewrite_stale`), until dismissed. */
  stale: ListedProposal[] = [];
  private readonly staleReasons = new Map<string, string>();
  private readonly dismissed = new Set<string>();
  runs: { run: GraphRunLike; proposalIds: string[] }[] = [];
  private readonly status = vscode.window.createStatusBarItem("remora.proposalsHere", vscode.StatusBarAlignment.Left, 49);
  private statusVisible = false;

  constructor(private readonly exec: Exec) {
    this.status.name = "Remora Proposals";
    this.status.command = "remora.proposals.focus";
    this.status.tooltip = "Remora: pending proposals in this file (click: the Proposals view)";
  }

  /** Re-list the project's pending proposals and the graph runs that have some (one refresh at a time: see inTurn). */
  readonly refresh = inTurn(() => this.load());

  private async load(): Promise<void> {
    try {
      const listed = await this.exec<unknown[]>("remora.proposals.list", { status: "pending" });
      this.pending = (listed ?? []).filter(isListedProposal);
      const recent = await this.exec<GraphRunLike[]>("remora.graph.runs", { limit: 20 }).catch(() => []);
      const shown = [...this.staleReasons.keys()].filter((id) => !this.dismissed.has(id));
      const stale = shown.length > 0 ? await this.exec<unknown[]>("remora.proposals.list", { status: "stale" }).catch(() => []) : [];
      this.stale = (stale ?? []).filter(isListedProposal).filter((p) => p.kind === "change_set" && shown.includes(p.id));
      this.runs = runsWithPending(recent ?? [], new Set(this.pending.map((p) => p.id)));
    } catch {
      // No server (or mid-restart): an empty view, nothing to act on.
      this.pending = [];
      this.stale = [];
      this.runs = [];
    }
    this.changed.fire(undefined);
    this.updateStatus();
  }

  /** A proposal went stale (`rewrite_stale`): a change set stays in the view, saying why, until dismissed. */
  noteStale(proposalId: string, reason: string): void {
    this.staleReasons.set(proposalId, reason);
  }

  /** Take a stale set out of the view. */
  async dismiss(proposalId: string): Promise<void> {
    this.dismissed.add(proposalId);
    await this.refresh();
  }

  /** The open file's count in the status bar (hidden when it has none). */
  updateStatus(): void {
    const document = vscode.window.activeTextEditor?.document;
    const count = document && document.uri.scheme === "file" ? countForFile(this.pending, document.uri.toString()) : 0;
    this.status.text = fileStatusText(count);
    this.statusVisible = count > 0;
    if (count > 0) this.status.show();
    else this.status.hide();
  }

  /** The status item's text and whether it shows (for the tests). */
  statusShown(): { text: string; visible: boolean } {
    return { text: this.status.text, visible: this.statusVisible };
  }

  getChildren(element?: ProposalsElement): ProposalsElement[] {
    if (!element) {
      const runs: ProposalsElement[] = this.runs.map(({ run, proposalIds }) => ({
        kind: "graphRun",
        graph_run_id: run.graph_run_id,
        name: run.name ?? run.graph_run_id,
        proposalIds,
      }));
      const sets = [...changeSets(this.pending), ...this.stale].map((proposal): ProposalsElement => ({ kind: "changeSet", proposal_id: proposal.id, proposal }));
      return [...runs, ...sets, ...groupByFile(this.pending).map((group): ProposalsElement => ({ kind: "file", group }))];
    }
    if (element.kind === "changeSet") {
      const members = (element.proposal.members ?? []).map(
        (_, member): ProposalsElement => ({ kind: "member", proposal_id: element.proposal_id, member, proposal: element.proposal }),
      );
      return [...members, ...(element.proposal.checks ?? []).map((check): ProposalsElement => ({ kind: "check", check }))];
    }
    if (element.kind === "file") {
      return element.group.proposals.map((proposal) => ({ kind: "proposal", proposal_id: proposal.id, proposal }));
    }
    if (element.kind === "proposal") return (element.proposal.checks ?? []).map((check) => ({ kind: "check", check }));
    return [];
  }

  getTreeItem(element: ProposalsElement): vscode.TreeItem {
    const { Collapsed, Expanded, None } = vscode.TreeItemCollapsibleState;
    switch (element.kind) {
      case "graphRun": {
        const item = new vscode.TreeItem(`Graph ${element.name}`, None);
        item.description = `${element.proposalIds.length} pending · ${element.graph_run_id}`;
        item.iconPath = new vscode.ThemeIcon("run-all");
        item.contextValue = "graphRun";
        item.tooltip = `Graph run ${element.graph_run_id}: ${element.proposalIds.join(", ")}`;
        return item;
      }
      case "file": {
        const item = new vscode.TreeItem(element.group.filePath, Expanded);
        item.description = `${element.group.proposals.length}`;
        if (element.group.uri) item.resourceUri = vscode.Uri.parse(element.group.uri);
        item.iconPath = vscode.ThemeIcon.File;
        item.contextValue = "file";
        return item;
      }
      case "proposal": {
        const p = element.proposal;
        const label = isNewFile(p) ? newFileTitle(p) : proposalLabel(p);
        const item = new vscode.TreeItem(label, (p.checks ?? []).length > 0 ? Collapsed : None);
        item.description = isNewFile(p) ? `new file · ${proposalLabel(p)}` : describeProposal(p);
        item.iconPath = new vscode.ThemeIcon(isNewFile(p) ? "new-file" : "git-pull-request");
        item.contextValue = "proposal";
        item.id = `proposal:${p.id}`;
        item.tooltip = new vscode.MarkdownString(`\`${p.id}\` · ${p.reasoning || "no reason given"}`);
        item.command = { title: "Show Diff", command: "remora.showDiff", arguments: [{ proposal_id: p.id }] };
        return item;
      }
      case "changeSet": {
        const p = element.proposal;
        const stale = p.status === "stale";
        const item = new vscode.TreeItem(setTitle(p), stale ? Collapsed : Expanded);
        const reason = this.staleReasons.get(p.id) || "a file changed since it was made";
        item.description = stale ? `stale: nothing applied · ${reason}` : checksLine(p.checks);
        item.iconPath = new vscode.ThemeIcon(stale ? "warning" : "files");
        item.contextValue = stale ? "changeSetStale" : "changeSet";
        item.id = `set:${p.id}`;
        item.tooltip = new vscode.MarkdownString(stale ? `**Stale** (${reason}): nothing of it was applied; ask the agent again.\n\n${setTooltip(p)}` : setTooltip(p));
        item.command = { title: "Show Diff", command: "remora.showDiff", arguments: [{ proposal_id: p.id }] };
        return item;
      }
      case "member": {
        const p = element.proposal;
        const member = (p.members ?? [])[element.member] ?? {};
        const item = new vscode.TreeItem(`${element.member + 1}. ${memberLabel(member)}`, None);
        item.description = memberDescription(p, element.member);
        item.iconPath = new vscode.ThemeIcon(member.kind === "new_file" ? "new-file" : "diff");
        item.contextValue = "changeSetMember";
        item.id = `set:${p.id}:${element.member}`;
        item.tooltip = `${member.path ?? "?"}: ${member.kind ?? "edit"} (member ${element.member + 1} of ${(p.members ?? []).length})`;
        item.command = {
          title: "Show Diff",
          command: "remora.showDiff",
          arguments: [{ proposal_id: p.id, member: element.member }],
        };
        return item;
      }
      case "check": {
        const state = checkState(element.check);
        const item = new vscode.TreeItem(element.check.name ?? "check", None);
        item.description = [state, element.check.detail].filter((s) => s).join(" · ");
        item.iconPath = new vscode.ThemeIcon(CHECK_ICON[state]);
        item.contextValue = "check";
        return item;
      }
    }
  }

  dispose(): void {
    this.status.dispose();
    this.changed.dispose();
  }
}

/** Accept several proposals together and say how it went (failures by reason). */
export async function acceptMany(exec: Exec, proposalIds: string[]): Promise<AppliedLike[]> {
  const results = await exec<AppliedLike[]>("remora.proposals.accept", { proposal_ids: proposalIds });
  const summary = acceptSummary(results ?? []);
  if (summary.failed > 0) void vscode.window.showWarningMessage(summary.message);
  else void vscode.window.showInformationMessage(summary.message);
  return results;
}
