/**
 * The `remora.*` commands. Each takes an optional argument object (so
 * keybindings, other extensions and tests can call it without UI) and asks with
 * VS Code UI only for what is missing. Without a proposal id a command acts on
 * the pending proposal of the node at the cursor.
 */
import type { LanguageClient } from "vscode-languageclient/node";
import type { ServerManager } from "./client";
import { type RemoraEvent, type RunTracker, formatEvent } from "./eventFormat";
import {
  DiffAnswer,
  ProposalPlace,
  SCHEME,
  diffTitle,
  indentQuery,
  indentationAt,
  indentationOf,
  memberDiffTitle,
  memberQuery,
  parseIndentQuery,
  parseMemberQuery,
  parseProposalPath,
  proposalPath,
  sideContent,
} from "./proposalDiff";
import { memberCounts, memberLabel, missingFor, setTitle } from "./changeSetModel";
import { vscode } from "./vscodeapi";

/** How many of a node's latest events "Show Node Events" lists. */
const NODE_EVENTS = 50;

interface NodeCard {
  id: string;
  name?: string;
  qualified_name?: string;
  kind?: string;
  uri?: string;
  agent_status?: string;
  /** How many proposals are pending (the server's card holds a count here). */
  pending_proposals?: number;
  /** The pending proposals themselves. */
  proposals?: { id?: string; status?: string; summary?: string }[];
  [key: string]: unknown;
}

type Args = Record<string, unknown> | undefined;

function str(args: Args, key: string): string | undefined {
  const value = args?.[key];
  return typeof value === "string" && value !== "" ? value : undefined;
}

function index(args: Args, key: string): number | undefined {
  const value = args?.[key];
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : undefined;
}

type Applied = { applied: boolean; reason?: string };

export function proposalIds(card: NodeCard | null | undefined): string[] {
  return (card?.proposals ?? [])
    .filter((p) => p.status === undefined || p.status === "pending")
    .map((p) => p.id)
    .filter((id): id is string => typeof id === "string");
}

export class Commands {
  /** Where a node's card and conversation show (set by the extension). */
  conversation: { show(nodeId: string): Promise<void> } | undefined;

  constructor(
    private readonly server: ServerManager,
    private readonly runs: RunTracker,
    private readonly events: vscode.OutputChannel,
  ) {}

  private client(): LanguageClient {
    const client = this.server.client;
    if (!client) throw new Error("Remora: the server is not running (see the Remora output).");
    return client;
  }

  async exec<T>(command: string, argument: Record<string, unknown>): Promise<T> {
    return (await this.client().sendRequest("workspace/executeCommand", { command, arguments: [argument] })) as T;
  }

  /** The node card at the cursor (or of a node id given as argument). */
  async nodeAtCursor(args?: Args): Promise<NodeCard | undefined> {
    const nodeId = str(args, "node_id");
    if (nodeId) return this.exec<NodeCard>("remora.node.get", { node_id: nodeId });
    const editor = vscode.window.activeTextEditor;
    if (!editor) return undefined;
    const position = editor.selection.active;
    const card = await this.exec<NodeCard | null>("remora.node.at", {
      uri: editor.document.uri.toString(),
      position: { line: position.line, character: position.character },
    });
    return card ?? undefined;
  }

  private async proposalId(args: Args): Promise<string | undefined> {
    const given = str(args, "proposal_id");
    if (given) return given;
    const fromDiff = vscode.window.activeTextEditor?.document.uri;
    if (fromDiff?.scheme === SCHEME) return parseProposalPath(fromDiff.path)?.proposalId;
    const ids = proposalIds(await this.nodeAtCursor(args));
    if (ids.length <= 1) {
      if (ids.length === 0) void vscode.window.showInformationMessage("Remora: no pending proposal for the node at the cursor.");
      return ids[0];
    }
    return vscode.window.showQuickPick(ids, { placeHolder: "Which proposal?" });
  }

  async ask(args?: Args): Promise<unknown> {
    const card = await this.nodeAtCursor(args);
    if (!card) {
      void vscode.window.showWarningMessage("Remora: no node at the cursor.");
      return undefined;
    }
    const message = str(args, "message") ?? (await vscode.window.showInputBox({ prompt: `Ask ${card.qualified_name ?? card.name ?? card.id}` }));
    if (!message) return undefined;
    const answer = await this.exec("remora.agent.chat", { node_id: card.id, message });
    // The answer arrives as events: the conversation shows it (and the rest).
    await this.conversation?.show(card.id);
    return answer;
  }

