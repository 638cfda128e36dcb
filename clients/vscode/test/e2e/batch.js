/**
 * The batch scenarios of the VS Code e2e (called from suite.js, in the same
 * extension host and server): settings a repository's .vscode/settings.json
 * tried to set, a checkpoint, a two-node graph run picked from the quick pick,
 * its proposals in the Proposals view and accepted together from it (both files
 * edited, undoable), blame decorations on the lines it wrote, the graph run
 * reverted as proposals accepted together, and the checkpoint restored after
 * a confirmation that names what changes. Writes
 * what it saw under `observed.batch`; tests/clients/vscode_batch.py asserts.
 */
const fs = require("node:fs");
const path = require("node:path");
const vscode = require("vscode");

const OUT = process.env.REMORA_E2E_OUT;
const GRAPH = "vscode-docs";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, fn, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Ask the runner (run.mjs) to type into the quick input or take a snapshot, and wait for what it saw. */
async function runner(kind, name, value) {
  const marker = `${OUT}.${name}.done`;
  console.log(`REMORA_${kind} ${name}${value === undefined ? "" : ` ${value}`}`);
  await until(`${kind.toLowerCase()} ${name}`, () => fs.existsSync(marker), 30000);
  return JSON.parse(fs.readFileSync(marker, "utf8"));
}

function describeTree(provider, element, depth = 0) {
  return provider.getChildren(element).flatMap((child) => {
    const item = provider.getTreeItem(child);
    const row = { depth, kind: child.kind, label: String(item.label), description: item.description, context: item.contextValue };
    return [row, ...(depth < 2 ? describeTree(provider, child, depth + 1) : [])];
  });
}

