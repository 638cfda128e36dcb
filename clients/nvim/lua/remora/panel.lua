--- The side panel: the node under the cursor (its card, its pending proposal
--- as a diff, its latest events), kept current as the cursor moves and as
--- `remora/event` notifications arrive.
---
--- The panel is one scratch buffer (`remora://panel`, hidden when its window
--- closes, recreated if wiped) shown in a vertical split. Answers for a buffer
--- that changed while the server worked are dropped and asked again.
local M = {}

local api = vim.api

local state = {
  buf = nil, ---@type integer?
  win = nil, ---@type integer?
  client_id = nil, ---@type integer?
  card = nil, ---@type table?
  node_id = nil, ---@type string?
  request = 0, -- number of the latest request: older answers are dropped
  follow_generation = 0,
  refresh_generation = 0,
}

local function ns()
  return api.nvim_create_namespace('remora_panel')
end

local function options()
  return require('remora.config').options.panel
end

--- Whether the panel is shown in a window.
--- @return boolean
function M.is_open()
  return state.win ~= nil
    and api.nvim_win_is_valid(state.win)
    and state.buf ~= nil
    and api.nvim_buf_is_valid(state.buf)
    and api.nvim_win_get_buf(state.win) == state.buf
end

--- The panel's buffer, if it exists.
--- @return integer?
function M.buffer()
  return state.buf and api.nvim_buf_is_valid(state.buf) and state.buf or nil
end

--- The node shown: its card and the client it came from.
--- @return table? card
--- @return vim.lsp.Client? client
function M.current()
  local client = state.client_id and vim.lsp.get_client_by_id(state.client_id) or nil
  return state.card, client
end

local function set_lines(lines, highlights)
  local buf = M.buffer()
  if not buf then
    return
  end
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  api.nvim_buf_clear_namespace(buf, ns(), 0, -1)
  for _, hl in ipairs(highlights or {}) do
    api.nvim_buf_set_extmark(buf, ns(), hl[1], 0, { line_hl_group = hl[2] })
  end
end

--- The live state of the node's runs: "run_… running · thinking…", or nil.
--- @param card table
--- @return string?
local function run_state(card)
  local parts = {}
  local title = 'Remora: ' .. (card.qualified_name or '')
  local message
  for _, p in ipairs(require('remora.progress').active(state.client_id)) do
    if p.title == title then
      message = p.message
    end
  end
  local runs = require('remora.handlers').open_runs(card.id)
  table.sort(runs, function(a, b)
    return a.run_id < b.run_id
  end)
  for _, run in ipairs(runs) do
    local status = run.started and 'running' or 'queued'
    if run.started and message and message ~= '' then
      status = status .. ' · ' .. message
    end
    table.insert(parts, run.run_id .. ' ' .. status)
  end
  return #parts > 0 and table.concat(parts, ', ') or nil
end

local function render()
  if not state.card then
    return
  end
  local opts = vim.tbl_extend('force', options(), { run = run_state(state.card) })
  local lines, highlights = require('remora.format').card(state.card, opts)
  set_lines(lines, highlights)
end

--- Redraw the shown card (a run's progress moved on).
function M.redraw()
  if M.is_open() then
    render()
  end
end

local function show_message(text)
  state.card, state.node_id = nil, nil
  set_lines({ 'Remora', '', text }, { { 0, 'Title' }, { 2, 'Comment' } })
end

local function show(card, client_id)
  if not card then
    show_message('No definition under the cursor.')
    return
  end
  require('remora.handlers').learn(card)
  state.card, state.node_id, state.client_id = card, card.id, client_id
  render()
end

--- Show `card` in the panel (a lens click while the panel is open).
--- @param card table
--- @param client_id integer
function M.show_card(card, client_id)
  state.request = state.request + 1 -- an answer on its way for the cursor loses
  show(card, client_id)
end

local function with_panel_node(action)
  return function()
    local card, client = M.current()
    if not card or not client then
      require('remora.server').notify('the panel shows no node', vim.log.levels.WARN)
      return
    end
    action(card, client)
  end
end

local function map_keys(buf)
  local keys = options().keys
  local commands = require('remora.commands')
  local function map(lhs, fn, desc)
    if lhs and lhs ~= '' then
      vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, silent = true, desc = desc })
    end
  end
  map(keys.accept, with_panel_node(commands.accept_node), 'Remora: accept the pending proposal')
  map(keys.reject, with_panel_node(function(card, client)
    commands.reject_node(card, client, nil)
  end), 'Remora: reject the pending proposal')
  map(keys.diff, with_panel_node(commands.diff_node), "Remora: show the proposal's diff")
  map(keys.ask, with_panel_node(function(card, client)
    commands.ask_node(card, client, nil)
  end), "Remora: ask the node's agent")
  map(keys.cancel, with_panel_node(commands.cancel_node), "Remora: cancel the node's run")
  map(keys.refresh, M.refresh, 'Remora: refresh the panel')
  map(keys.history, with_panel_node(function(card, client)
    require('remora.history').open(card, client)
  end), "Remora: the node's conversation")
  map(keys.runs, function()
    require('remora.runs').open()
  end, 'Remora: the list of runs')
  map(keys.close, M.close, 'Remora: close the panel')
