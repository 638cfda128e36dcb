/**
 * The Nodes view's data: the open file's document symbols (the server's outline,
 * whose `detail` carries the node id and agent status) as a tree, with pending
 * proposals per node. Pure: symbols come in as plain data.
 */
export interface SymbolLike {
  name: string;
  detail?: string;
  kind: number;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  selectionRange: { start: { line: number; character: number }; end: { line: number; character: number } };
  children?: SymbolLike[];
}

export interface NodeItem {
  label: string;
  nodeId: string | undefined;
  status: string;
  kind: number;
  pending: string[];
  line: number;
  character: number;
  children: NodeItem[];
}

const ID = /\b(rm_[A-Za-z0-9_]+)/;

/** The node id and status from a symbol's detail (e.g. "rm_ab12 · idle"). */
export function parseDetail(detail: string | undefined): { nodeId: string | undefined; status: string } {
  if (!detail) return { nodeId: undefined, status: "" };
  const match = ID.exec(detail);
  const status = detail.replace(ID, "").replace(/^[\s·|:,-]+|[\s·|:,-]+$/g, "");
  return { nodeId: match?.[1], status };
}

export function buildTree(symbols: readonly SymbolLike[], pendingByNode: ReadonlyMap<string, string[]>): NodeItem[] {
  return [...symbols]
    .sort((a, b) => a.range.start.line - b.range.start.line)
    .map((symbol) => {
      const { nodeId, status } = parseDetail(symbol.detail);
      return {
        label: symbol.name,
        nodeId,
        status,
        kind: symbol.kind,
        pending: nodeId ? [...(pendingByNode.get(nodeId) ?? [])] : [],
        line: symbol.selectionRange.start.line,
        character: symbol.selectionRange.start.character,
        children: buildTree(symbol.children ?? [], pendingByNode),
      };
    });
}

export function describeItem(item: NodeItem): string {
  const pending = item.pending.length > 0 ? `${item.pending.length} pending` : "";
  return [item.status, pending].filter((p) => p !== "").join(" · ");
}
