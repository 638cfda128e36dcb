/**
 * The Remora activity-bar tree: the open file's nodes, from the server's outline
 * (the status-bar item is `statusBar.ts`).
 */
import type { ServerManager } from "./client";
import { NodeItem, SymbolLike, buildTree, describeItem } from "./nodeTree";
import { vscode } from "./vscodeapi";

const KIND_ICON: Record<number, string> = { 5: "symbol-class", 6: "symbol-method", 12: "symbol-function", 2: "symbol-module" };

export class NodeTreeProvider implements vscode.TreeDataProvider<NodeItem> {
  private readonly changed = new vscode.EventEmitter<NodeItem | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private roots: NodeItem[] = [];
  private uri: vscode.Uri | undefined;

  constructor(private readonly server: ServerManager) {}

  /** Re-read the outline of the active Python file. */
  async refresh(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const document = editor?.document;
    if (document && document.languageId === "python" && document.uri.scheme === "file") {
      this.uri = document.uri;
    }
    if (!this.uri || !this.server.client) {
      this.roots = [];
    } else {
      const symbols = (await vscode.commands.executeCommand<SymbolLike[] | undefined>(
        "vscode.executeDocumentSymbolProvider",
        this.uri,
      )) ?? [];
      const pending = await this.pendingByNode(this.uri);
      this.roots = buildTree(symbols.filter((s) => "selectionRange" in s), pending);
    }
    this.changed.fire(undefined);
  }

  private async pendingByNode(uri: vscode.Uri): Promise<Map<string, string[]>> {
    const result = new Map<string, string[]>();
    try {
      const proposals = (await this.server.client?.sendRequest("workspace/executeCommand", {
        command: "remora.proposals.list",
        arguments: [{ uri: uri.toString(), status: "pending" }],
      })) as { id?: string; proposal_id?: string; node_id?: string }[] | undefined;
      for (const p of proposals ?? []) {
        const id = p.proposal_id ?? p.id;
        if (p.node_id && id) result.set(p.node_id, [...(result.get(p.node_id) ?? []), id]);
      }
    } catch {
      // A server without proposals (or mid-restart) still shows the outline.
    }
    return result;
  }

  pendingCount(): number {
    const count = (items: NodeItem[]): number => items.reduce((n, i) => n + i.pending.length + count(i.children), 0);
    return count(this.roots);
  }

  getChildren(element?: NodeItem): NodeItem[] {
    return element ? element.children : this.roots;
  }

  getTreeItem(element: NodeItem): vscode.TreeItem {
    const item = new vscode.TreeItem(
      element.label,
      element.children.length > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None,
    );
    item.description = describeItem(element);
    item.iconPath = new vscode.ThemeIcon(KIND_ICON[element.kind] ?? "symbol-misc");
    item.contextValue = element.pending.length > 0 ? "node-pending" : "node";
    item.tooltip = element.nodeId ? `${element.nodeId} ${element.status}` : element.label;
    if (this.uri) {
      const at = new vscode.Position(element.line, element.character);
      item.command = {
        title: "Reveal",
        command: "vscode.open",
        arguments: [this.uri, { selection: new vscode.Range(at, at) }],
      };
    }
    return item;
  }
}
