/**
 * Entry point: wires the modules together (server launch, settings, commands,
 * views, event stream). No logic lives here.
 */
import { State, type LanguageClient } from "vscode-languageclient/node";
import { Batch, registerBatch } from "./batch";
import { ServerManager } from "./client";
import { Commands } from "./commands";
import { CONVERSATION_VIEW, ConversationView } from "./conversation";
import { RemoraEvent, RunTracker, formatEvent, isRemoraEvent } from "./eventFormat";
import { RUNS_VIEW, RunsView } from "./runsView";
import { SessionTally, type StoredTotals } from "./sessionTally";
import { TrustCommands } from "./trust";
import { WakeCommands } from "./wakes";
import { InstructionCommands } from "./instructions";
import { RESTART_SETTINGS } from "./settings";
import { StatusItem } from "./statusBar";
import { NodeTreeProvider } from "./views";
import { vscode } from "./vscodeapi";

const RESTART_DEBOUNCE_MS = 500;
const USAGE_DELAY_MS = 150;
const PROPOSAL_EVENTS = new Set(["rewrite_proposed", "rewrite_applied", "rewrite_rejected", "rewrite_stale"]);

/** What activate() returns: for other extensions and the end-to-end tests. */
export interface RemoraApi {
  server: ServerManager;
  tree: NodeTreeProvider;
  conversation: ConversationView;
  runsView: RunsView;
  status: StatusItem;
  tally: SessionTally;
  /** The latest remora/event notifications received (at most 500). */
  events: RemoraEvent[];
  /** Proposals view, graphs, checkpoints, blame. */
  batch: Batch;
  activatedInMs: number;
}

export async function activate(context: vscode.ExtensionContext): Promise<RemoraApi> {
  const started = Date.now();
  const output = vscode.window.createOutputChannel("Remora Server", { log: true });
  const events = vscode.window.createOutputChannel("Remora Events");
  const server = new ServerManager(output);
  const runs = new RunTracker();
  const tally = new SessionTally();
  const commands = new Commands(server, runs, events);
  const tree = new NodeTreeProvider(server);
  const conversation = new ConversationView(server);
  const runsView = new RunsView(server);
  const status = new StatusItem(tally);
  commands.conversation = conversation;
  const received: RemoraEvent[] = [];
  context.subscriptions.push(output, events, server, status, conversation, runsView);
  commands.register(context);
  new WakeCommands(commands, events).register(context);
  new TrustCommands(commands, events).register(context);
  new InstructionCommands(commands).register(context);
  const batch = registerBatch(context, server);
  context.subscriptions.push(vscode.window.registerTreeDataProvider("remora.nodes", tree));
  context.subscriptions.push(vscode.window.registerTreeDataProvider(RUNS_VIEW, runsView));
  context.subscriptions.push(
    vscode.window.registerWebviewViewProvider(CONVERSATION_VIEW, conversation, { webviewOptions: { retainContextWhenHidden: true } }),
  );
  context.subscriptions.push(vscode.commands.registerCommand("remora.refreshNodes", () => tree.refresh()));
  const guarded = (fn: (arg?: never) => Promise<unknown>) => async (arg?: never) => {
    try {
      return await fn(arg);
    } catch (error) {
      void vscode.window.showErrorMessage(error instanceof Error ? error.message : String(error));
      return undefined;
    }
  };
  context.subscriptions.push(
    vscode.commands.registerCommand("remora.runs.refresh", guarded(() => runsView.refresh())),
    vscode.commands.registerCommand("remora.runs.cancel", guarded((arg) => runsView.cancel(arg))),
    vscode.commands.registerCommand("remora.runs.answer", guarded((arg) => runsView.answer(arg))),
    vscode.commands.registerCommand("remora.runs.retry", guarded((arg) => runsView.retry(arg))),
  );

  let pending = 0;
  const showStatus = (): void => status.update(runs.inFlight().length, pending);
  const countPending = async (): Promise<void> => {
    try {
      const listed = await server.client?.sendRequest("workspace/executeCommand", { command: "remora.proposals.list", arguments: [{ status: "pending" }] });
      pending = Array.isArray(listed) ? listed.length : 0;
    } catch {
      // Mid-restart: the next proposal event counts again.
    }
    showStatus();
  };

  // Today's tokens, as the server stored them (read again after events that add some).
  let usageTimer: NodeJS.Timeout | undefined;
  const readUsage = async (): Promise<void> => {
    try {
      const report = (await server.client?.sendRequest("workspace/executeCommand", { command: "remora.usage", arguments: [{ since: "today", limit: 1 }] })) as { total?: StoredTotals } | undefined;
      if (tally.set(report?.total)) showStatus();
    } catch {
      // Mid-restart: the next event reads them again.
    }
  };
  const readUsageSoon = (): void => {
    if (usageTimer) clearTimeout(usageTimer);
    usageTimer = setTimeout(() => void readUsage(), USAGE_DELAY_MS);
  };

  let refreshTimer: NodeJS.Timeout | undefined;
  const refreshSoon = (): void => {
    if (refreshTimer) clearTimeout(refreshTimer);
    refreshTimer = setTimeout(() => {
      void tree.refresh().then(showStatus);
    }, 200);
  };

  server.onStarted((client: LanguageClient) => {
    client.onNotification("remora/event", (event: unknown) => {
      if (!isRemoraEvent(event)) return;
      events.appendLine(formatEvent(event));
      received.push(event);
      if (received.length > 500) received.shift();
      runs.update(event);
      if (tally.changes(event)) readUsageSoon();
      conversation.onEvent(event);
      runsView.onEvent(event);
      batch.onEvent(event);
      if (PROPOSAL_EVENTS.has(event.type)) void countPending();
      showStatus();
      refreshSoon();
    });
    client.onRequest("remora/askUser", async (params: { question_id?: string; question?: string; options?: string[] }) => {
      const question = params.question ?? "The agent asks:";
      const answer = params.options && params.options.length > 0
        ? await vscode.window.showQuickPick(params.options, { placeHolder: question, ignoreFocusOut: true })
        : await vscode.window.showInputBox({ prompt: `Remora: ${question}`, ignoreFocusOut: true });
      return { answer: answer ?? null };
    });
    client.onDidChangeState((change) => {
      if (change.newState !== State.Running) return;
      // A (re)started server: runs of the old one ended with it; read everything back.
      runs.clear();
      conversation.onServerStarted();
      void runsView.refresh();
      void countPending();
      void readUsage();
    });
    refreshSoon();
  });

  context.subscriptions.push(vscode.window.onDidChangeActiveTextEditor(() => refreshSoon()));
  let restartTimer: NodeJS.Timeout | undefined;
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((change) => {
      if (!RESTART_SETTINGS.some((key) => change.affectsConfiguration(key))) return;
      if (restartTimer) clearTimeout(restartTimer);
      restartTimer = setTimeout(() => void server.restart(), RESTART_DEBOUNCE_MS);
    }),
    // Trusting the workspace changes what the server may do (workspaceTrust).
    vscode.workspace.onDidGrantWorkspaceTrust(() => void server.restart()),
  );
  await server.start();
  return { server, tree, conversation, runsView, status, tally, events: received, batch, activatedInMs: Date.now() - started };
}

export function deactivate(): Promise<void> | undefined {
  return undefined;
}
