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
