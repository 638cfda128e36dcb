/**
 * Set Node Instructions (`remora.node.instructions.set`): a person's standing
 * instructions for the node at the cursor (or `node_id`), kept by the server in
 * the agent's memory and put in every later prompt of its agent. The input box
 * starts with the current instructions (from the node's card); an empty text
 * removes them. The card at the top of the Conversation view shows them.
 */
import type { Commands } from "./commands";
import { vscode } from "./vscodeapi";

type Args = Record<string, unknown> | undefined;

/** What `remora.node.instructions.set` answers. */
export interface InstructionsAnswer {
  node_id: string;
  instructions: string | null;
  changed: boolean;
}

export class InstructionCommands {
  constructor(private readonly commands: Commands) {}

  async setInstructions(args?: Args): Promise<InstructionsAnswer | undefined> {
    const card = await this.commands.nodeAtCursor(args);
    if (!card) {
      void vscode.window.showWarningMessage("Remora: no node at the cursor.");
      return undefined;
    }
    const name = card.qualified_name ?? card.name ?? card.id;
    const current = typeof card.instructions === "string" ? card.instructions : "";
    const given = typeof args?.text === "string" ? args.text : undefined;
    const text = given ?? (await vscode.window.showInputBox({
      prompt: `Standing instructions for ${name}'s agent (empty: none)`,
      value: current,
    }));
    if (text === undefined) return undefined; // dismissed: nothing changes
    const answer = await this.commands.exec<InstructionsAnswer>("remora.node.instructions.set", { node_id: card.id, text });
    void vscode.window.showInformationMessage(answer.instructions
      ? `Remora: ${name}'s agent follows your instructions from its next run.`
      : `Remora: ${name}'s agent has no standing instructions.`);
    await this.commands.conversation?.show(card.id); // its card shows them
    return answer;
  }

  register(context: vscode.ExtensionContext): void {
    context.subscriptions.push(
      vscode.commands.registerCommand("remora.setNodeInstructions", async (args?: unknown) => {
        try {
          const plain = typeof args === "object" && args !== null && !("contextValue" in args) ? (args as Args) : undefined;
          const nodeId = typeof args === "object" && args !== null && "nodeId" in args ? (args as { nodeId?: string }).nodeId : undefined;
          return await this.setInstructions(nodeId && plain?.node_id === undefined ? { ...plain, node_id: nodeId } : plain);
        } catch (error) {
          void vscode.window.showErrorMessage(error instanceof Error ? error.message : String(error));
          return undefined;
        }
      }),
    );
  }
}