end

local function ensure_buffer()
  local buf = M.buffer()
  if buf then
    return buf
  end
  buf = api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = 'remora'
  api.nvim_buf_set_name(buf, 'remora://panel')
  state.buf = buf
  map_keys(buf)
  api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function()
      state.buf, state.win = nil, nil
    end,
  })
  if state.card then
    render()
  else
    show_message('Move the cursor onto a definition.')
  end
  return buf
end

--- Show the node under the cursor of `win` (a window of an attached buffer).
--- @param win? integer default: the current window
function M.follow(win)
  win = win or api.nvim_get_current_win()
  if not M.is_open() or not api.nvim_win_is_valid(win) or win == state.win then
    return
  end
  local bufnr = api.nvim_win_get_buf(win)
  local server = require('remora.server')
  local client = server.client(bufnr)
  if not client then
    return
  end
  state.request = state.request + 1
  local request = state.request
  server.node_at(client, win, function(card, changed)
    if request ~= state.request then
      return -- a newer request went out
    end
    if changed then
      M.follow_soon(win) -- the buffer changed meanwhile: ask again
      return
    end
    show(card, client.id)
  end, function(message)
    if request == state.request then
      show_message(message)
    end
  end)
end

--- Follow the cursor after it rests for `panel.follow_delay_ms`.
--- @param win? integer
function M.follow_soon(win)
  if not M.is_open() or not options().follow then
    return
  end
  win = win or api.nvim_get_current_win()
  state.follow_generation = state.follow_generation + 1
  local generation = state.follow_generation
  vim.defer_fn(function()
    if generation == state.follow_generation then
      M.follow(win)
    end
  end, options().follow_delay_ms)
end

--- Fetch the shown node's card again.
function M.refresh()
  local card, client = M.current()
  if not M.is_open() or not card or not client then
    return
  end
  state.request = state.request + 1
  local request = state.request
  require('remora.server').execute(client, 'remora.node.get', { node_id = card.id }, function(fresh)
    if request == state.request then
      show(fresh, client.id)
    end
  end, function(message)
    if request == state.request then
      show_message(message)
    end
  end)
end

local function refresh_soon()
  state.refresh_generation = state.refresh_generation + 1
  local generation = state.refresh_generation
  vim.defer_fn(function()
    if generation == state.refresh_generation then
      M.refresh()
    end
  end, 60)
end

--- Whether `event` is about node `node_id`.
--- @param event table
--- @param node_id string
--- @return boolean
local function concerns(event, node_id)
  if event.agent_id == node_id or event.node_id == node_id or event.to_agent == node_id then
    return true
  end
  if type(event.node_ids) == 'table' then
    return vim.list_contains(event.node_ids, node_id)
  end
  return false
end

--- A `remora/event` arrived: refresh the panel if it is about the shown node.
--- @param event table
--- @param client_id integer
function M.on_event(event, client_id)
  if M.is_open() and state.node_id and state.client_id == client_id and concerns(event, state.node_id) then
    refresh_soon()
  end
end

--- Open the panel (and show the node under the cursor).
function M.open()
  if M.is_open() then
    return
  end
  local source = api.nvim_get_current_win()
  local buf = ensure_buffer()
  local opts = options()
  local split = opts.position == 'left' and 'topleft' or 'botright'
  vim.cmd(string.format('%s vertical %dsplit', split, opts.width))
  state.win = api.nvim_get_current_win()
  api.nvim_win_set_buf(state.win, buf)
  local wo = vim.wo[state.win][0]
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = 'no'
  wo.foldcolumn = '0'
  wo.wrap = false
  wo.list = false
  wo.spell = false
  wo.winfixwidth = true
  if api.nvim_win_is_valid(source) then
    api.nvim_set_current_win(source)
    M.follow(source)
  end
end

--- Close the panel's window (the buffer is kept for the next open).
function M.close()
  if M.is_open() then
    if #api.nvim_list_wins() == 1 then
      vim.cmd('enew')
    else
      api.nvim_win_close(state.win, true)
    end
  end
  state.win = nil
end

--- Open the panel if it is closed, close it if it is open.
function M.toggle()
  if M.is_open() then
    M.close()
  else
    M.open()
  end
end

return M
