/**
 * Show Trust (`remora.trust.get`): whether each folder's repository is
 * trusted (in VS Code: its workspace trust decides, so the server never asks
 * and Remora never sets it), what the repository wants that needs trust, and
 * which hosts may receive your API key. Printed to the Remora Events output;
 * when you answered something (a key's host), a button forgets your answers
 * (`remora.trust.revoke`: every host is asked about again). Returns what it
 * showed (for callers and tests); `{forget: true}` forgets without the button.
 */
import type { Commands } from "./commands";
import { TrustRow, hasAnswers, trustLines } from "./trustModel";
import { vscode } from "./vscodeapi";

const FORGET = "Forget My Answers";

export class TrustCommands {
  constructor(
    private readonly commands: Commands,
    private readonly events: vscode.OutputChannel,
  ) {}

  async showTrust(args?: Record<string, unknown>): Promise<{ lines: string[]; forgotten?: string[] }> {
    const rows = await this.commands.exec<TrustRow[]>("remora.trust.get", {});
    const lines = trustLines(rows);
    for (const line of lines) this.events.appendLine(line);
    this.events.show(true);
    const forget = args?.forget === true
      || (args === undefined && hasAnswers(rows)
        && (await vscode.window.showInformationMessage(`${lines[0] ?? "Remora trust"} (more in the Remora Events output)`, FORGET)) === FORGET);
    if (!forget) return { lines };
    const after = trustLines(await this.commands.exec<TrustRow[]>("remora.trust.revoke", {}));
    for (const line of after) this.events.appendLine(line);
    void vscode.window.showInformationMessage("Remora: your answers about this project are forgotten; you will be asked again.");
    return { lines, forgotten: after };
  }

  register(context: vscode.ExtensionContext): void {
    context.subscriptions.push(
      vscode.commands.registerCommand("remora.showTrust", async (args?: unknown) => {
        try {
          const plain = typeof args === "object" && args !== null ? (args as Record<string, unknown>) : undefined;
          return await this.showTrust(plain);
        } catch (error) {
          void vscode.window.showErrorMessage(error instanceof Error ? error.message : String(error));
          return undefined;
        }
      }),
    );
  }
}
