/**
 * New files and change sets in the VS Code e2e (called from suite.js, same
 * extension host and server; issue 27 §1–§2). The scripted model
 * (tests/clients/vscode_sets.py) answers four asks of `order`'s agent:
 *
 * 1. a new file (`create_file`): listed as "create tests/test_service.py",
 *    accepted from the Proposals view → the file exists with its text; then
 *    what Undo does to it;
 * 2. a change set over service.py, models.py and a new pkg/currency.py: one
 *    item with its members, a member's diff, the whole set's diff, a member
 *    that needs others refused alone, then Accept All → all three changed;
 * 3. a set rejected with feedback (the model's next request carries it);
 *    then a set whose new file is rejected alone ("Reject Only This
 *    Member…" on its item, with feedback): the set lists the two members
 *    left, and Accept All lands them without the file;
 * 4. a set one of whose documents the person edits first → Accept All applies
 *    nothing, says stale; the view shows it stale (why) until dismissed.
 *
 * Writes what it saw under `observed.sets`; tests/clients/vscode_sets.py asserts.
 */
const fs = require("node:fs");
const path = require("node:path");
const vscode = require("vscode");

function describeTree(provider, element, depth = 0) {
  return provider.getChildren(element).flatMap((child) => {
    const item = provider.getTreeItem(child);
    const row = {
      depth,
      kind: child.kind,
      label: String(item.label),
      description: item.description,
      context: item.contextValue,
      icon: item.iconPath && item.iconPath.id,
      command: item.command && { command: item.command.command, arguments: item.command.arguments },
    };
    return [row, ...(depth < 2 ? describeTree(provider, child, depth + 1) : [])];
  });
}

function tabs() {
  return vscode.window.tabGroups.all.flatMap((g) => g.tabs);
}

