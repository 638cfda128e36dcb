--- Work-done progress of Remora's runs, read from Neovim's `LspProgress`
--- autocmd: what the statusline shows and which token `:RemoraCancel` cancels.
---
--- Neovim itself keeps the progress for `vim.lsp.status()`; this module keeps
--- only the tokens of Remora clients that have begun and not yet ended.
local M = {}

local INDEXING = 'Remora: indexing'

--- client id → token → { title, message, percentage, cancellable }
--- @type table<integer, table<string|integer, table>>
local active = {}

--- Handle one `LspProgress` autocmd.
--- @param args { data: { client_id: integer, params: lsp.ProgressParams } }
function M.on_progress(args)
  local data = args.data or {}
  local client = vim.lsp.get_client_by_id(data.client_id)
  if not client or client.name ~= require('remora.server').NAME then
    return
  end
  local params = data.params or {}
  local value = params.value
  if type(value) ~= 'table' then
    return
  end
  local tokens = active[client.id] or {}
  active[client.id] = tokens
  local token = params.token
  if value.kind == 'begin' then
    tokens[token] = {
      title = value.title,
      message = value.message,
      percentage = value.percentage,
      cancellable = value.cancellable,
    }
  elseif value.kind == 'report' and tokens[token] then
    tokens[token].message = value.message or tokens[token].message
    tokens[token].percentage = value.percentage
  elseif value.kind == 'end' then
    local ended = tokens[token]
    tokens[token] = nil
    if ended and ended.title == INDEXING then
      -- Lenses asked for before indexing ended are already answered; show
      -- the full set now.
      require('remora.lenses').refresh_client(client)
    end
  end
  vim.cmd('redrawstatus')
end

--- Forget a client that stopped.
--- @param client_id integer
function M.forget(client_id)
  active[client_id] = nil
end

--- Progress under way, oldest token order not guaranteed.
--- @param client_id? integer only this client's
--- @return { client_id: integer, token: string|integer, title: string, message: string?, percentage: integer?, cancellable: boolean? }[]
function M.active(client_id)
  local found = {}
  for id, tokens in pairs(active) do
    if client_id == nil or id == client_id then
      for token, p in pairs(tokens) do
        table.insert(found, {
          client_id = id,
          token = token,
          title = p.title,
          message = p.message,
          percentage = p.percentage,
          cancellable = p.cancellable,
        })
      end
    end
  end
  table.sort(found, function(a, b)
    return tostring(a.title) < tostring(b.title)
  end)
  return found
end

--- A statusline component: "Remora: Service.helper thinking…" for each
--- piece of work under way, then today's tokens ("| 45 tokens today"); ''
--- when Remora is idle and no model answered yet.
--- @return string
function M.statusline()
  local parts = {}
  for _, p in ipairs(M.active()) do
    local text = p.title or 'Remora'
    local message = p.message
    local name = text:match('^Remora: (.+)$')
    if message and name and message:sub(1, #name + 1) == name .. ' ' then
      message = message:sub(#name + 2) -- a graph run's "doc-inventory 3/8": its name once
    end
    if message and message ~= '' then
      text = text .. ' ' .. message
    end
    if p.percentage then
      text = text .. string.format(' (%d%%)', p.percentage)
    end
    table.insert(parts, text)
  end
  local tokens = require('remora.tokens').statusline()
  if tokens ~= '' then
    table.insert(parts, #parts == 0 and ('Remora: ' .. tokens) or tokens)
  end
  return table.concat(parts, ' | ')
end

return M
