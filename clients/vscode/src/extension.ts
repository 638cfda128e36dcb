/**
 * Entry point: wires the modules together (server launch, settings, commands,
 * views, event stream). No logic lives here.
 */
import type { LanguageClient } from "vscode-languageclient/node";
import { Batch, registerBatch } from "./batch";
import { ServerManager } from "./client";
import { Commands } from "./commands";
import { RemoraEvent, RunTracker, formatEvent, isRemoraEvent } from "./eventFormat";
import { RESTART_SETTINGS } from "./settings";
import { NodeTreeProvider, StatusItem } from "./views";
import { vscode } from "./vscodeapi";

const RESTART_DEBOUNCE_MS = 500;

/** What activate() returns: for other extensions and the end-to-end tests. */
export interface RemoraApi {
  server: ServerManager;
  tree: NodeTreeProvider;
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
  const commands = new Commands(server, runs, events);
  const tree = new NodeTreeProvider(server);
  const status = new StatusItem();
  const received: RemoraEvent[] = [];
  context.subscriptions.push(output, events, server, status);
  commands.register(context);
  const batch = registerBatch(context, server);
  context.subscriptions.push(vscode.window.registerTreeDataProvider("remora.nodes", tree));
  context.subscriptions.push(vscode.commands.registerCommand("remora.refreshNodes", () => tree.refresh()));

  let refreshTimer: NodeJS.Timeout | undefined;
  const refreshSoon = (): void => {
    if (refreshTimer) clearTimeout(refreshTimer);
    refreshTimer = setTimeout(() => {
      void tree.refresh().then(() => status.update(runs.inFlight().length, tree.pendingCount()));
    }, 200);
  };

  server.onStarted((client: LanguageClient) => {
    client.onNotification("remora/event", (event: unknown) => {
      if (!isRemoraEvent(event)) return;
      events.appendLine(formatEvent(event));
      received.push(event);
      if (received.length > 500) received.shift();
      runs.update(event);
      batch.onEvent(event);
      status.update(runs.inFlight().length, tree.pendingCount());
      refreshSoon();
    });
    client.onRequest("remora/askUser", async (params: { question_id?: string; question?: string; options?: string[] }) => {
      const question = params.question ?? "The agent asks:";
      const answer = params.options && params.options.length > 0
        ? await vscode.window.showQuickPick(params.options, { placeHolder: question, ignoreFocusOut: true })
        : await vscode.window.showInputBox({ prompt: `Remora: ${question}`, ignoreFocusOut: true });
      return { answer: answer ?? null };
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
  return { server, tree, events: received, batch, activatedInMs: Date.now() - started };
}

export function deactivate(): Promise<void> | undefined {
  return undefined;
}
