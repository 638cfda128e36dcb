--- :RemoraBlame: which lines of the buffer an agent wrote, the way
--- gitsigns.nvim shows git blame. Every line still holding text an accepted
--- proposal wrote gets a sign (`RemoraBlameSign`), and the first line of each
--- such range says, at its end, which node's agent wrote it, which proposal
--- and when (`RemoraBlame`). `:RemoraBlame` again hides it;
--- `:RemoraBlame line` opens a float for the cursor's line. While shown it
--- follows edits (a line edited since no longer counts) and accepts.
---
--- Read from `remora.attribution {uri}`, which matches the buffer's current
--- text line by line.
local M = {}

local api = vim.api

local SIGN = '▎'
local DELAY_MS = 200

--- bufnr → { client_id, ranges, names, generation, timer_mark }
local shown = {}

local function ns()
  return api.nvim_create_namespace('remora_blame')
end

local function server()
  return require('remora.server')
end

--- Whether blame is shown in `bufnr`.
--- @param bufnr integer
--- @return boolean
function M.is_shown(bufnr)
  return shown[bufnr] ~= nil
end

--- The end-of-line text of a range: "Service.helper · pr_… · 2026-11-27 08:10".
--- @param range table an AttributedRange
--- @param names table<string, string>
--- @return string
function M.label(range, names)
  local format = require('remora.format')
  return string.format('%s · %s · %s', names[range.agent_id] or range.agent_id, range.proposal_id, format.when(range.accepted_at))
end

local function draw(bufnr)
  local view = shown[bufnr]
  if not view or not api.nvim_buf_is_valid(bufnr) then
    return
  end
  api.nvim_buf_clear_namespace(bufnr, ns(), 0, -1)
  local count = api.nvim_buf_line_count(bufnr)
  for _, range in ipairs(view.ranges) do
    local first = range.range.start.line
    local last = math.min(range.range['end'].line, count) - 1
    for row = first, last do
      local opts = { sign_text = SIGN, sign_hl_group = 'RemoraBlameSign', priority = 5 }
      if row == first then
        opts.virt_text = { { '  ' .. M.label(range, view.names), 'RemoraBlame' } }
        opts.virt_text_pos = 'eol'
      end
      pcall(api.nvim_buf_set_extmark, bufnr, ns(), row, 0, opts)
    end
  end
end

--- Ask the server again which lines agents wrote, and redraw.
--- @param bufnr integer
--- @param on_done? fun() called once the marks are drawn
function M.refresh(bufnr, on_done)
  local view = shown[bufnr]
  local client = view and vim.lsp.get_client_by_id(view.client_id)
  if not client or not api.nvim_buf_is_valid(bufnr) then
    return
  end
  view.generation = view.generation + 1
  local generation = view.generation
  local argument = { uri = vim.uri_from_bufnr(bufnr) }
  server().execute(client, 'remora.attribution', argument, function(ranges)
    if shown[bufnr] ~= view or view.generation ~= generation then
      return
    end
    ranges = type(ranges) == 'table' and ranges or {}
    local agents = {}
    for _, range in ipairs(ranges) do
      table.insert(agents, range.agent_id)
    end
    server().names(client, agents, function(names)
      if shown[bufnr] ~= view or view.generation ~= generation then
        return
      end
      view.ranges, view.names = ranges, names
      draw(bufnr)
      if on_done then
        on_done()
      elseif view.announce then
        view.announce = false
        if #ranges == 0 then
          server().notify('no line of this buffer was written by an agent (an accepted proposal)')
        end
      end
    end)
  end, function(message)
    server().notify('remora.attribution: ' .. message, vim.log.levels.WARN)
  end, bufnr)
end

local function refresh_soon(bufnr)
  local view = shown[bufnr]
  if not view then
    return
  end
  view.timer_mark = view.timer_mark + 1
  local mark = view.timer_mark
  vim.defer_fn(function()
    if shown[bufnr] == view and view.timer_mark == mark then
      M.refresh(bufnr)
    end
  end, DELAY_MS)
