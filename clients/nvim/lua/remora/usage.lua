--- :RemoraUsage [since]: what agents' runs cost, as the server stored them
--- (`remora.usage`): in all, by day, node, graph run and cascade — tokens
--- (input, output, cached) and wall time — in a scratch buffer
--- (`remora://usage`). `since`: a date (2026-11-27), `today` or a span back
--- (24h, 7d); none: ever.
local M = {}

--- The report's lines.
--- @param report table remora.usage's answer
--- @return string[]
function M.lines(report)
  local format = require('remora.format')
  local short = require('remora.tokens').short
  local total = report.total or {}
  local lines = {
    string.format(
      '# Remora usage%s: %d runs, %s tokens (%s in, %s out, %s cached), %s',
      type(report.since) == 'number' and (' since ' .. os.date('%Y-%m-%d %H:%M', math.floor(report.since))) or '',
      tonumber(total.runs) or 0,
      short(tonumber(total.tokens) or 0),
      short(tonumber(total.input_tokens) or 0),
      short(tonumber(total.output_tokens) or 0),
      short(tonumber(total.cached_tokens) or 0),
      format.duration(tonumber(total.seconds) or 0)
    ),
  }
  for _, group in ipairs({ { 'by_day', 'day' }, { 'by_node', 'node' }, { 'by_graph', 'graph run' }, { 'by_cascade', 'cascade' } }) do
    local rows = report[group[1]] or {}
    if #rows > 0 then
      table.insert(lines, '')
      table.insert(lines, string.format('%-40s %5s %9s %9s', group[2], 'runs', 'tokens', 'time'))
      for _, row in ipairs(rows) do
        local key = row.key
        if type(row.name) == 'string' then
          key = row.name .. ' (' .. row.key .. ')'
        end
        table.insert(
          lines,
          string.format('%-40s %5d %9s %9s', format.one_line(key, 40), tonumber(row.runs) or 0, short(tonumber(row.tokens) or 0), format.duration(tonumber(row.seconds) or 0))
        )
      end
    end
  end
  return lines
end

--- :RemoraUsage [since]
--- @param since string?
function M.open(since)
  local server = require('remora.server')
  server.project_client(function(client)
    local argument = { limit = 20 }
    if since and since ~= '' then
      argument.since = since
    end
    server.execute(client, 'remora.usage', argument, function(report)
      require('remora.scratch').show('remora://usage', M.lines(report or {}), 'remora')
    end)
  end)
end

return M