  async accept(args?: Args): Promise<unknown> {
    const id = await this.proposalId(args);
    if (!id) return undefined;
    const answer = await this.exec<{ applied: boolean; reason?: string }>("remora.proposal.accept", { proposal_id: id });
    if (!answer.applied) void vscode.window.showWarningMessage(`Remora: not applied: ${answer.reason ?? "unknown reason"}`);
    return answer;
  }

  async reject(args?: Args): Promise<unknown> {
    const id = await this.proposalId(args);
    if (!id) return undefined;
    const feedback = str(args, "feedback") ?? (await vscode.window.showInputBox({ prompt: "Why reject? (the agent tries again with this)" }));
    if (feedback === undefined) return undefined;
    return this.exec("remora.proposal.reject", { proposal_id: id, feedback });
  }

  async showDiff(args?: Args): Promise<unknown> {
    const id = await this.proposalId(args);
    if (!id) return undefined;
    const answer = await this.exec<DiffAnswer>("remora.proposal.diff", { proposal_id: id });
    const member = index(args, "member");
    if (member !== undefined || (answer.kind === "change_set" && answer.members?.length)) {
      return this.showSetDiff(id, answer, member);
    }
    const filePath = answer.file_path ?? "";
    const query = indentQuery(await this.definitionIndent(answer));
    const left = vscode.Uri.from({ scheme: SCHEME, path: proposalPath(id, "current", filePath), query });
    const right = vscode.Uri.from({ scheme: SCHEME, path: proposalPath(id, "proposed", filePath), query });
    await vscode.commands.executeCommand("vscode.diff", left, right, diffTitle(id, answer.status, filePath));
    return answer;
  }

  /**
   * A change set's diff: one member's (`member`), else every member's in one
   * multi-file diff editor titled with the set's summary and counts. Each
   * side is a `remora-proposal:` document (a new file's current side empty).
   */
  private async showSetDiff(id: string, answer: DiffAnswer, member: number | undefined): Promise<unknown> {
    const members = answer.members ?? [];
    const sides = async (i: number): Promise<[vscode.Uri, vscode.Uri, vscode.Uri]> => {
      const m = members[i] ?? {};
      const path = m.path ?? answer.file_path ?? "";
      const file = this.projectFile(path);
      const indent = m.kind === "rewrite" && file ? await this.indentIn(file, m.old_source) : "";
      const query = memberQuery(i, indent);
      const right = vscode.Uri.from({ scheme: SCHEME, path: proposalPath(id, "proposed", path), query });
      const left = vscode.Uri.from({ scheme: SCHEME, path: proposalPath(id, "current", path), query });
      return [file ?? right, left, right];
    };
    /** The multi-file editor's entries: a new file has no original side (shown as added). */
    const entry = async (i: number): Promise<[vscode.Uri, vscode.Uri | undefined, vscode.Uri]> => {
      const [label, left, right] = await sides(i);
      return [label, members[i]?.kind === "new_file" ? undefined : left, right];
    };
    if (member !== undefined) {
      if (member >= members.length) throw new Error(`Remora: proposal ${id} has no member ${member + 1}`);
      const [, left, right] = await sides(member);
      const m = members[member]!;
      await vscode.commands.executeCommand("vscode.diff", left, right, memberDiffTitle(id, member, members.length, m.path ?? "", m.kind));
      return { ...answer, shown_member: member };
    }
    const resources = await Promise.all(members.map((_, i) => entry(i)));
    const title = `${setTitle({ id, ...answer })}${answer.status && answer.status !== "pending" ? ` (${answer.status})` : ""}`;
    await vscode.commands.executeCommand("vscode.changes", title, resources);
    return answer;
  }

  /** The file at project path `path` (in the first workspace folder holding the project). */
  private projectFile(path: string): vscode.Uri | undefined {
    const folder = vscode.workspace.workspaceFolders?.[0];
    return folder && path ? vscode.Uri.joinPath(folder.uri, ...path.split("/")) : undefined;
  }

