--- The user commands: :RemoraAsk, :RemoraAccept, :RemoraReject, :RemoraDiff,
--- :RemoraPanel, :RemoraCancel, :RemoraEvents, :RemoraHistory, :RemoraRuns
--- act on the node under the cursor (asked with `remora.node.at`), on the
--- panel's node when the cursor is in the panel, on a conversation's node in
--- its buffer, and (accept, reject, diff) on the proposal under the cursor in
--- Remora's quickfix list. :RemoraProposals, :RemoraGraph, :RemoraCheckpoint,
--- :RemoraBlame and :RemoraUsage are the project's (proposals.lua, graph.lua,
--- checkpoints.lua, blame.lua, usage.lua); :RemoraSubscriptions and
--- :RemoraMute the node's (wakes.lua), :RemoraInstructions too
--- (instructions.lua); :RemoraTrust the project's trust (trust.lua).
local M = {}

local api = vim.api

local function server()
  return require('remora.server')
end

local function warn(message)
  server().notify(message, vim.log.levels.WARN)
end

local RETRIES = 3

--- Call `callback(card, client, bufnr)` with the node under the cursor.
--- `card` is nil when there is no definition there and `opts.allow_none`.
--- @param callback fun(card: table?, client: vim.lsp.Client, bufnr: integer?)
--- @param opts? { allow_none: boolean }
function M.with_node(callback, opts)
  opts = opts or {}
  local panel = require('remora.panel')
  local win = api.nvim_get_current_win()
  local bufnr = api.nvim_win_get_buf(win)
  if bufnr == panel.buffer() then
    local card, client = panel.current()
    if card and client then
      callback(card, client, nil)
    elseif not opts.allow_none then
      warn('the panel shows no node')
    end
    return
  end
  local shown, owner = require('remora.history').current(bufnr)
  if shown and owner then
    -- A conversation's node, as it stands now (its proposals change).
    return server().execute(owner, 'remora.node.get', { node_id = shown.id }, function(card)
      if card then
        callback(card, owner, nil)
      end
    end)
  end
  local client = server().client(bufnr)
  if not client then
    warn('the Remora server is not attached to this buffer')
    return
  end
  local function ask(tries)
    server().node_at(client, win, function(card, changed)
      if changed then
        if tries > 0 then
          return ask(tries - 1)
        end
        return warn('the buffer keeps changing; try again')
      end
      if not card and not opts.allow_none then
        return warn('no Python definition under the cursor')
      end
      if card then
        require('remora.handlers').learn(card)
      end
      callback(card, client, bufnr)
    end)
  end
  ask(RETRIES)
end

-- ---- ask ---------------------------------------------------------------------------

--- The question a blocked agent still waits on (its latest `agent_blocked`
--- with no `agent_resumed`), from the card's recent events (newest first).
--- @param card table
--- @return table? event
local function open_question(card)
  if card.agent_status ~= 'blocked' then
    return nil
  end
  local answered = {}
  for _, e in ipairs(card.recent_events or {}) do
    if e.type == 'agent_resumed' then
      answered[e.question_id] = true
    elseif e.type == 'agent_blocked' and not answered[e.question_id] then
      return e
    end
  end
  return nil
end

--- Answer a question that was dismissed when it was asked.
local function answer_question(card, client, question, answer)
  local function send(text)
    if type(text) ~= 'string' or vim.trim(text) == '' then
      return
    end
    local argument = { question_id = question.question_id, answer = text }
    server().execute(client, 'remora.agent.respond', argument, function(result)
      if result and result.ok then
        server().notify(string.format('answered %s', card.qualified_name))
      else
        warn(string.format('%s no longer waits for that answer', card.qualified_name))
      end
    end)
  end
  if answer and vim.trim(answer) ~= '' then
    send(answer)
  else
    vim.ui.input({ prompt = string.format('%s asks: %s ', card.qualified_name, question.question) }, send)
  end
end

--- Send `message` to the node's agent (asked for when nil or empty). When the
--- agent is blocked on a question (one dismissed when it was asked), the
--- message answers it instead.
--- @param card table
--- @param client vim.lsp.Client
--- @param message string?
function M.ask_node(card, client, message)
  local question = open_question(card)
  if question then
    return answer_question(card, client, question, message)
  end
  local function send(text)
    if type(text) ~= 'string' or vim.trim(text) == '' then
      return
    end
    server().execute(client, 'remora.agent.chat', { node_id = card.id, message = text }, function(result)
      local run_id = result and result.run_id
      require('remora.handlers').track(run_id, card, client.id)
      server().notify(string.format('asked %s (%s)', card.qualified_name, run_id or '?'))
    end)
  end
  if message and vim.trim(message) ~= '' then
    send(message)
  else
    vim.ui.input({ prompt = string.format('Ask %s: ', card.qualified_name) }, send)
  end
