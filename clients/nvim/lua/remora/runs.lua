--- :RemoraRuns: the runs of every Remora server of this Neovim — queued,
--- running, waiting for you, and recent — in a scratch buffer
--- (`remora://runs`), one line each: run id, status, start, node, cost
--- (tokens and time, as the server stored them), trigger (with the
--- subscription that fired it), outcome. `c` cancels the run under the
--- cursor (a queued one too), `r` retries a run a restart interrupted (same
--- trigger, same message), `<CR>` jumps to its node, `R` refreshes, `q`
--- closes. A run whose question was asked before a restart is `waiting`
--- again: answer it when asked. The list follows run events
--- while it is shown.
local M = {}

local api = vim.api

local NAME = 'remora://runs'
local ACTIVE = { queued = true, running = true, waiting = true }
local FOLLOWED = {
  human_chat = true,
  agent_message = true,
  agent_started = true,
  agent_completed = true,
  agent_failed = true,
  agent_cancelled = true,
  run_interrupted = true,
  agent_blocked = true,
  agent_resumed = true,
  trigger_refused = true,
}

local state = {
  buf = nil, ---@type integer?
  rows = {}, -- 1-based line → { run, client_id }
  generation = 0,
  pending = 0,
}

local function server()
  return require('remora.server')
end