  /** The indentation of a rewritten definition in its file (open buffer, else disk). */
  private async indentIn(file: vscode.Uri, oldSource: string | undefined): Promise<string> {
    try {
      const document = await vscode.workspace.openTextDocument(file);
      return indentationOf(document.getText(), oldSource);
    } catch {
      return "";
    }
  }

  /** Accept All of a change set (or any proposal): one edit across its files, or nothing. */
  async acceptSet(args?: Args): Promise<unknown> {
    const id = await this.proposalId(args);
    if (!id) return undefined;
    const answer = await this.exec<Applied>("remora.proposal.accept", { proposal_id: id });
    if (!answer.applied) void vscode.window.showWarningMessage(`Remora: nothing applied: ${answer.reason ?? "unknown reason"}`);
    return answer;
  }

  /**
   * Accept only some members of a change set (the tree's member item: that
   * one; else picked). What a chosen member needs is said before asking the
   * server, which refuses it too.
   */
  async acceptMember(args?: Args): Promise<unknown> {
    const id = await this.proposalId(args);
    if (!id) return undefined;
    let chosen: number[] | undefined;
    const given = index(args, "member");
    const answer = await this.exec<DiffAnswer>("remora.proposal.diff", { proposal_id: id });
    const members = answer.members ?? [];
    if (given !== undefined) chosen = [given];
    else {
      const picked = await vscode.window.showQuickPick(
        members.map((m, i) => ({ label: `${i + 1}. ${memberLabel(m)}`, index: i })),
        { canPickMany: true, placeHolder: `Accept which members of ${setTitle({ id, ...answer })}?` },
      );
      chosen = picked?.map((p) => p.index);
    }
    if (!chosen || chosen.length === 0) return undefined;
    const missing = missingFor({ id, ...answer }, chosen);
    if (missing.length > 0) {
      void vscode.window.showWarningMessage(`Remora: not accepted: ${missing.join("; ")} (accept them together, or all).`);
      return { applied: false, reason: missing.join("; ") };
    }
    const result = await this.exec<Applied>("remora.proposal.accept", { proposal_id: id, members: chosen });
    if (!result.applied) void vscode.window.showWarningMessage(`Remora: nothing applied: ${result.reason ?? "unknown reason"}`);
    else {
      const kept = chosen.map((i) => members[i] ?? {});
      void vscode.window.showInformationMessage(`Remora: accepted ${memberCounts(kept)} of the change set; the other members are dropped.`);
    }
    return result;
  }

  /**
   * Reject only one member of a change set (the tree's member item: that one;
   * else picked), with feedback for the agent that made the set. The rest of
   * the set stays pending; the server refuses, naming them, when other
   * members need this one.
   */
  async rejectMember(args?: Args): Promise<unknown> {
    const id = await this.proposalId(args);
    if (!id) return undefined;
    const answer = await this.exec<DiffAnswer>("remora.proposal.diff", { proposal_id: id });
    const members = answer.members ?? [];
    let chosen = index(args, "member");
    if (chosen === undefined) {
      const picked = await vscode.window.showQuickPick(
        members.map((m, i) => ({ label: `${i + 1}. ${memberLabel(m)}`, index: i })),
        { placeHolder: `Reject which member of ${setTitle({ id, ...answer })}?` },
      );
      chosen = picked?.index;
    }
    if (chosen === undefined || chosen >= members.length) return undefined;
    const label = `${chosen + 1}. ${memberLabel(members[chosen] ?? {})}`;
    const feedback =
      str(args, "feedback") ?? (await vscode.window.showInputBox({ prompt: `Why reject ${label}? (the rest of the set stays pending; the agent reads this)` }));
    if (feedback === undefined) return undefined;
    try {
      const result = await this.exec<{ run_id?: string | null }>("remora.proposal.reject", { proposal_id: id, members: [chosen], feedback });
      void vscode.window.showInformationMessage(`Remora: rejected ${label}; the rest of the set stays pending.`);
      return result;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      void vscode.window.showWarningMessage(`Remora: not rejected: ${reason}`);
      return { rejected: false, reason };
    }
  }