end

-- ---- proposals ---------------------------------------------------------------------

local function pending_of(card)
  local found = {}
  for _, p in ipairs(card and card.proposals or {}) do
    if p.status == 'pending' then
      table.insert(found, p)
    end
  end
  table.sort(found, function(a, b)
    return (a.created_at or 0) > (b.created_at or 0)
  end)
  return found
end

--- Call `callback(proposal, card)` with the pending proposal of the node (or,
--- when it has none, of its closest enclosing definition that has one).
--- Several pending proposals: `vim.ui.select`.
local function with_proposal(card, client, callback, depth)
  depth = depth or 0
  local pending = pending_of(card)
  if #pending == 1 then
    return callback(pending[1], card)
  elseif #pending > 1 then
    return vim.ui.select(pending, {
      prompt = 'Which proposal?',
      format_item = function(p)
        return string.format('%s %s', p.id, require('remora.format').one_line(p.reasoning, 60))
      end,
    }, function(choice)
      if choice then
        callback(choice, card)
      end
    end)
  end
  local parent = card.parent
  if depth < 8 and type(parent) == 'table' and parent.id then
    return server().execute(client, 'remora.node.get', { node_id = parent.id }, function(outer)
      if outer then
        with_proposal(outer, client, callback, depth + 1)
      end
    end)
  end
  local name = depth == 0 and card.qualified_name or 'the definitions around the cursor'
  warn(string.format('no pending proposal for %s (ask with :RemoraAsk)', name))
end

--- Accept the node's pending proposal: the server applies it with
--- `workspace/applyEdit` and checks that the buffer holds it.
--- @param card table
--- @param client vim.lsp.Client
function M.accept_node(card, client)
  with_proposal(card, client, function(proposal, owner)
    server().execute(client, 'remora.proposal.accept', { proposal_id = proposal.id }, function(result)
      if result and result.applied then
        server().notify(string.format('applied the proposal for %s', owner.qualified_name))
      else
        warn(string.format('not applied: %s', result and result.reason or 'unknown reason'))
      end
    end)
  end)
end

--- Reject the node's pending proposal with `feedback` (asked for when nil):
--- its agent runs again with the feedback.
--- @param card table
--- @param client vim.lsp.Client
--- @param feedback string?
function M.reject_node(card, client, feedback)
  with_proposal(card, client, function(proposal, owner)
    local function send(text)
      if type(text) ~= 'string' then
        return -- the person cancelled the prompt
      end
      local argument = { proposal_id = proposal.id, feedback = text }
      server().execute(client, 'remora.proposal.reject', argument, function(result)
        local run_id = result and result.run_id
        if run_id then
          require('remora.handlers').track(run_id, owner, client.id)
        end
        server().notify(string.format('rejected; %s tries again', owner.qualified_name))
      end)
    end
    if feedback and feedback ~= '' then
      send(feedback)
    else
      vim.ui.input({ prompt = string.format('What should %s do differently? ', owner.qualified_name) }, send)
    end
  end)
end

--- Show the node's pending proposal as a unified diff in a scratch buffer.
--- @param card table
--- @param client vim.lsp.Client
function M.diff_node(card, client)
  with_proposal(card, client, function(proposal, owner)
    require('remora.actions').show_diff(client, proposal.id, owner.qualified_name)
  end)
end

-- ---- runs ----------------------------------------------------------------------------

--- Cancel run `run_id` with `remora.agent.cancel` (a queued run too): runs
--- are told apart by id, never by their progress title (two runs of one
--- node share a title).
--- @param client vim.lsp.Client
--- @param run_id string
--- @param label string for messages
function M.cancel_run(client, run_id, label)
  server().notify('cancelling ' .. label)
  server().execute(client, 'remora.agent.cancel', { run_id = run_id }, function(result)
    if result and result.cancelled then
      server().notify(string.format('cancelled %s (%s)', label, run_id))
    else
      warn(string.format('%s (%s) was not running', label, run_id))
    end
  end)
end

--- Pick one of `runs` (several: `vim.ui.select`) and cancel it.
--- @param runs { run_id: string, agent_id: string, client_id: integer, started: boolean }[]
local function cancel_one_of(runs)
  local handlers = require('remora.handlers')
  local function go(run)
    local client = run and vim.lsp.get_client_by_id(run.client_id)
    if client then
      M.cancel_run(client, run.run_id, handlers.name(run.agent_id))
    end
  end
  if #runs == 0 then
    return warn('no run under way')
  elseif #runs == 1 then
    return go(runs[1])
  end
  table.sort(runs, function(a, b)
    return a.run_id < b.run_id
  end)
  vim.ui.select(runs, {
    prompt = 'Cancel which run?',
    format_item = function(run)
      return string.format('%s %s (%s)', run.run_id, handlers.name(run.agent_id), run.started and 'running' or 'queued')
    end,
  }, go)