--- Lines and row map for runs from several clients.
--- @param listed { client_id: integer, runs: table[] }[]
--- @return string[] lines, table<integer, table> rows, table[] highlights
function M.lines(listed)
  local format = require('remora.format')
  local lines = {
    '# Remora runs: in flight, queued, recent  ([c] cancel  [<CR>] go to node  [R] refresh  [q] close)',
    string.format('%-16s %-11s %-8s  %-24s %-14s %s  %s', 'run', 'status', 'started', 'node', 'cost', 'trigger', 'outcome'),
  }
  local rows, highlights = {}, { { 0, 'Title' }, { 1, 'Comment' } }
  local active, recent = {}, {}
  for _, group in ipairs(listed) do
    for _, run in ipairs(group.runs or {}) do
      local item = { run = run, client_id = group.client_id }
      table.insert(ACTIVE[run.status] and active or recent, item)
    end
  end
  for _, item in ipairs(vim.list_extend(active, recent)) do
    table.insert(lines, format.run(item.run))
    rows[#lines] = item
    if ACTIVE[item.run.status] then
      table.insert(highlights, { #lines - 1, 'RemoraRunActive' })
    elseif item.run.status == 'failed' or item.run.status == 'interrupted' then
      table.insert(highlights, { #lines - 1, 'RemoraRunFailed' })
    end
  end
  if #lines == 2 then
    table.insert(lines, 'No runs yet.')
  end
  return lines, rows, highlights
end

local function render(listed)
  local buf = state.buf
  if not buf or not api.nvim_buf_is_valid(buf) then
    return
  end
  local lines, rows, highlights = M.lines(listed)
  state.rows = rows
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  local ns = api.nvim_create_namespace('remora_runs')
  api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for _, hl in ipairs(highlights) do
    api.nvim_buf_set_extmark(buf, ns, hl[1], 0, { line_hl_group = hl[2] })
  end
end

--- Ask every Remora client for its runs, then show them all.
function M.refresh()
  state.generation = state.generation + 1
  local generation = state.generation
  local clients = server().clients()
  local listed, waiting = {}, #clients
  if waiting == 0 then
    return render({})
  end
  local limit = require('remora.config').options.runs_limit
  local function done()
    waiting = waiting - 1
    if waiting == 0 and generation == state.generation then
      render(listed)
    end
  end
  for _, client in ipairs(clients) do
    server().execute(client, 'remora.runs.list', { limit = limit }, function(runs)
      table.insert(listed, { client_id = client.id, runs = runs or {} })
      done()
    end, function(message)
      server().notify('remora.runs.list: ' .. message, vim.log.levels.WARN)
      done()
    end)
  end
end

--- The run on the cursor's line.
--- @return table? item { run, client_id }
local function under_cursor()
  return state.rows[api.nvim_win_get_cursor(0)[1]]
end

--- Cancel the run under the cursor.
function M.cancel_here()
  local item = under_cursor()
  if not item then
    return server().notify('no run on this line', vim.log.levels.WARN)
  end
  local run = item.run
  if not ACTIVE[run.status] then
    return server().notify(string.format('%s is %s already', run.id, run.status), vim.log.levels.WARN)
  end
  if type(run.id) ~= 'string' then
    return server().notify('this queued turn has no run id yet: cancel it once it runs', vim.log.levels.WARN)
  end
  local client = vim.lsp.get_client_by_id(item.client_id)
  if client then
    require('remora.commands').cancel_run(client, run.id, run.node and run.node.name or run.id)
  end
end

--- Retry the run under the cursor (one a restart interrupted).
function M.retry_here()
  local item = under_cursor()
  if not item then
    return server().notify('no run on this line', vim.log.levels.WARN)
  end
  local run = item.run
  if run.status ~= 'interrupted' then
    return server().notify(string.format('%s is %s: only an interrupted run is retried', run.id, run.status), vim.log.levels.WARN)
  end
  local client = vim.lsp.get_client_by_id(item.client_id)
  if client then
    server().execute(client, 'remora.agent.retry', { run_id = run.id }, function(result)
      server().notify(string.format('retried %s as %s', run.id, result and result.run_id or '?'))
      M.refresh()
    end)
  end
end

--- Jump to the node of the run under the cursor.
function M.jump_here()
  local item = under_cursor()
  local node = item and item.run.node
  local client = item and vim.lsp.get_client_by_id(item.client_id)
  if not node or type(node.file_path) ~= 'string' or not client then
    return server().notify('no node on this line', vim.log.levels.WARN)
  end
  local path = vim.fs.joinpath(client.root_dir or vim.fn.getcwd(), node.file_path)
  local previous = vim.fn.win_getid(vim.fn.winnr('#'))
  if previous ~= 0 and previous ~= api.nvim_get_current_win() then
    api.nvim_set_current_win(previous)
  end
  vim.cmd.edit(vim.fn.fnameescape(path))
  api.nvim_win_set_cursor(0, { (tonumber(node.line) or 0) + 1, 0 })
end

--- Open the list (or bring it back) and fetch the runs.
function M.open()
  local buf = require('remora.scratch').show(NAME, { '# Remora runs: loading…' }, 'remora')
  vim.wo[0][0].wrap = false
  if api.nvim_win_get_height(0) < 12 then
    vim.cmd('resize 12')
  end
  if state.buf ~= buf then
    state.buf = buf
    local function map(lhs, fn, desc)
      vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, silent = true, desc = desc })
    end
    map('c', M.cancel_here, 'Remora: cancel the run under the cursor')
    map('r', M.retry_here, 'Remora: retry the interrupted run under the cursor')
    map('<CR>', M.jump_here, "Remora: go to the run's node")
    map('R', M.refresh, 'Remora: refresh the runs')
    api.nvim_create_autocmd('BufWipeout', {
      buffer = buf,
      once = true,
      callback = function()
        state.buf, state.rows = nil, {}
      end,
    })
  end
  M.refresh()
end

--- A `remora/event` arrived: refresh the list if it is shown and the event
--- changes a run (coalesced for a moment).
--- @param event table
function M.on_event(event)
  local buf = state.buf
  if not FOLLOWED[event.type] or not buf or not api.nvim_buf_is_valid(buf) then
    return
  end
  if #vim.fn.win_findbuf(buf) == 0 then
    return
  end
  state.pending = state.pending + 1
  local mark = state.pending
  vim.defer_fn(function()
    if mark == state.pending then
      M.refresh()
    end
  end, 80)
end

return M
