/**
 * The commands of what it cost and why it woke: Show Usage (`remora.usage`),
 * Show Subscriptions (`remora.subscriptions.list`, a quick pick to remove one
 * of the node's own: `remora.subscriptions.remove`), Mute / Unmute Node
 * (`remora.node.mute` / `remora.node.unmute`). What they show goes to the
 * Remora Events output; each returns it (for callers and tests).
 */
import type { Commands } from "./commands";
import { NodeSubscriptions, UsageReport, subscriptionLines, usageLines } from "./costs";
import { vscode } from "./vscodeapi";

type Args = Record<string, unknown> | undefined;

export class WakeCommands {
  constructor(
    private readonly commands: Commands,
    private readonly events: vscode.OutputChannel,
  ) {}

  private show(lines: string[]): { lines: string[] } {
    for (const line of lines) this.events.appendLine(line);
    this.events.show(true);
    return { lines };
  }

  async showUsage(args?: Args): Promise<unknown> {
    const since = typeof args?.since === "string" ? args.since : undefined;
    const report = await this.commands.exec<UsageReport>("remora.usage", since ? { since } : {});
    return this.show(usageLines(report));
  }

  async showSubscriptions(args?: Args): Promise<unknown> {
    const card = await this.commands.nodeAtCursor(args);
    if (!card) {
      void vscode.window.showWarningMessage("Remora: no node at the cursor.");
      return undefined;
    }
    const found = await this.commands.exec<NodeSubscriptions>("remora.subscriptions.list", { node_id: card.id });
    const shown = this.show(subscriptionLines(found, card.qualified_name ?? card.name ?? card.id));
    const own = (found.subscriptions ?? []).filter((s) => !s.default);
    const remove = typeof args?.remove === "string" ? args.remove : undefined;
    const picked = remove ?? (own.length > 0 && !args
      ? (await vscode.window.showQuickPick(own.map((s) => ({ label: s.id, description: s.text }))
        , { placeHolder: "Remove one of its own subscriptions? (Esc: keep them)" }))?.label
      : undefined);
    if (picked) await this.commands.exec("remora.subscriptions.remove", { node_id: card.id, subscription_id: picked });
    return shown;
  }

  async setMuted(muted: boolean, args?: Args): Promise<unknown> {
    const card = await this.commands.nodeAtCursor(args);
    if (!card) {
      void vscode.window.showWarningMessage("Remora: no node at the cursor.");
      return undefined;
    }
    const answer = await this.commands.exec<{ muted: boolean }>(muted ? "remora.node.mute" : "remora.node.unmute", { node_id: card.id });
    const name = card.qualified_name ?? card.name ?? card.id;
    void vscode.window.showInformationMessage(answer.muted ? `Remora: ${name} is muted: only your messages wake it.` : `Remora: ${name} wakes for its subscriptions again.`);
    return answer;
  }

  register(context: vscode.ExtensionContext): void {
    const add = (id: string, fn: (args?: Args) => Promise<unknown>): void => {
      context.subscriptions.push(
        vscode.commands.registerCommand(id, async (args?: unknown) => {
          try {
            const plain = typeof args === "object" && args !== null && !("contextValue" in args) ? (args as Args) : undefined;
            return await fn(plain);
          } catch (error) {
            void vscode.window.showErrorMessage(error instanceof Error ? error.message : String(error));
            return undefined;
          }
        }),
      );
    };
    add("remora.showUsage", (a) => this.showUsage(a));
    add("remora.showSubscriptions", (a) => this.showSubscriptions(a));
    add("remora.muteNode", (a) => this.setMuted(true, a));
    add("remora.unmuteNode", (a) => this.setMuted(false, a));
  }
}