end

--- Show blame in `bufnr`.
--- @param bufnr integer
--- @param on_done? fun() called once the marks are drawn
function M.show(bufnr, on_done)
  local client = server().client(bufnr)
  if not client then
    return server().notify('the Remora server is not attached to this buffer', vim.log.levels.WARN)
  end
  if shown[bufnr] then
    return M.refresh(bufnr, on_done)
  end
  local group = api.nvim_create_augroup('remora_blame_' .. bufnr, { clear = true })
  shown[bufnr] = { client_id = client.id, ranges = {}, names = {}, generation = 0, timer_mark = 0, group = group, announce = true }
  api.nvim_create_autocmd({ 'TextChanged', 'InsertLeave', 'BufWritePost' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      refresh_soon(bufnr)
    end,
  })
  api.nvim_create_autocmd('BufWipeout', {
    group = group,
    buffer = bufnr,
    callback = function()
      M.hide(bufnr)
    end,
  })
  M.refresh(bufnr, on_done)
end

--- Hide blame in `bufnr`.
--- @param bufnr integer
function M.hide(bufnr)
  local view = shown[bufnr]
  shown[bufnr] = nil
  if view then
    pcall(api.nvim_del_augroup_by_id, view.group)
  end
  if api.nvim_buf_is_valid(bufnr) then
    api.nvim_buf_clear_namespace(bufnr, ns(), 0, -1)
  end
end

--- :RemoraBlame: show it, or hide it when shown.
--- @param bufnr? integer
function M.toggle(bufnr)
  bufnr = bufnr or api.nvim_get_current_buf()
  if shown[bufnr] then
    M.hide(bufnr)
  else
    M.show(bufnr)
  end
end

--- The float's lines for the range holding 0-based `row` (nil: none).
--- @param bufnr integer
--- @param row integer
--- @return string[]?
function M.line_lines(bufnr, row)
  local view = shown[bufnr]
  for _, range in ipairs(view and view.ranges or {}) do
    if row >= range.range.start.line and row < range.range['end'].line then
      local name = view.names[range.agent_id] or range.agent_id
      return {
        string.format("Written by %s's agent (%s)", name, range.agent_id),
        string.format('proposal %s, accepted %s', range.proposal_id, require('remora.format').when(range.accepted_at)),
        string.format('lines %d-%d', range.range.start.line + 1, range.range['end'].line),
        ':RemoraHistory on the definition shows its conversation',
        ':RemoraRevert on this line proposes undoing it',
      }
    end
  end
  return nil
end

--- :RemoraBlame line: a float naming who wrote the cursor's line (blame is
--- turned on first when it is hidden).
function M.line()
  local bufnr = api.nvim_get_current_buf()
  local function float()
    local lines = M.line_lines(bufnr, api.nvim_win_get_cursor(0)[1] - 1)
    if not lines then
      return server().notify('no agent wrote this line')
    end
    vim.lsp.util.open_floating_preview(lines, 'remora', { border = 'rounded', focus_id = 'remora_blame', title = ' Remora blame ' })
  end
  if shown[bufnr] then
    return float()
  end
  M.show(bufnr, float)
end

--- A `remora/event` arrived: an accept changes who wrote what.
--- @param event table
function M.on_event(event)
  if event.type ~= 'rewrite_applied' then
    return
  end
  for bufnr in pairs(shown) do
    refresh_soon(bufnr)
  end
end

--- :RemoraBlame [toggle|on|off|line]
--- @param sub string
function M.command(sub)
  local bufnr = api.nvim_get_current_buf()
  if sub == '' or sub == 'toggle' then
    M.toggle(bufnr)
  elseif sub == 'on' then
    M.show(bufnr)
  elseif sub == 'off' then
    M.hide(bufnr)
  elseif sub == 'line' then
    M.line()
  else
    server().notify('RemoraBlame takes toggle, on, off or line', vim.log.levels.WARN)
  end
end

return M
