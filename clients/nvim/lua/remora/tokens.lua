--- The model tokens this Neovim session's Remora servers reported: the sum
--- of every `model_response` event's `usage` (input and output tokens, as
--- the model server counted them) since Neovim started. Shown by
--- `require('remora').statusline()`.
local M = {}

local totals = { input = 0, output = 0 }

--- Count a `model_response` event's usage.
--- @param event table
function M.on_event(event)
  if event.type ~= 'model_response' or type(event.usage) ~= 'table' then
    return
  end
  local input = tonumber(event.usage.input_tokens) or 0
  local output = tonumber(event.usage.output_tokens) or 0
  if input > 0 or output > 0 then
    totals.input = totals.input + input
    totals.output = totals.output + output
    vim.cmd('redrawstatus')
  end
end

--- Tokens used so far.
--- @return { input: integer, output: integer, total: integer }
function M.totals()
  return { input = totals.input, output = totals.output, total = totals.input + totals.output }
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

--- "45 tokens" for the statusline ('' before the first model answer).
--- @return string
function M.statusline()
  local total = totals.input + totals.output
  if total == 0 then
    return ''
  end
  return M.short(total) .. ' tokens'
end

return M
