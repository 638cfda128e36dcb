-- Drives one test scenario inside headless Neovim and writes what was seen to
-- a JSON file for the Python test to assert on.
--
-- A scenario is a function run in a coroutine; `wait` yields to Neovim's main
-- loop between checks, so LSP messages, timers and autocmds (CursorMoved…)
-- happen as they do for a person. The result file always gets written: on
-- success, on a failed wait (with `error`), and on the global time limit.
local M = {}

local api = vim.api

local out_path = os.getenv('REMORA_TEST_OUT')
local attach_ms = tonumber(os.getenv('REMORA_TEST_ATTACH_MS') or '') or 60000
local LIMIT_MS = tonumber(os.getenv('REMORA_TEST_LIMIT_MS') or '') or 150000

--- What the Python test reads.
M.result = {
  ok = false,
  error = nil,
  steps = {}, -- the waits that succeeded, in order
  observed = {}, -- name → value, set by scenarios
  events = {}, -- every remora/event, as the plugin re-emits it (User RemoraEvent)
  notifications = {}, -- every vim.notify message
}

local finished = false

--- Start recording events and notifications (before the server starts).
function M.record()
  api.nvim_create_autocmd('User', {
    pattern = 'RemoraEvent',
    callback = function(args)
      table.insert(M.result.events, args.data)
    end,
  })
  local notify = vim.notify
  vim.notify = function(message, level, opts)
    table.insert(M.result.notifications, { message = tostring(message), level = level })
    return notify(message, level, opts)
  end
end

local function write()
  local file = assert(io.open(out_path, 'w'))
  local ok, encoded = pcall(vim.json.encode, M.result)
  if not ok then
    encoded = vim.json.encode({ ok = false, error = 'could not encode the result: ' .. encoded })
  end
  file:write(encoded)
  file:close()
end

local function quit()
  -- Stop the server first (it writes its database), but never wait long.
  local clients = vim.lsp.get_clients()
  for _, client in ipairs(clients) do
    client:stop()
  end
  vim.wait(5000, function()
    return #vim.lsp.get_clients() == 0
  end, 50)
  vim.cmd('qa!')
end

--- Write the result and quit.
function M.finish(err)
  if finished then
    return
  end
  finished = true
  if err then
    M.result.ok = false
    M.result.error = tostring(err)
  else
    M.result.ok = true
  end
  M.result.messages = vim.split(vim.fn.execute('messages'), '\n', { trimempty = true })
  write()
  quit()
end

--- Yield to the main loop for `ms` milliseconds.
function M.sleep(ms)
  local co = coroutine.running()
  vim.defer_fn(function()
    if not finished then
      local ok, err = coroutine.resume(co)
      if not ok then
        M.finish(err)
      end
    end
  end, ms)
  coroutine.yield()
end

--- Wait until `check()` returns something truthy; fail the scenario after
--- `timeout_ms`. Returns what `check` returned.
--- @param what string said in the failure
function M.wait(what, check, timeout_ms)
  timeout_ms = timeout_ms or 60000
  -- hrtime, not uv.now(): the loop's cached time can lag behind while
  -- Neovim waits for input.
  local deadline = vim.uv.hrtime() + timeout_ms * 1e6
  while true do
    local ok, value = pcall(check)
    if ok and value then
      table.insert(M.result.steps, what)
      return value
    end
    if vim.uv.hrtime() > deadline then
      error(string.format('timed out after %d ms waiting for %s%s', timeout_ms, what, ok and '' or (' (' .. tostring(value) .. ')')), 0)
    end
    M.sleep(50)
  end
end

--- Remember `value` under `name` for the Python test.
function M.observe(name, value)
  M.result.observed[name] = value
end

-- ---- what a person sees ------------------------------------------------------------

--- The text of a buffer.
function M.text(bufnr)
  return table.concat(api.nvim_buf_get_lines(bufnr or 0, 0, -1, false), '\n')
end

--- The lines of the first window showing a buffer named `name` (nil if none).
function M.window_lines(pattern)
  for _, win in ipairs(api.nvim_list_wins()) do
    local buf = api.nvim_win_get_buf(win)
    if api.nvim_buf_get_name(buf):match(pattern) then
      return api.nvim_buf_get_lines(buf, 0, -1, false), win
    end
  end
  return nil
end

--- The lines of the side panel if it is shown.
function M.panel()
  return M.window_lines('^remora://panel$')
end

--- The first line of the panel (the node's qualified name), or nil.
function M.panel_title()
  return (M.panel() or {})[1]
end

--- Whether the panel shows a line containing `needle` (plain text).
function M.panel_has(needle)
  for _, line in ipairs(M.panel() or {}) do
    if line:find(needle, 1, true) then
      return true
    end
  end
  return false
end

--- Virtual text of every extmark on 0-based `row` of the current buffer (code lenses).
function M.virtual_text(row, bufnr)
  local texts = {}
  local marks = api.nvim_buf_get_extmarks(bufnr or 0, -1, { row, 0 }, { row, -1 }, { details = true })
  for _, mark in ipairs(marks) do
    local chunks = mark[4].virt_text or {}
    local parts = {}
    for _, chunk in ipairs(chunks) do
      table.insert(parts, chunk[1])
    end
    if #parts > 0 then
      table.insert(texts, table.concat(parts))
    end
  end
  return table.concat(texts, ' ')
end

--- Put the cursor on the first occurrence of `needle` (plain) in the current buffer.
--- Returns its 0-based row.
function M.cursor_to(needle)
  for row, line in ipairs(api.nvim_buf_get_lines(0, 0, -1, false)) do
    local col = line:find(needle, 1, true)
    if col then
      api.nvim_win_set_cursor(0, { row, col - 1 })
      return row - 1
    end
  end
  error('no ' .. needle .. ' in the buffer', 0)
end

--- Events received so far of one type, optionally with given field values.
function M.events(kind, fields)
  local found = {}
  for _, e in ipairs(M.result.events) do
    local match = e.type == kind
    for k, v in pairs(fields or {}) do
      match = match and e[k] == v
    end
    if match then
      table.insert(found, e)
    end
  end
  return found
end

--- Open `path` and wait for the Remora server to attach to it.
function M.open(path)
  vim.cmd.edit(path)
  local buf = api.nvim_get_current_buf()
  M.wait('the server to attach', function()
    return #vim.lsp.get_clients({ name = 'remora', bufnr = buf }) > 0
  end, attach_ms)
  return buf
end

--- Run the scenario `name` of scenarios.lua.
function M.run(name)
  vim.defer_fn(function()
    M.finish(string.format('the scenario did not finish within %d ms', LIMIT_MS))
  end, LIMIT_MS)
  local scenario = require('scenarios')[name]
  if not scenario then
    return M.finish('no scenario ' .. name)
  end
  local co = coroutine.create(function()
    -- LuaJIT lets a coroutine yield across xpcall: waits keep working.
    local ok, err = xpcall(scenario, debug.traceback, M)
    M.finish(not ok and err or nil)
  end)
  local ok, err = coroutine.resume(co)
  if not ok then
    M.finish(err)
  end
end

return M
