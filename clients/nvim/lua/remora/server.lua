--- Talking to the Remora server: finding its client, running its commands,
--- asking which node is under the cursor.
local M = {}

M.NAME = 'remora'

--- Show a message prefixed with "Remora: ".
--- @param message string
--- @param level? integer a vim.log.levels value (default INFO)
function M.notify(message, level)
  vim.notify('Remora: ' .. message, level or vim.log.levels.INFO)
end

--- The Remora client attached to `bufnr` (default: the current buffer).
--- @param bufnr? integer
--- @return vim.lsp.Client?
function M.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  return vim.lsp.get_clients({ name = M.NAME, bufnr = bufnr })[1]
end

--- Every running Remora client.
--- @return vim.lsp.Client[]
function M.clients()
  return vim.lsp.get_clients({ name = M.NAME })
end

--- The Remora client for a project-wide command (graphs, checkpoints,
--- proposals): the current buffer's, else the only one running, else the one
--- picked with `vim.ui.select` (by project root). Nothing running: a warning.
--- @param callback fun(client: vim.lsp.Client)
function M.project_client(callback)
  local own = M.client()
  if own then
    return callback(own)
  end
  local clients = M.clients()
  if #clients == 0 then
    return M.notify('no Remora server is running: open a Python file of the project', vim.log.levels.WARN)
  elseif #clients == 1 then
    return callback(clients[1])
  end
  vim.ui.select(clients, {
    prompt = 'Which project?',
    format_item = function(client)
      return client.root_dir or ('client ' .. client.id)
    end,
  }, function(client)
    if client then
      callback(client)
    end
  end)
end

--- The qualified names of `node_ids` (asked of the server for those not
--- known yet), then `callback(names)` with id → name (the id when unknown).
--- @param client vim.lsp.Client
--- @param node_ids string[]
--- @param callback fun(names: table<string, string>)
function M.names(client, node_ids, callback)
  local handlers = require('remora.handlers')
  local names, missing = {}, {}
  for _, id in ipairs(node_ids) do
    if handlers.known(id) then
      names[id] = handlers.name(id)
    elseif not vim.list_contains(missing, id) and #missing < 200 then
      table.insert(missing, id)
    end
  end
  local waiting = #missing
  local function finish()
    for _, id in ipairs(node_ids) do
      names[id] = names[id] or handlers.name(id)
    end
    callback(names)
  end
  if waiting == 0 then
    return finish()
  end
  for _, id in ipairs(missing) do
    local function done(card)
      if type(card) == 'table' then
        handlers.learn(card)
      end
      waiting = waiting - 1
      if waiting == 0 then
        finish()
      end
    end
    M.execute(client, 'remora.node.get', { node_id = id }, done, function()
      done(nil) -- a node gone since: shown by its id
    end)
  end
end

--- Run `workspace/executeCommand` with the one JSON object argument every
--- Remora command takes. `on_result(result)` gets the result (nil for null);
--- errors go to `on_error(message)` or, without it, to a notification.
--- @param client vim.lsp.Client
--- @param command string
--- @param argument table
--- @param on_result fun(result: any)
--- @param on_error? fun(message: string)
--- @param bufnr? integer sends pending changes of this buffer first
function M.execute(client, command, argument, on_result, on_error, bufnr)
  if next(argument) == nil then
    argument = vim.empty_dict() -- `{}`, not the `[]` an empty Lua table encodes to
  end
  local params = { command = command, arguments = { argument } }
  local ok = client:request('workspace/executeCommand', params, function(err, result)
    if err then
      local message = err.message or tostring(err)
      if on_error then
        on_error(message)
      else
        M.notify(command .. ': ' .. message, vim.log.levels.ERROR)
      end
      return
    end
    on_result(result)
  end, bufnr)
  if not ok then
    local message = 'the server is not running'
    if on_error then
      on_error(message)
    else
      M.notify(command .. ': ' .. message, vim.log.levels.ERROR)
    end
  end
end

--- The node card of the innermost definition under the cursor of `win`.
--- `callback(card, changed)`: `changed` is true when the buffer changed while
--- the server answered (the answer is dropped: ask again).
--- @param client vim.lsp.Client
--- @param win integer
--- @param callback fun(card: table?, changed: boolean)
--- @param on_error? fun(message: string)
function M.node_at(client, win, callback, on_error)
  local bufnr = vim.api.nvim_win_get_buf(win)
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  local params = vim.lsp.util.make_position_params(win, client.offset_encoding)
  local argument = { uri = params.textDocument.uri, position = params.position }
  M.execute(client, 'remora.node.at', argument, function(card)
    local changed = not vim.api.nvim_buf_is_valid(bufnr)
      or vim.api.nvim_buf_get_changedtick(bufnr) ~= tick
    callback(not changed and card or nil, changed)
  end, on_error, bufnr)
end

return M