end

--- Cancel the run of the node's agent (several: pick one by run id).
--- @param card table
--- @param client vim.lsp.Client
function M.cancel_node(card, client)
  local runs = require('remora.handlers').open_runs(card.id)
  if #runs == 0 then
    return warn(string.format('%s has no run under way', card.qualified_name))
  end
  for _, run in ipairs(runs) do
    run.client_id = run.client_id or client.id
  end
  cancel_one_of(runs)
end

--- Cancel whatever Remora is doing when the cursor is on no running node:
--- the one run under way, or the one picked with `vim.ui.select`.
local function cancel_any()
  cancel_one_of(require('remora.handlers').open_runs())
end

--- Show the node's latest events (newest first) in a scratch buffer.
--- @param card table
--- @param client vim.lsp.Client
--- @param limit integer?
function M.events_node(card, client, limit)
  limit = limit or require('remora.config').options.events_limit
  server().execute(client, 'remora.node.events', { node_id = card.id, limit = limit }, function(events)
    local format = require('remora.format')
    local lines = { string.format('# %s (%s): latest events, newest first', card.qualified_name, card.id) }
    for _, e in ipairs(events or {}) do
      table.insert(lines, format.event(e))
    end
    if #lines == 1 then
      table.insert(lines, 'none yet')
    end
    require('remora.scratch').show('remora://events/' .. card.id, lines, 'remora')
  end)
end

-- ---- entry points ---------------------------------------------------------------------

--- :RemoraAsk [message]
--- @param message string?
function M.ask(message)
  M.with_node(function(card, client)
    M.ask_node(card, client, message)
  end)
end

--- :RemoraAccept
function M.accept()
  local entry = require('remora.proposals').under_cursor()
  if entry then
    return require('remora.proposals').accept(entry)
  end
  M.with_node(M.accept_node)
end

--- :RemoraReject [feedback]
--- @param feedback string?
function M.reject(feedback)
  local entry = require('remora.proposals').under_cursor()
  if entry then
    return require('remora.proposals').reject(entry, feedback)
  end
  M.with_node(function(card, client)
    M.reject_node(card, client, feedback)
  end)
end

--- :RemoraDiff
function M.diff()
  local entry = require('remora.proposals').under_cursor()
  if entry then
    return require('remora.proposals').diff(entry)
  end
  M.with_node(M.diff_node)
end

--- :RemoraCancel
function M.cancel()
  local bufnr = api.nvim_get_current_buf()
  if not server().client(bufnr) and bufnr ~= require('remora.panel').buffer() then
    return cancel_any()
  end
  M.with_node(function(card, client)
    if not card then
      return cancel_any()
    end
    if #require('remora.handlers').open_runs(card.id) > 0 then
      M.cancel_node(card, client)
    else
      cancel_any()
    end
  end, { allow_none = true })
end

--- :RemoraEvents [limit]
--- @param limit integer?
function M.events(limit)
  M.with_node(function(card, client)
    M.events_node(card, client, limit)
  end)
end

--- :RemoraHistory
function M.history()
  M.with_node(function(card, client)
    require('remora.history').open(card, client)
  end)
end

