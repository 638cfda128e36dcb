--- The model tokens Remora's agents used today, as the servers stored them
--- (`remora.usage` since local midnight: each run's tokens as the model
--- reported them, input and output, cached where the model says so), summed
--- over this Neovim's Remora servers. Fetched when a server attaches, and
--- again shortly after each model answer and run end (a burst is one fetch). Shown by
--- `require('remora').statusline()`.
local M = {}

local FETCHED_AFTER = {
  model_response = true,
  agent_completed = true,
  agent_failed = true,
  agent_cancelled = true,
}
local DELAY_MS = 150

local state = {
  clients = {}, -- client id → { input, output, cached }
  asked = {}, -- client ids asked once when they attached
  pending = 0,
}

--- Ask every Remora client for today's totals.
function M.refresh()
  local server = require('remora.server')
  for _, client in ipairs(server.clients()) do
    local id = client.id
    server.execute(client, 'remora.usage', { since = 'today', limit = 1 }, function(report)
      local total = type(report) == 'table' and report.total
      if type(total) ~= 'table' then
        return
      end
      state.clients[id] = {
        input = tonumber(total.input_tokens) or 0,
        output = tonumber(total.output_tokens) or 0,
        cached = tonumber(total.cached_tokens) or 0,
      }
      vim.cmd('redrawstatus')
    end, function() end)
  end
end

--- A Remora client attached: read its totals once (a restarted Neovim shows
--- the day's tokens before any new model answer).
--- @param client vim.lsp.Client
function M.attached(client)
  if state.asked[client.id] then
    return
  end
  state.asked[client.id] = true
  M.refresh()
end

--- A `remora/event` arrived: fetch the totals again if it may change them.
--- @param event table
function M.on_event(event)
  if not FETCHED_AFTER[event.type] then
    return
  end
  state.pending = state.pending + 1
  local mark = state.pending
  vim.defer_fn(function()
    if mark == state.pending then
      M.refresh()
    end
  end, DELAY_MS)
end

--- Tokens used today by the agents of the servers still running.
--- @return { input: integer, output: integer, cached: integer, total: integer }
function M.totals()
  local sum = { input = 0, output = 0, cached = 0 }
  for id, totals in pairs(state.clients) do
    if vim.lsp.get_client_by_id(id) then
      sum.input = sum.input + totals.input
      sum.output = sum.output + totals.output
      sum.cached = sum.cached + totals.cached
    end
  end
  sum.total = sum.input + sum.output
  return sum
end

--- "1234" below ten thousand, else "12.3k", "1.2M".
--- @param n number
--- @return string
function M.short(n)
  if n < 10000 then
    return tostring(math.floor(n))
  elseif n < 1e6 then
    return string.format('%.1fk', n / 1000)
  end
  return string.format('%.1fM', n / 1e6)
end

--- "45 tokens today" for the statusline ('' before the first model answer).
--- @return string
function M.statusline()
  local total = M.totals().total
  if total == 0 then
    return ''
  end
  return M.short(total) .. ' tokens today'
end

return M
