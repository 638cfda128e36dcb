--- :RemoraGraph run [name] | status [gr_…] | cancel [gr_…] | resume [gr_…]:
--- batch graphs (the project's `.remora/graphs/*.yaml`) from Neovim.
---
--- `run` without a name offers the project's graphs (`remora.graphs.list`)
--- with `vim.ui.select`, each with its steps or why it cannot run. A run's
--- progress is the server's work-done progress ("Remora: <name>", "<name>
--- k/N"), in `vim.lsp.status()` and `require('remora').statusline()`; its end
--- is announced with its counts and the proposals it left to review.
--- `status` shows a run's steps × nodes in `remora://graph/<id>`, following
--- its events while shown (`c` cancels, `a` accepts its proposals, `R`
--- refreshes, `q` closes). A run a restart interrupted is announced with the
--- way on: `resume` goes on with it under the same id (the steps that had
--- finished are not run again).
local M = {}

local api = vim.api

local FOLLOWED = { graph_started = true, graph_step_finished = true, graph_completed = true }

--- graph run id → { buf, client_id, generation, pending }
local views = {}

--- Names of graphs seen in the latest listing (for completion).
M.known_graphs = {}

local function server()
  return require('remora.server')
end

local function warn(message)
  server().notify(message, vim.log.levels.WARN)
end

--- One line for a graph of `remora.graphs.list`.
--- @param graph { name: string, steps: string[], problems: string[] }
--- @return string
function M.describe(graph)
  if type(graph.problems) == 'table' and #graph.problems > 0 then
    return string.format('%s — cannot run: %s', graph.name, table.concat(graph.problems, '; '))
  end
  return string.format('%s — %s', graph.name, table.concat(graph.steps or {}, ' → '))
end

--- "completed 4, failed 1" of a counts table, in a stable order.
--- @param counts table<string, integer>?
--- @return string
function M.counts(counts)
  local parts = {}
  for outcome, n in pairs(type(counts) == 'table' and counts or {}) do
    table.insert(parts, string.format('%s %d', outcome, n))
  end
  table.sort(parts)
  return #parts > 0 and table.concat(parts, ', ') or 'nothing finished'
end

--- Start graph `name`.
--- @param client vim.lsp.Client
--- @param name string
local function start(client, name)
  server().execute(client, 'remora.graph.run', { graph = name }, function(result)
    local id = result and result.graph_run_id
    server().notify(string.format('started graph %s (%s): :RemoraGraph status, :RemoraGraph cancel', name, id or '?'))
  end)
end

--- :RemoraGraph run [name]
--- @param name string?
function M.run(name)
  server().project_client(function(client)
    if name and name ~= '' then
      return start(client, name)
    end
    server().execute(client, 'remora.graphs.list', {}, function(graphs)
      graphs = graphs or {}
      M.known_graphs = vim.tbl_map(function(g)
        return g.name
      end, graphs)
      if #graphs == 0 then
        return warn('this project has no graph: add one as .remora/graphs/<name>.yaml (see :help remora-graph)')
      end
      vim.ui.select(graphs, { prompt = 'Run which graph?', format_item = M.describe }, function(graph)
        if not graph then
          return
        end
        if type(graph.problems) == 'table' and #graph.problems > 0 then
          return warn(string.format('graph %s cannot run:\n  %s', graph.name, table.concat(graph.problems, '\n  ')))
        end
        start(client, graph.name)
      end)
    end)
  end)
end

--- `callback(client, graph_run_id)` with the run named, else the latest run
--- matching `wanted` (several running ones: `vim.ui.select`).
--- @param graph_run_id string?
--- @param running_only boolean
--- @param callback fun(client: vim.lsp.Client, graph_run_id: string)
local function with_run(graph_run_id, running_only, callback)
  server().project_client(function(client)
    if graph_run_id and graph_run_id ~= '' then
      return callback(client, graph_run_id)
    end
    server().execute(client, 'remora.graph.runs', { limit = 20 }, function(runs)
      local found = {}
      for _, run in ipairs(runs or {}) do
        if not running_only or run.status == 'running' then
          table.insert(found, run)
        end
      end
      if #found == 0 then
        return warn(running_only and 'no graph run is running' or 'no graph run yet: :RemoraGraph run')
      elseif #found == 1 or not running_only then
        return callback(client, found[1].graph_run_id)
      end
      vim.ui.select(found, {
        prompt = 'Which graph run?',
        format_item = function(run)
          return string.format('%s %s (%s, %s)', run.graph_run_id, run.name, run.status, require('remora.format').when(run.started_at))
        end,
      }, function(run)
        if run then
          callback(client, run.graph_run_id)
        end
      end)
    end)
  end)
end

--- :RemoraGraph cancel [graph_run_id] (without one: the running run).
--- @param graph_run_id string?
function M.cancel(graph_run_id)
  with_run(graph_run_id, true, function(client, id)
    server().execute(client, 'remora.graph.cancel', { graph_run_id = id }, function(result)
      if result and result.cancelled then
        server().notify('cancelling graph run ' .. id)
      else
        warn(string.format('graph run %s is not running', id))
      end
    end)
  end)
end

--- :RemoraGraph resume [graph_run_id] (without one: the latest interrupted run).
--- @param graph_run_id string?
function M.resume(graph_run_id)
  server().project_client(function(client)
    local function go(id)
      server().execute(client, 'remora.graph.resume', { graph_run_id = id }, function()
        server().notify(string.format('graph run %s goes on: the steps that had finished are not run again', id))
      end)
    end
    if graph_run_id and graph_run_id ~= '' then
      return go(graph_run_id)
    end
    server().execute(client, 'remora.graph.runs', { limit = 20 }, function(runs)
      for _, run in ipairs(runs or {}) do
        if run.status == 'interrupted' then
          return go(run.graph_run_id)
        end
      end
      warn('no graph run was interrupted')
    end)
  end)
end

--- The lines of a graph run's status with node names.
--- @param status table a GraphStatus
--- @param names table<string, string> node id → name
--- @return string[] lines
--- @return table[] highlights {row, group}
function M.lines(status, names)
  local lines = {
    string.format('# Graph %s (%s): %s · %s', status.name or '?', status.graph_run_id or '?', status.status or '?', M.counts(status.counts)),
    '[c] cancel  [a] accept its proposals  [R] refresh  [q] close',
  }
  local highlights = { { 0, 'Title' }, { 1, 'Comment' } }
  for _, step in ipairs(status.steps or {}) do
    table.insert(lines, '')
    table.insert(lines, 'step ' .. tostring(step.step))
    table.insert(highlights, { #lines - 1, 'Title' })
    local rows = {}
    for node, outcome in pairs(type(step.nodes) == 'table' and step.nodes or {}) do
      table.insert(rows, { names[node] or node, outcome })
    end
    table.sort(rows, function(a, b)
      return a[1] < b[1]
    end)
    for _, row in ipairs(rows) do
      table.insert(lines, string.format('  %-32s %s', row[1], row[2]))
      if row[2] == 'failed' then
        table.insert(highlights, { #lines - 1, 'RemoraRunFailed' })
      elseif row[2] == 'pending' then
        table.insert(highlights, { #lines - 1, 'RemoraRunActive' })
      end
    end
  end
  local proposals = {}
  for node, id in pairs(type(status.proposals) == 'table' and status.proposals or {}) do
    table.insert(proposals, string.format('  %-32s %s', names[node] or node, id))
  end
  table.sort(proposals)
  table.insert(lines, '')
  table.insert(lines, 'Proposals (review: :RemoraProposals; all together: [a])')
  table.insert(highlights, { #lines - 1, 'Title' })
  vim.list_extend(lines, #proposals > 0 and proposals or { '  none' })
  return lines, highlights
end

--- Fetch and show a run's status in its buffer.
--- @param id string
function M.refresh(id)
  local view = views[id]
  local client = view and vim.lsp.get_client_by_id(view.client_id)
  if not client or not api.nvim_buf_is_valid(view.buf) then
    return
  end
  view.generation = view.generation + 1
  local generation = view.generation
  server().execute(client, 'remora.graph.status', { graph_run_id = id }, function(status)
    if type(status) ~= 'table' then
      return
    end
    local nodes = {}
    for _, step in ipairs(status.steps or {}) do
      vim.list_extend(nodes, vim.tbl_keys(type(step.nodes) == 'table' and step.nodes or {}))
    end
    vim.list_extend(nodes, vim.tbl_keys(type(status.proposals) == 'table' and status.proposals or {}))
    server().names(client, nodes, function(names)
      if views[id] ~= view or view.generation ~= generation or not api.nvim_buf_is_valid(view.buf) then
        return
      end
      local lines, highlights = M.lines(status, names)
      vim.bo[view.buf].modifiable = true
      api.nvim_buf_set_lines(view.buf, 0, -1, false, lines)
      vim.bo[view.buf].modifiable = false
      vim.bo[view.buf].modified = false
      local ns = api.nvim_create_namespace('remora_graph')
      api.nvim_buf_clear_namespace(view.buf, ns, 0, -1)
      for _, hl in ipairs(highlights) do
        api.nvim_buf_set_extmark(view.buf, ns, hl[1], 0, { line_hl_group = hl[2] })
      end
    end)
  end)
end

--- :RemoraGraph status [graph_run_id] (without one: the latest run).
--- @param graph_run_id string?
function M.status(graph_run_id)
  with_run(graph_run_id, false, function(client, id)
    local buf = require('remora.scratch').show('remora://graph/' .. id, { '# Graph run ' .. id .. ': loading…' }, 'remora')
    vim.wo[0][0].wrap = false
    if not views[id] or views[id].buf ~= buf then
      views[id] = { buf = buf, client_id = client.id, generation = 0, pending = 0 }
      local function map(lhs, fn, desc)
        vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, silent = true, desc = desc })
      end
      map('c', function()
        M.cancel(id)
      end, 'Remora: cancel this graph run')
      map('a', function()
        require('remora.proposals').accept_all(id)
      end, "Remora: accept this graph run's pending proposals")
      map('R', function()
        M.refresh(id)
      end, 'Remora: refresh')
      api.nvim_create_autocmd('BufWipeout', {
        buffer = buf,
        once = true,
        callback = function()
          views[id] = nil
        end,
      })
    end
    M.refresh(id)
  end)
end

--- A graph run ended: say how, and what it left to review.
local function announce(event, client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  local id = event.graph_run_id
  local head = string.format('graph run %s %s: %s', id, event.outcome or 'ended', M.counts(event.counts))
  if not client then
    return server().notify(head)
  end
  server().execute(client, 'remora.graph.status', { graph_run_id = id }, function(status)
    local name = type(status) == 'table' and status.name or nil
    local count = type(status) == 'table' and type(status.proposals) == 'table' and vim.tbl_count(status.proposals) or 0
    local text = string.format('graph %s (%s) %s: %s', name or '?', id, event.outcome or 'ended', M.counts(event.counts))
    if count > 0 then
      text = text .. string.format('; %d proposal%s to review: :RemoraProposals', count, count == 1 and '' or 's')
    end
    if event.outcome == 'interrupted' then
      text = text .. string.format('; go on with :RemoraGraph resume %s', id)
    end
    server().notify(text)
  end, function()
    server().notify(head)
  end)
end

--- A `remora/event` arrived: follow it in the status buffers it concerns.
--- @param event table
--- @param client_id integer
function M.on_event(event, client_id)
  if not FOLLOWED[event.type] then
    return
  end
  if event.type == 'graph_completed' then
    announce(event, client_id)
  end
  local view = views[event.graph_run_id or '']
  if not view or not api.nvim_buf_is_valid(view.buf) then
    return
  end
  view.pending = view.pending + 1
  local mark = view.pending
  vim.defer_fn(function()
    if views[event.graph_run_id] == view and view.pending == mark then
      M.refresh(event.graph_run_id)
    end
  end, 80)
end

--- :RemoraGraph {sub} [arg]
--- @param sub string
--- @param arg string?
function M.command(sub, arg)
  if sub == 'run' then
    M.run(arg)
  elseif sub == 'status' then
    M.status(arg)
  elseif sub == 'cancel' then
    M.cancel(arg)
  elseif sub == 'resume' then
    M.resume(arg)
  else
    warn('RemoraGraph takes run [name], status [gr_…], cancel [gr_…] or resume [gr_…]')
  end
end

return M