  /** The column the definition starts at in its file (its open buffer, else the disk). */
  private async definitionIndent(place: ProposalPlace | undefined): Promise<string> {
    if (!place?.uri || typeof place.start_byte !== "number") return "";
    try {
      const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(place.uri));
      return indentationAt(document.getText(), place.start_byte);
    } catch {
      return "";
    }
  }

  async cancelRun(args?: Args): Promise<unknown> {
    let runId = str(args, "run_id");
    if (!runId) {
      const runs = this.runs.inFlight();
      if (runs.length === 0) {
        void vscode.window.showInformationMessage("Remora: no run in flight.");
        return undefined;
      }
      const picked = await vscode.window.showQuickPick(
        runs.map((r) => ({ label: r.runId, description: r.nodeId })),
        { placeHolder: "Cancel which run?" },
      );
      runId = picked?.label;
    }
    if (!runId) return undefined;
    return this.exec("remora.agent.cancel", { run_id: runId });
  }

  /** The node card: shown at the top of the node's conversation (the Conversation view). */
  async showNode(args?: Args | string): Promise<unknown> {
    const card = await this.nodeAtCursor(typeof args === "string" ? { node_id: args } : args);
    if (!card) {
      void vscode.window.showWarningMessage("Remora: no node at the cursor.");
      return undefined;
    }
    await this.conversation?.show(card.id);
    return card;
  }

  showEvents(): void {
    this.events.show(true);
  }

  /** The latest events of the node at the cursor (or `node_id`), oldest first, in the Remora Events output. */
  async showNodeEvents(args?: Args): Promise<unknown> {
    const card = await this.nodeAtCursor(args);
    if (!card) {
      void vscode.window.showWarningMessage("Remora: no node at the cursor.");
      return undefined;
    }
    const found = await this.exec<RemoraEvent[]>("remora.node.events", { node_id: card.id, limit: NODE_EVENTS });
    const name = card.qualified_name ?? card.name ?? card.id;
    const lines = [`── the latest ${found.length} events of ${name} (${card.id}) ──`, ...[...found].reverse().map(formatEvent)];
    for (const line of lines) this.events.appendLine(line);
    this.events.show(true);
    return { lines }; // what the output shows (for callers and tests)
  }

  register(context: vscode.ExtensionContext): void {
    const add = (id: string, fn: (args?: Args) => unknown): void => {
      context.subscriptions.push(
        vscode.commands.registerCommand(id, async (args?: unknown) => {
          try {
            // Tree items and editor-title buttons pass their own objects: keep only argument objects.
            const plain = typeof args === "object" && args !== null && !("contextValue" in args) ? (args as Args) : undefined;
            const nodeId = typeof args === "object" && args !== null && "nodeId" in args ? (args as { nodeId?: string }).nodeId : undefined;
            // A Nodes-view item names its node by `nodeId`.
            return await fn(nodeId && plain?.node_id === undefined ? { ...plain, node_id: nodeId } : plain);
          } catch (error) {
            void vscode.window.showErrorMessage(error instanceof Error ? error.message : String(error));
            return undefined;
          }
        }),
      );
    };
    add("remora.ask", (a) => this.ask(a));
    add("remora.acceptProposal", (a) => this.accept(a));
    add("remora.rejectProposal", (a) => this.reject(a));
    add("remora.showDiff", (a) => this.showDiff(a));
    add("remora.acceptChangeSet", (a) => this.acceptSet(a));
    add("remora.acceptMember", (a) => this.acceptMember(a));
    add("remora.rejectMember", (a) => this.rejectMember(a));
    add("remora.cancelRun", (a) => this.cancelRun(a));
    add("remora.showNode", (a) => this.showNode(a));
    add("remora.showHistory", (a) => this.showNode(a));
    add("remora.showEvents", () => this.showEvents());
    add("remora.showNodeEvents", (a) => this.showNodeEvents(a));
    add("remora.restartServer", () => this.server.restart());
    context.subscriptions.push(
      vscode.workspace.registerTextDocumentContentProvider(SCHEME, {
        provideTextDocumentContent: async (uri) => {
          const parsed = parseProposalPath(uri.path);
          if (!parsed) return "";
          const answer = await this.exec<DiffAnswer>("remora.proposal.diff", { proposal_id: parsed.proposalId });
          return sideContent(answer, parsed.side, parseIndentQuery(uri.query), parseMemberQuery(uri.query));
        },
      }),
    );
  }
}
