/**
 * Starting, stopping and restarting remora-lsp through vscode-languageclient.
 *
 * A missing server gives one error notification with a button that opens the
 * setting, and no client at all (so no crash loop). The middleware answers
 * `workspace/configuration` for section `remora` with the engine settings only.
 * Settings are resolved by who set them (`settings.ts`): workspace values that
 * may not choose the server, the model or the key are ignored and said once.
 */
import * as fs from "node:fs";
import { LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";
import { resolveServer } from "./serverPath";
import { ResolvedSettings, ignoredMessage, resolveSettings } from "./settings";
import { vscode } from "./vscodeapi";

const probe = {
  isExecutable(file: string): boolean {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return fs.statSync(file).isFile();
    } catch {
      return false;
    }
  },
};

export class ServerManager implements vscode.Disposable {
  client: LanguageClient | undefined;
  private readonly listeners: ((client: LanguageClient) => void)[] = [];
  private lastError: string | undefined;

  constructor(private readonly output: vscode.LogOutputChannel) {}

  onStarted(listener: (client: LanguageClient) => void): void {
    this.listeners.push(listener);
  }

  /** The settings the server was last started with (for the tests and other extensions). */
  settings: ResolvedSettings | undefined;
  private readonly reported = new Set<string>();

  /** The settings now, by who set them; workspace values not used are said once. */
  resolve(): ResolvedSettings {
    const config = vscode.workspace.getConfiguration("remora");
    const settings = resolveSettings((key) => config.inspect(key), vscode.workspace.isTrusted);
    const fresh = settings.ignored.filter((key) => !this.reported.has(key));
    if (fresh.length > 0) {
      for (const key of fresh) this.reported.add(key);
      const message = ignoredMessage(fresh);
      this.output.warn(message);
      void vscode.window.showWarningMessage(message);
    }
    return settings;
  }

  async start(): Promise<void> {
    const settings = this.resolve();
    this.settings = settings;
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const resolution = resolveServer(settings.serverPath, folders, process.env.PATH ?? "", probe, vscode.workspace.isTrusted);
    if (!resolution.found) {
      this.output.appendLine(resolution.reason);
      // Said once per distinct problem: a restart with the same bad setting stays quiet.
      if (this.lastError !== resolution.reason) {
        this.lastError = resolution.reason;
        void vscode.window.showErrorMessage(`Remora: ${resolution.reason}`, "Open Setting").then((choice) => {
          if (choice === "Open Setting") {
            void vscode.commands.executeCommand("workbench.action.openSettings", "remora.server.path");
          }
        });
      }
      return;
    }
    this.lastError = undefined;
    this.output.appendLine(`Starting ${resolution.command} ${settings.serverArgs.join(" ")} (from ${resolution.source})`);
    const serverOptions: ServerOptions = {
      command: resolution.command,
      // No `transport`: vscode-languageclient would add `--stdio`, which remora-lsp
      // does not take (stdio is its default).
      args: settings.serverArgs,
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file", language: "python" }],
      outputChannel: this.output,
      initializationOptions: settings.initializationOptions,
      synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher("**/*.py") },
      middleware: {
        workspace: {
          configuration: (params, token, next) => {
            if (!params.items.some((item) => item.section === "remora")) return next(params, token);
            const engine = { ...this.resolve().initializationOptions };
            delete engine.workspaceTrust; // a client's key, not a setting
            return params.items.map((item) =>
              item.section === "remora" ? engine : vscode.workspace.getConfiguration(item.section).get("") ?? null,
            );
          },
        },
        // Clicking a lens shows the node card instead of running the server command
        // (whose answer VS Code would drop).
        provideCodeLenses: async (document, token, next) => {
          const lenses = await next(document, token);
          return lenses?.map((lens) => rewriteLens(lens));
        },
        resolveCodeLens: async (lens, token, next) => {
          const resolved = await next(lens, token);
          return resolved ? rewriteLens(resolved) : resolved;
        },
      },
    };
    const client = new LanguageClient("remora", "Remora", serverOptions, clientOptions);
    this.client = client;
    // Handlers go on before start so no early notification or request is missed.
    for (const listener of this.listeners) listener(client);
    try {
      await client.start();
    } catch (error) {
      // The client has already shown the failure (and given up after its restarts):
      // the extension stays up, the Restart Server command can try again.
      this.output.appendLine(`remora-lsp did not start: ${String(error)}`);
      this.client = undefined;
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(5000);
      } catch (error) {
        this.output.appendLine(`Stopping remora-lsp: ${String(error)}`);
      }
    }
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  dispose(): void {
    void this.stop();
  }
}

function rewriteLens(lens: vscode.CodeLens): vscode.CodeLens {
  const command = lens.command;
  if (command?.command === "remora.node.get") {
    lens.command = { title: command.title, command: "remora.showNode", arguments: command.arguments };
  }
  return lens;
}