/** ``until`` and ``snapshot`` are the suite's (suite.js); a snapshot here may wait 30 s. */
exports.run = async function run(api, observed, step, { until, snapshot: suiteSnapshot }) {
  const snapshot = (name) => suiteSnapshot(name, 30000);
  const s = (observed.sets = {});
  const folder = vscode.workspace.workspaceFolders[0].uri.fsPath;
  const file = (p) => vscode.Uri.file(path.join(folder, ...p.split("/")));
  const serviceDoc = await vscode.workspace.openTextDocument(file("pkg/service.py"));
  const modelsDoc = await vscode.workspace.openTextDocument(file("pkg/models.py"));
  const proposals = api.batch.proposals;
  const events = (type, fields = {}) => api.events.filter((e) => e.type === type && Object.entries(fields).every(([k, v]) => e[k] === v));

  /** Ask `order`'s agent; the proposal its run made. */
  async function ask(message) {
    const editor = await vscode.window.showTextDocument(serviceDoc);
    const line = serviceDoc.getText().split("\n").findIndex((l) => l.startsWith("def order"));
    editor.selection = new vscode.Selection(line, 5, line, 5);
    const asked = await vscode.commands.executeCommand("remora.ask", { message });
    await until(`the run of "${message}" to end`, () => events("agent_completed", { run_id: asked.run_id }).length > 0, 60000);
    const made = events("rewrite_proposed", { run_id: asked.run_id })[0];
    if (!made) throw new Error(`no proposal from "${message}": ${JSON.stringify(events("tool_result", { run_id: asked.run_id }))}`);
    await proposals.refresh();
    return made.proposal_id;
  }

  // 1. A new file, accepted from its item in the Proposals view.
  const newFile = await ask("SETS_NEW_FILE please");
  s.newFileView = describeTree(proposals);
  const line = serviceDoc.getText().split("\n").findIndex((l) => l.startsWith("def order"));
  const actions = await vscode.commands.executeCommand("vscode.executeCodeActionProvider", serviceDoc.uri, new vscode.Range(line, 0, line, 0), undefined, 10);
  s.newFileActions = actions.map((a) => a.title);
  const newItem = proposals.getChildren().flatMap((e) => (e.kind === "file" ? proposals.getChildren(e) : [])).find((e) => e.proposal_id === newFile);
  const created = file("tests/test_service.py");
  s.newFileBefore = fs.existsSync(created.fsPath);
  s.newFileAccepted = await vscode.commands.executeCommand("remora.acceptProposal", newItem);
  await until("the new file's acceptance recorded", () => events("rewrite_applied", { proposal_id: newFile }).length > 0, 30000);
  const createdDoc = await vscode.workspace.openTextDocument(created);
  s.newFileAfter = { exists: fs.existsSync(created.fsPath), text: createdDoc.getText(), dirty: createdDoc.isDirty, disk: fs.readFileSync(created.fsPath, "utf8") };
  step("sets: new file accepted");

  // Undo in the new file's editor: what VS Code takes back.
  await vscode.window.showTextDocument(createdDoc);
  await vscode.commands.executeCommand("undo");
  // VS Code deletes the file first and closes its editor a moment later:
  // wait for the whole undo (or its text back), not its first half.
  await until("the undo to land", () => (createdDoc.isClosed && !fs.existsSync(created.fsPath)) || (!createdDoc.isClosed && createdDoc.getText() !== s.newFileAfter.text && fs.existsSync(created.fsPath)), 10000).catch(() => undefined);
  s.newFileUndone = { exists: fs.existsSync(created.fsPath), text: createdDoc.isClosed ? null : createdDoc.getText(), closed: createdDoc.isClosed };
  s.newFileUndoShot = await snapshot("setsundo");
  step("sets: new file undone");

  // 2. A change set across three files (one new): one item with its members.
  const setId = await ask("SETS_CHANGE_SET please");
  s.setId = setId;
  s.view = describeTree(proposals);
  s.statusHere = proposals.statusShown();
  await vscode.commands.executeCommand("remora.proposals.focus");
  s.viewShot = await snapshot("sets");

  // A member's diff: the new file against nothing.
  await vscode.commands.executeCommand("remora.showDiff", { proposal_id: setId, member: 2 });
  const memberTab = await until("the member's diff tab", () =>
    tabs().find((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.path.includes(setId) && t.input.modified.query.includes("member=2")));
  s.memberDiff = {
    label: memberTab.label,
    left: (await vscode.workspace.openTextDocument(memberTab.input.original)).getText(),
    right: (await vscode.workspace.openTextDocument(memberTab.input.modified)).getText(),
    language: (await vscode.workspace.openTextDocument(memberTab.input.modified)).languageId,
  };
  await vscode.commands.executeCommand("remora.showDiff", { proposal_id: setId, member: 1 });
  const modelsTab = await until("the models member's diff tab", () =>
    tabs().find((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.path.includes(setId) && t.input.modified.query.includes("member=1")));
  s.modelsDiff = {
    left: (await vscode.workspace.openTextDocument(modelsTab.input.original)).getText(),
    right: (await vscode.workspace.openTextDocument(modelsTab.input.modified)).getText(),
  };
  // The whole set: every member's diff in one editor, titled with the set.
  s.setDiff = await vscode.commands.executeCommand("remora.showDiff", { proposal_id: setId });
  s.setDiffTab = await until("the set's diff editor", () => {
    const found = tabs().find((t) => t.label.startsWith("Change set: add currency"));
    return found && { label: found.label, input: found.input && found.input.constructor && found.input.constructor.name };
  }, 10000).catch((e) => ({ error: String(e), tabs: tabs().map((t) => t.label) }));
  s.setDiffShot = await snapshot("setsdiff");
  step("sets: diffs");

  // Accepting `order` alone would leave code that calls what is not there: refused, saying why.
  s.memberAlone = await vscode.commands.executeCommand("remora.acceptMember", { proposal_id: setId, member: 0 });
  // Rejecting the new module alone would leave the others calling what is not there: refused, naming them.
  s.memberNeeded = await vscode.commands.executeCommand("remora.rejectMember", { proposal_id: setId, member: 2, feedback: "not this one" });
  // The same from the member's code action (the server's, any LSP client's):
  // the refusal is the server's message, the command answers nothing.
  const orderLine = serviceDoc.getText().split("\n").findIndex((l) => l.startsWith("def order"));
  const setActions = await vscode.commands.executeCommand("vscode.executeCodeActionProvider", serviceDoc.uri, new vscode.Range(orderLine, 0, orderLine, 0), undefined, 20);
  s.memberActions = setActions.map((a) => a.title).filter((t) => t.startsWith("Reject member "));
  const neededAction = setActions.find((a) => a.title.startsWith("Reject member 3 "));
  s.memberActionRefused = neededAction ? ((await vscode.commands.executeCommand(neededAction.command.command, ...neededAction.command.arguments)) ?? null) : "no action";
  s.before = { service: serviceDoc.getText(), models: modelsDoc.getText() };
  const setItem = proposals.getChildren().find((e) => e.kind === "changeSet" && e.proposal_id === setId);
  s.accepted = await vscode.commands.executeCommand("remora.acceptChangeSet", setItem);
  await until("the set's acceptance recorded", () => events("rewrite_applied", { proposal_id: setId }).length > 0, 30000);
  const currency = file("pkg/currency.py");
  const currencyDoc = await vscode.workspace.openTextDocument(currency);
  s.after = { service: serviceDoc.getText(), models: modelsDoc.getText(), currency: currencyDoc.getText(), currencyExists: fs.existsSync(currency.fsPath) };
  await proposals.refresh();
  s.viewAfter = describeTree(proposals);
  step("sets: accepted all");

  // 3. A set rejected with feedback: the agent that made it hears it.
  const rejectedId = await ask("SETS_REJECT_SET please");
  const rejectItem = proposals.getChildren().find((e) => e.kind === "changeSet" && e.proposal_id === rejectedId);
  s.rejected = await vscode.commands.executeCommand("remora.rejectProposal", { ...rejectItem, feedback: "SETS_FEEDBACK keep the rates where they are" });
  await until("the run after the rejection", () => events("agent_completed", { run_id: s.rejected && s.rejected.run_id }).length > 0, 60000);
  s.rejectedEvent = events("rewrite_rejected", { proposal_id: rejectedId })[0];
  step("sets: rejected");

  // 3b. One member rejected from its item, with feedback; the rest accepted after.
  const menus = vscode.extensions.getExtension("remora.remora").packageJSON.contributes.menus["view/item/context"];
  const commands = vscode.extensions.getExtension("remora.remora").packageJSON.contributes.commands;
  s.memberMenu = menus
    .filter((m) => m.when.includes("viewItem == changeSetMember"))
    .map((m) => (commands.find((c) => c.command === m.command) || {}).title);
  const partialId = await ask("SETS_MEMBER_SET please");
  const partialItem = proposals.getChildren().find((e) => e.kind === "changeSet" && e.proposal_id === partialId);
  const memberItem = proposals.getChildren(partialItem).find((e) => e.kind === "member" && e.member === 2);
  s.memberRejected = await vscode.commands.executeCommand("remora.rejectMember", { ...memberItem, feedback: "SETS_FEEDBACK keep the rates where they are" });
  await until("the run after the member's rejection", () => events("agent_completed", { run_id: s.memberRejected && s.memberRejected.run_id }).length > 0, 60000);
  s.memberRejectedEvent = events("rewrite_rejected", { proposal_id: partialId })[0];
  await proposals.refresh();
  s.memberView = describeTree(proposals).filter((r) => r.kind === "member" || (r.kind === "changeSet" && r.label.startsWith("Change set: audit")));
  s.memberRatesAfterReject = fs.existsSync(file("pkg/audit_rates.py").fsPath);
  const restItem = proposals.getChildren().find((e) => e.kind === "changeSet" && e.proposal_id === partialId);
  s.memberRestAccepted = await vscode.commands.executeCommand("remora.acceptChangeSet", restItem);
  await until("the rest's acceptance recorded", () => events("rewrite_applied", { proposal_id: partialId }).length > 0, 30000);
  s.memberRestAfter = { service: serviceDoc.getText(), models: modelsDoc.getText(), ratesExists: fs.existsSync(file("pkg/audit_rates.py").fsPath) };
  step("sets: one member rejected");

  // 4. A set whose document the person edits before accepting: nothing applied, stale.
  const staleId = await ask("SETS_STALE_SET please");
  s.staleId = staleId;
  const staleBefore = { service: serviceDoc.getText(), models: modelsDoc.getText() };
  const modelsEditor = await vscode.window.showTextDocument(modelsDoc);
  await modelsEditor.edit((b) => b.insert(new vscode.Position(0, 0), "# priced in euros\n"));
  s.staleEvent = await until("rewrite_stale", () => events("rewrite_stale", { proposal_id: staleId })[0], 30000);
  s.staleAccepted = await vscode.commands.executeCommand("remora.acceptChangeSet", { proposal_id: staleId });
  s.staleAfter = {
    serviceUnchanged: serviceDoc.getText() === staleBefore.service,
    models: modelsDoc.getText(),
    modelsBefore: staleBefore.models,
    ratesExists: fs.existsSync(file("pkg/rates.py").fsPath),
  };
  await proposals.refresh();
  s.viewStale = describeTree(proposals);
  await vscode.commands.executeCommand("remora.proposals.focus");
  s.staleShot = await snapshot("setsstale");
  // Dismissed, it leaves the view.
  await vscode.commands.executeCommand("remora.dismissProposal", proposals.getChildren().find((e) => e.kind === "changeSet" && e.proposal_id === staleId));
  s.viewDismissed = describeTree(proposals);
  step("sets: stale");
};
