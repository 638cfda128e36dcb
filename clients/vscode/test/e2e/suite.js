/**
 * Runs inside the real VS Code extension host (code-server 1.100, see run.mjs):
 * acts as a person would through the real `vscode` API and the extension's
 * commands, and writes what it saw to $REMORA_E2E_OUT. The assertions are in
 * tests/clients/test_vscode.py; the model is the scripted server it started.
 */
const fs = require("node:fs");
const path = require("node:path");
const vscode = require("vscode");

const OUT = process.env.REMORA_E2E_OUT;
const observed = { steps: [] };
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

/** Ask the runner (run.mjs) for a screenshot and the notifications on screen. */
async function snapshot(name, timeoutMs = 20000) {
  const marker = `${OUT}.${name}.done`;
  console.log(`REMORA_SNAPSHOT ${name}`);
  await until(`snapshot ${name}`, () => fs.existsSync(marker), timeoutMs);
  return JSON.parse(fs.readFileSync(marker, "utf8"));
}

/** Ask the runner to type ``value`` into the open input box and press Enter,
 *  as a person would (the extension showed it for the agent's question). */
async function typeAnswer(name, value) {
  const marker = `${OUT}.${name}.done`;
  console.log(`REMORA_TYPE ${name} ${value}`);
  await until(`typing ${name}`, () => fs.existsSync(marker), 30000);
  return JSON.parse(fs.readFileSync(marker, "utf8"));
}

/** Ask the runner to press a key in the open input box. */
async function pressKey(name, key) {
  const marker = `${OUT}.${name}.done`;
  console.log(`REMORA_KEY ${name} ${key}`);
  await until(`key ${name}`, () => fs.existsSync(marker), 30000);
  return JSON.parse(fs.readFileSync(marker, "utf8"));
}

/** Ask the runner for the text the Conversation webview shows (its DOM, read by Playwright). */
async function webviewText(name) {
  const marker = `${OUT}.${name}.done`;
  console.log(`REMORA_WEBVIEW ${name}`);
  await until(`webview ${name}`, () => fs.existsSync(marker), 30000);
  return JSON.parse(fs.readFileSync(marker, "utf8"));
}

/** Ask the runner to click what `selector` finds in the Conversation webview. */
async function clickWebview(name, selector) {
  const marker = `${OUT}.${name}.done`;
  console.log(`REMORA_CLICK ${name} ${selector}`);
  await until(`click ${name}`, () => fs.existsSync(marker), 30000);
  return JSON.parse(fs.readFileSync(marker, "utf8"));
}

function flatten(symbols, into = []) {
  for (const s of symbols) {
    into.push(s);
    flatten(s.children || [], into);
  }
  return into;
}

function step(name) {
  observed.steps.push(name);
  fs.writeFileSync(OUT, JSON.stringify(observed, null, 1));
}