exports.run = async function run(api, observed, step) {
  const b = (observed.batch = {});
  const folder = vscode.workspace.workspaceFolders[0].uri.fsPath;
  const modelsUri = vscode.Uri.file(path.join(folder, "pkg", "models.py"));
  const serviceUri = vscode.Uri.file(path.join(folder, "pkg", "service.py"));

  // The diff of the method proposal accepted earlier: the real file's name and language.
  await vscode.commands.executeCommand("remora.showDiff", { proposal_id: observed.rewriteApplied.proposal_id });
  const diffTab = await until("the method's diff tab", () =>
    vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.path.includes(observed.rewriteApplied.proposal_id)));
  const right = await vscode.workspace.openTextDocument(diffTab.input.modified);
  b.diff = { label: diffTab.label, modified: diffTab.input.modified.toString(), languageId: right.languageId, firstLine: right.getText().split("\n")[0] };

  // What the server was started with, after the repository's .vscode/settings.json had its say.
  b.settingsSent = api.server.settings;
  b.trusted = vscode.workspace.isTrusted;
  step("batch: settings");

  // A checkpoint, then a graph picked from the quick pick as a person would.
  b.checkpoint = await vscode.commands.executeCommand("remora.createCheckpoint", { label: "before the batch" });
  b.graphs = await vscode.commands.executeCommand("remora.graphs.list", {});
  const modelsDoc = await vscode.workspace.openTextDocument(modelsUri);
  const serviceDoc = await vscode.workspace.openTextDocument(serviceUri);
  b.before = { models: modelsDoc.getText(), service: serviceDoc.getText() };
  await vscode.window.showTextDocument(modelsDoc);
  const running = vscode.commands.executeCommand("remora.runGraph");
  b.picked = await runner("TYPE", "graph", GRAPH);
  b.run = await running;
  b.status = await vscode.commands.executeCommand("remora.graphStatus", { graph_run_id: b.run.graph_run_id });
  step("batch: graph run");

  // The run's proposals in the Proposals view, grouped by file, and the open file's count.
  // (Graph Status opened its preview, which a moment later may be the active
  // editor: a person looks back at models.py, and the status bar counts it.)
  await vscode.window.showTextDocument(modelsDoc);
  await until("models.py active again", () => vscode.window.activeTextEditor?.document === modelsDoc || undefined, 15000);
  const proposals = api.batch.proposals;
  await proposals.refresh();
  b.view = describeTree(proposals);
  b.statusHere = proposals.statusShown();
  await vscode.commands.executeCommand("remora.proposals.focus");

  // The restore's confirmation names the proposals it would withdraw; cancelled here.
  // (The workbench under test refuses modal dialogs and shows their contents as a
  // notification instead: the restore does not happen, as when a person cancels.)
  b.cancelledRestore = (await vscode.commands.executeCommand("remora.restoreCheckpoint", { checkpoint_id: b.checkpoint.checkpoint_id })) ?? null;
  b.confirmation = api.batch.lastConfirmation;
  b.pendingAfterCancel = (await vscode.commands.executeCommand("remora.proposals.list", { status: "pending" })).map((p) => p.id);
  b.viewShot = await runner("SNAPSHOT", "proposals");
  step("batch: proposals view");

  // Accept all from the view's graph-run item: one result per proposal, both files edited.
  const runItem = proposals.getChildren().find((e) => e.kind === "graphRun" && e.graph_run_id === b.run.graph_run_id);
  b.acceptAll = await vscode.commands.executeCommand("remora.acceptAll", runItem);
  await until("both rewrite_applied", () =>
    b.run.proposal_ids.every((id) => api.events.some((e) => e.type === "rewrite_applied" && e.proposal_id === id)),
  );
  b.after = { models: modelsDoc.getText(), service: serviceDoc.getText(), dirty: [modelsDoc.isDirty, serviceDoc.isDirty] };
  await proposals.refresh();
  b.viewAfterAccept = describeTree(proposals);
  step("batch: accepted all");

  // Blame: the lines the graph's agent wrote are marked, with who, which proposal and a link.
  const shownModels = await vscode.window.showTextDocument(modelsDoc);
  const docLine = modelsDoc.getText().split("\n").findIndex((l) => l.includes("VSCODE_BATCH"));
  shownModels.revealRange(new vscode.Range(docLine, 0, docLine, 0), vscode.TextEditorRevealType.InCenter);
  b.attribution = await vscode.commands.executeCommand("remora.attribution", { uri: modelsUri.toString() });
  b.blameToggle = await vscode.commands.executeCommand("remora.toggleBlame");
  b.blame = await until("blame decorations", () => {
    const shown = api.batch.blame.shown.get(modelsUri.toString());
    b.blameSeen = shown;
    return shown && shown.lines.length > 0 ? shown : undefined;
  }, 15000).catch((e) => { throw new Error(`${e} ${JSON.stringify({ attribution: b.attribution, seen: b.blameSeen, keys: [...api.batch.blame.shown.keys()] })}`); });
  b.blameShot = await runner("SNAPSHOT", "blame");
  await vscode.commands.executeCommand("remora.toggleBlame", { enabled: false });
  b.blameOff = api.batch.blame.shown.size;
  step("batch: blame");

  // Undo: the edit was the editor's, so Undo takes it back (across both files).
  await vscode.window.showTextDocument(modelsDoc);
  await vscode.commands.executeCommand("undo");
  await until("both files undone", () => !modelsDoc.getText().includes("VSCODE_BATCH") && !serviceDoc.getText().includes("VSCODE_BATCH"), 10000).catch(() => undefined);
  b.undone = { models: modelsDoc.getText(), service: serviceDoc.getText() };
  b.undoShot = await runner("SNAPSHOT", "undo");
  step("batch: undone");

  // Redo, then a way back that is reviewed: Revert Graph Run proposes one revert
  // per file (on screen, with Show Diff / Accept All); accepted together, both
  // files are as before.
  await vscode.commands.executeCommand("redo");
  await until("both files redone", () => modelsDoc.getText().includes("VSCODE_BATCH") && serviceDoc.getText().includes("VSCODE_BATCH"), 10000).catch(() => undefined);
  b.redone = { models: modelsDoc.getText().includes("VSCODE_BATCH"), service: serviceDoc.getText().includes("VSCODE_BATCH") };
  b.revert = await vscode.commands.executeCommand("remora.revertGraphRun", { graph_run_id: b.run.graph_run_id });
  b.revertMessages = api.batch.lastRevertMessages;
  b.revertPending = { models: modelsDoc.getText().includes("VSCODE_BATCH"), service: serviceDoc.getText().includes("VSCODE_BATCH") };
  b.revertShot = await runner("SNAPSHOT", "revert");
  b.revertAccepted = await vscode.commands.executeCommand("remora.proposals.accept", { proposal_ids: (b.revert && b.revert.proposal_ids) || [] });
  await until("both files reverted", () => !modelsDoc.getText().includes("VSCODE_BATCH") && !serviceDoc.getText().includes("VSCODE_BATCH"), 10000).catch(() => undefined);
  b.reverted = { models: modelsDoc.getText(), service: serviceDoc.getText() };
  step("batch: reverted");

  // Restore the checkpoint for real: listed, confirmed, agents' state back, files untouched.
  b.checkpoints = await vscode.commands.executeCommand("remora.listCheckpoints", { pick: false });
  b.restored = await vscode.commands.executeCommand("remora.restoreCheckpoint", { checkpoint_id: b.checkpoint.checkpoint_id, confirmed: true });
  b.restoreConfirmation = api.batch.lastConfirmation;
  b.restoredEvent = await until("checkpoint_restored", () => api.events.find((e) => e.type === "checkpoint_restored"), 15000);
  b.restoredShot = await runner("SNAPSHOT", "restored");
  b.afterRestore = { models: modelsDoc.getText(), service: serviceDoc.getText() };
  step("batch: restored");
};