--- Create the user commands (again: harmless).
function M.create()
  local function command(name, fn, opts)
    api.nvim_create_user_command(name, fn, opts)
  end
  command('RemoraAsk', function(args)
    M.ask(args.args)
  end, { nargs = '*', desc = "Remora: ask the agent of the definition under the cursor" })
  command('RemoraAccept', function()
    M.accept()
  end, { nargs = 0, desc = 'Remora: accept the pending proposal under the cursor' })
  command('RemoraReject', function(args)
    M.reject(args.args ~= '' and args.args or nil)
  end, { nargs = '*', desc = 'Remora: reject the pending proposal, with feedback' })
  command('RemoraDiff', function()
    M.diff()
  end, { nargs = 0, desc = "Remora: show the pending proposal's diff" })
  command('RemoraPanel', function(args)
    local panel = require('remora.panel')
    local action = args.args ~= '' and args.args or 'toggle'
    if not panel[action] or not vim.list_contains({ 'open', 'close', 'toggle' }, action) then
      return warn('RemoraPanel takes open, close or toggle')
    end
    panel[action]()
  end, {
    nargs = '?',
    complete = function()
      return { 'open', 'close', 'toggle' }
    end,
    desc = 'Remora: toggle the side panel',
  })
  command('RemoraCancel', function()
    M.cancel()
  end, { nargs = 0, desc = "Remora: cancel the run of the agent under the cursor" })
  command('RemoraEvents', function(args)
    local limit = tonumber(args.args)
    if args.args ~= '' and not limit then
      return warn('RemoraEvents takes a number of events')
    end
    M.events(limit)
  end, { nargs = '?', desc = 'Remora: list the latest events of the node under the cursor' })
  command('RemoraHistory', function()
    M.history()
  end, { nargs = 0, desc = "Remora: the whole conversation of the node under the cursor" })
  command('RemoraRuns', function()
    require('remora.runs').open()
  end, { nargs = 0, desc = 'Remora: runs queued, in flight and recent (c cancels, r retries, <CR> goes to the node)' })
  command('RemoraProposals', function(args)
    local proposals = require('remora.proposals')
    if args.fargs[1] == nil then
      return proposals.open()
    elseif args.fargs[1] == 'accept-all' and #args.fargs <= 2 then
      return proposals.accept_all(args.fargs[2])
    end
    warn('RemoraProposals takes nothing, or accept-all [gr_…]')
  end, {
    nargs = '*',
    complete = function(_, line)
      return line:match('^%S+%s+%S*$') and { 'accept-all' } or {}
    end,
    desc = "Remora: every pending proposal in the quickfix list; accept-all [gr_…]: a graph run's together",
  })
  command('RemoraGraph', function(args)
    if #args.fargs == 0 or #args.fargs > 2 then
      return warn('RemoraGraph takes run [name], status [gr_…], cancel [gr_…] or resume [gr_…]')
    end
    require('remora.graph').command(args.fargs[1], args.fargs[2])
  end, {
    nargs = '+',
    complete = function(_, line)
      local words = vim.split(vim.trim(line), '%s+')
      local ended = line:match('%s$') ~= nil
      if #words == 1 or (#words == 2 and not ended) then
        return { 'run', 'status', 'cancel', 'resume' }
      elseif words[2] == 'run' then
        return require('remora.graph').known_graphs
      end
      return {}
    end,
    desc = 'Remora: run a batch graph, see its status, cancel it, resume it after a restart',
  })
  command('RemoraCheckpoint', function(args)
    local sub, rest = args.args:match('^(%S+)%s*(.-)%s*$')
    if not sub then
      return warn('RemoraCheckpoint takes create [label], list or restore [cp_…]')
    end
    require('remora.checkpoints').command(sub, rest ~= '' and rest or nil)
  end, {
    nargs = '+',
    complete = function(_, line)
      return line:match('^%S+%s+%S*$') and { 'create', 'list', 'restore' } or {}
    end,
    desc = "Remora: take, list and restore checkpoints of the agents' state",
  })
  command('RemoraSubscriptions', function()
    require('remora.wakes').open()
  end, { nargs = 0, desc = "Remora: what wakes the agent under the cursor (m mutes, d removes one)" })
  command('RemoraMute', function(args)
    if args.args ~= '' and args.args ~= 'off' then
      return warn('RemoraMute takes nothing, or off')
    end
    require('remora.wakes').mute(args.args == 'off')
  end, {
    nargs = '?',
    complete = function()
      return { 'off' }
    end,
    desc = "Remora: mute the agent under the cursor (only your messages wake it); off: unmute",
  })
  command('RemoraInstructions', function(args)
    require('remora.instructions').command(args.args)
  end, {
    nargs = '?',
    desc = "Remora: standing instructions for the agent under the cursor (no text: edit them, :w sends)",
  })
  command('RemoraTrust', function(args)
    require('remora.trust').command(args.args)
  end, {
    nargs = '?',
    complete = function()
      return { 'yes', 'no', 'forget' }
    end,
    desc = "Remora: is the repository trusted, and what does it want? yes/no: your answer; forget: forget your answers",
  })
  command('RemoraUsage', function(args)
    require('remora.usage').open(args.args)
  end, { nargs = '?', desc = "Remora: tokens and time agents used (since a date, today, 24h, 7d)" })
  command('RemoraRevert', function(args)
    require('remora.revert').command(args.args)
  end, {
    nargs = '?',
    desc = 'Remora: propose undoing an accepted proposal (the line under the cursor, pr_…) or a graph run (gr_…)',
  })
  command('RemoraBlame', function(args)
    require('remora.blame').command(args.args)
  end, {
    nargs = '?',
    complete = function()
      return { 'toggle', 'on', 'off', 'line' }
    end,
    desc = 'Remora: mark the lines agents wrote (again: hide); line: who wrote this line',
  })
end

return M