async function scenario() {
  const ext = vscode.extensions.getExtension("remora.remora");
  const api = await ext.activate();
  observed.activatedInMs = api.activatedInMs;
  observed.serverRunning = api.server.client !== undefined;
  step("activated");

  const folder = vscode.workspace.workspaceFolders[0].uri.fsPath;
  const uri = vscode.Uri.file(path.join(folder, "pkg", "service.py"));
  const doc = await vscode.workspace.openTextDocument(uri);
  const editor = await vscode.window.showTextDocument(doc);
  const symbols = await until("the outline", async () => {
    const s = await vscode.commands.executeCommand("vscode.executeDocumentSymbolProvider", uri);
    return s && s.length > 0 ? s : undefined;
  });
  const all = flatten(symbols);
  observed.outline = all.map((s) => ({ name: s.name, detail: s.detail }));
  step("outline");

  const lenses = await vscode.commands.executeCommand("vscode.executeCodeLensProvider", uri, 100);
  observed.lenses = lenses.map((l) => ({ line: l.range.start.line, title: l.command && l.command.title, command: l.command && l.command.command }));
  step("lenses");

  await vscode.commands.executeCommand("workbench.view.extension.remora");
  await api.tree.refresh();
  const labels = (items) => items.flatMap((i) => [i.label, ...labels(i.children)]);
  observed.tree = labels(api.tree.getChildren());
  step("tree");

  // Ask the node `helper` (cursor on its name), through the command with an argument object.
  const helper = all.find((s) => s.name === "helper");
  const at = helper.selectionRange.start;
  editor.selection = new vscode.Selection(at, at);
  const askedAt = Date.now();
  observed.askResult = await vscode.commands.executeCommand("remora.ask", { message: "Add a docstring" });
  const diagnostic = await until("a remora diagnostic", () =>
    vscode.languages.getDiagnostics(uri).find((d) => d.source === "remora"), 60000);
  observed.askToDiagnosticMs = Date.now() - askedAt;
  observed.diagnostic = { message: diagnostic.message, line: diagnostic.range.start.line, code: String(diagnostic.code && (diagnostic.code.value || diagnostic.code)) };
  step("diagnostic");

  await vscode.commands.executeCommand("remora.showDiff", {});
  await until("a diff tab", () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputTextDiff));
  const diffTab = vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputTextDiff);
  observed.diffTab = { label: diffTab.label, original: diffTab.input.original.toString(), modified: diffTab.input.modified.toString() };
  observed.diffRight = (await vscode.workspace.openTextDocument(diffTab.input.modified)).getText();
  await api.tree.refresh();
  observed.treePending = JSON.stringify(api.tree.getChildren().map((i) => ({ label: i.label, pending: i.pending, children: i.children.map((c) => [c.label, c.pending]) })));
  await vscode.commands.executeCommand("workbench.actions.view.problems");
  await vscode.commands.executeCommand("workbench.action.focusSideBar");
  observed.screenshot = await snapshot("diff");
  step("diff");

  await vscode.window.showTextDocument(doc);
  const actions = await vscode.commands.executeCommand("vscode.executeCodeActionProvider", uri, diagnostic.range, undefined, 10);
  observed.actions = actions.map((a) => a.title);
  const accept = actions.find((a) => a.title.startsWith("Accept"));
  observed.acceptHasEdit = Boolean(accept && accept.edit);
  if (accept.edit) await vscode.workspace.applyEdit(accept.edit);
  if (accept.command) await vscode.commands.executeCommand(accept.command.command, ...(accept.command.arguments || []));
  observed.rewriteApplied = await until("rewrite_applied", () => api.events.find((e) => e.type === "rewrite_applied"), 30000);
  observed.documentAfterAccept = doc.getText();
  step("accepted");

  // Reject with feedback: a second proposal, rejected with a reason the model then reads.
  editor.selection = new vscode.Selection(at, at);
  await vscode.commands.executeCommand("remora.ask", { message: "Shorten it" });
  const second = await until("a second proposal", () => api.events.find((e) => e.type === "rewrite_proposed" && e.proposal_id !== observed.rewriteApplied.proposal_id), 60000);
  observed.rejectResult = await vscode.commands.executeCommand("remora.rejectProposal", { proposal_id: second.proposal_id, feedback: "Keep the docstring please" });
  await until("the run after the rejection ends", () => api.events.find((e) => e.type === "agent_completed" && e.run_id === observed.rejectResult.run_id), 60000);
  step("rejected");

  // cancelRun ends a slow run.
  const slow = await vscode.commands.executeCommand("remora.ask", { message: "Take your time" });
  await until("the slow run started", () => api.events.find((e) => e.type === "agent_started" && e.run_id === slow.run_id), 30000);
  observed.cancelResult = await vscode.commands.executeCommand("remora.cancelRun", { run_id: slow.run_id });
  observed.cancelEvent = await until("agent_cancelled", () => api.events.find((e) => e.type === "agent_cancelled" && e.run_id === slow.run_id), 30000);
  step("cancelled");

  // Clicking helper's lens shows its node card, on top of its conversation (the lens's own command and arguments).
  const lens = lenses.find((l) => l.command && l.range.start.line === helper.range.start.line);
  observed.lensCard = await vscode.commands.executeCommand(lens.command.command, ...(lens.command.arguments || []));
  observed.cardShown = await until("the card in the Conversation view", () =>
    (api.conversation.nodeId === observed.lensCard.id && api.conversation.shownText.includes("Service.helper") ? api.conversation.shownText : undefined), 15000);
  step("card");

  // A question from the agent, answered through the input box.
  const back = await vscode.window.showTextDocument(doc);
  back.selection = new vscode.Selection(at, at);
  const asking = await vscode.commands.executeCommand("remora.ask", { message: "Ask me for a name" });
  observed.asking = asking;
  observed.question = await until("the question", () => api.events.find((e) => e.type === "agent_blocked" && e.run_id === asking.run_id), 30000);
  observed.typed = await typeAnswer("answer", "Ada Lovelace");
  observed.answeredRun = await until("the answered run ends", () => api.events.find((e) => e.type === "agent_completed" && e.run_id === asking.run_id), 30000);
  step("answered");

  // The Conversation and Runs views (test/e2e/talk.js).
  await require("./talk").run({ api, doc, at, helperId: observed.lensCard.id, observed, until, step, snapshot, webviewText, clickWebview, typeAnswer, pressKey });

  // Batch: graphs, the Proposals view, accept-all, blame, checkpoints (batch.js).
  await require("./batch").run(api, observed, step);

  // New files and change sets (sets.js).
  await require("./sets").run(api, observed, step, { until, snapshot });

  // A missing server path: one error notification with the button, no crash loop.
  await vscode.workspace.getConfiguration("remora").update("server.path", "/nonexistent/remora-lsp", vscode.ConfigurationTarget.Global);
  await until("the server stopped", () => api.server.client === undefined, 20000);
  await sleep(1500);
  await vscode.commands.executeCommand("remora.restartServer");
  await sleep(500);
  observed.missing = await snapshot("missing");
  observed.serverRunningAfterMissing = api.server.client !== undefined;
  step("missing");
}

exports.run = async function run() {
  try {
    await scenario();
    observed.ok = true;
  } catch (error) {
    observed.ok = false;
    observed.error = String((error && error.stack) || error);
  }
  fs.writeFileSync(OUT, JSON.stringify(observed, null, 1));
};
