--- :RemoraProposals: every pending proposal of the project in the quickfix
--- list (one entry per proposal, at its definition; a change set is one entry,
--- "Change set: add currency (2 definitions in 2 files, 1 new file)", at its
--- first member; a new file "create tests/test_x.py (+5)"), the way
--- trouble.nvim and the quickfix list show project-wide lists. In the quickfix window,
--- :RemoraAccept, :RemoraReject and :RemoraDiff act on the entry under the
--- cursor; `:RemoraProposals accept-all [gr_…]` accepts a graph run's pending
--- proposals together and says, one line each, what became of them. The list
--- follows proposal events while it is the current quickfix list.
local M = {}

local api = vim.api

local TITLE = 'Remora: pending proposals'
local CONTEXT = 'remora_proposals'
local FOLLOWED = {
  rewrite_proposed = true,
  rewrite_applied = true,
  rewrite_rejected = true,
  rewrite_stale = true,
  proposal_checked = true,
}

local state = { generation = 0, pending = 0 }

local function server()
  return require('remora.server')
end

local function warn(message)
  server().notify(message, vim.log.levels.WARN)
end

--- The 1-based line of byte offset `start_byte` of `path`: from its buffer
--- when loaded (the text the proposal was made against), else from the disk.
--- @param path string
--- @param start_byte integer
--- @return integer
local function line_of(path, start_byte)
  start_byte = tonumber(start_byte) or 0
  local buf = vim.fn.bufnr(path)
  if buf > 0 and api.nvim_buf_is_loaded(buf) then
    local line = api.nvim_buf_call(buf, function()
      return vim.fn.byte2line(start_byte + 1)
    end)
    if line > 0 then
      return line
    end
  end
  local file = io.open(path, 'rb')
  if not file then
    return 1
  end
  local head = file:read(start_byte) or ''
  file:close()
  local _, newlines = head:gsub('\n', '')
  return newlines + 1
end

--- The text of a proposal's quickfix entry: "node · pr_… · reasoning · checks".
--- @param p table a ProposalListed
--- @return string
function M.entry_text(p)
  local format = require('remora.format')
  local sets = require('remora.sets')
  local node = p.node ~= vim.NIL and p.node or p.node_id
  local parts = { tostring(node), p.id }
  local reasoning = format.one_line(p.reasoning, 80)
  if p.kind == 'change_set' then
    parts = { sets.title(p), p.id, 'by ' .. tostring(node) }
    reasoning = '' -- its first line is the title's
  elseif p.kind == 'new_file' then
    parts = { sets.new_file_title(p), tostring(node), p.id }
  end
  if reasoning ~= '' then
    table.insert(parts, reasoning)
  end
  local checks = format.checks(p.checks)
  if checks ~= '' then
    table.insert(parts, 'checks: ' .. checks)
  end
  return table.concat(parts, ' · ')
end

--- Quickfix items of listed proposals (`client` gives the project root).
--- @param client vim.lsp.Client
--- @param proposals table[]
--- @return table[]
function M.items(client, proposals)
  local items = {}
  local root = client.root_dir or vim.fn.getcwd()
  for _, p in ipairs(proposals or {}) do
    if type(p) == 'table' and type(p.file_path) == 'string' then
      local path = vim.fs.joinpath(root, p.file_path)
      local first = p.kind == 'change_set' and type(p.members) == 'table' and p.members[1] or nil
      table.insert(items, {
        filename = path,
        lnum = line_of(path, first and first.start_byte or p.start_byte),
        col = 1,
        type = 'I',
        text = M.entry_text(p),
        user_data = { remora_proposal = p.id, client_id = client.id, node = p.node ~= vim.NIL and p.node or p.node_id },
      })
    end
  end
  return items
end

--- Whether the current quickfix list is Remora's.
--- @return boolean
function M.is_current()
  local info = vim.fn.getqflist({ context = 0 })
  return type(info.context) == 'table' and info.context.remora == CONTEXT
end

--- Ask every Remora server for its pending proposals; `callback(items)`.
local function fetch(callback)
  local clients = server().clients()
  local items, waiting = {}, #clients
  if waiting == 0 then
    return callback(items)
  end
  local function done()
    waiting = waiting - 1
    if waiting == 0 then
      table.sort(items, function(a, b)
        if a.filename ~= b.filename then
          return a.filename < b.filename
        end
        return a.lnum < b.lnum
      end)
      callback(items)
    end
  end
  for _, client in ipairs(clients) do
    server().execute(client, 'remora.proposals.list', { status = 'pending' }, function(listed)
      vim.list_extend(items, M.items(client, listed))
      done()
    end, function(message)
      warn('remora.proposals.list: ' .. message)
      done()
    end)
  end
end

--- Put the pending proposals in the quickfix list: a new list, or (`replace`)
--- the current one when it is Remora's, keeping the entry under the cursor.
--- @param replace boolean
--- @param callback? fun(items: table[])
function M.refresh(replace, callback)
  state.generation = state.generation + 1
  local generation = state.generation
  fetch(function(items)
    if generation ~= state.generation then
      return
    end
    local what = {
      title = string.format('%s (%d)', TITLE, #items),
      items = items,
      context = { remora = CONTEXT },
    }
    if replace and M.is_current() then
      local idx = vim.fn.getqflist({ idx = 0 }).idx
      what.idx = math.max(1, math.min(idx, #items))
      vim.fn.setqflist({}, 'r', what)
    else
      vim.fn.setqflist({}, ' ', what)
    end
    if callback then
      callback(items)
    end
  end)
end

--- :RemoraProposals: the list, opened in the quickfix window.
function M.open()
  if #server().clients() == 0 then
    return warn('no Remora server is running: open a Python file of the project')
  end
  M.refresh(M.is_current(), function(items)
    if #items == 0 then
      server().notify('no pending proposal')
    end
    vim.cmd('botright copen')
  end)
end

--- The proposal of the quickfix entry under the cursor, when the cursor is
--- in the quickfix window showing Remora's list.
--- @return { proposal_id: string, client: vim.lsp.Client, node: string }?
function M.under_cursor()
  if vim.bo.buftype ~= 'quickfix' then
    return nil
  end
  local info = vim.fn.getwininfo(api.nvim_get_current_win())[1]
  if not info or info.loclist == 1 or not M.is_current() then
    return nil
  end
  local item = vim.fn.getqflist({ idx = vim.fn.line('.'), items = 0 }).items[1]
  local data = item and item.user_data
  if type(data) ~= 'table' or type(data.remora_proposal) ~= 'string' then
    return nil
  end
  local client = vim.lsp.get_client_by_id(data.client_id)
  if not client then
    return nil
  end
  return { proposal_id = data.remora_proposal, client = client, node = data.node or '?' }
end

--- :RemoraAccept in the list: accept the entry's proposal.
--- @param entry table from under_cursor()
function M.accept(entry)
  server().execute(entry.client, 'remora.proposal.accept', { proposal_id = entry.proposal_id }, function(result)
    if result and result.applied then
      server().notify(string.format('applied the proposal for %s (%s)', entry.node, entry.proposal_id))
    else
      warn(string.format('not applied: %s', result and result.reason or 'unknown reason'))
    end
    M.refresh(true)
  end)
end

--- :RemoraReject [feedback] in the list: reject the entry's proposal.
--- @param entry table from under_cursor()
--- @param feedback string?
function M.reject(entry, feedback)
  local function send(text)
    if type(text) ~= 'string' then
      return -- the person cancelled the prompt
    end
    local argument = { proposal_id = entry.proposal_id, feedback = text }
    server().execute(entry.client, 'remora.proposal.reject', argument, function()
      server().notify(string.format('rejected %s; %s tries again', entry.proposal_id, entry.node))
      M.refresh(true)
    end)
  end
  if feedback and feedback ~= '' then
    send(feedback)
  else
    vim.ui.input({ prompt = string.format('What should %s do differently? ', entry.node) }, send)
  end
end

--- :RemoraDiff in the list: the entry's diff.
--- @param entry table from under_cursor()
function M.diff(entry)
  require('remora.actions').show_diff(entry.client, entry.proposal_id, entry.node)
end

-- ---- accepting a graph run's proposals ----------------------------------------------

--- Accept `ids` together and say, one line each, what became of them.
--- @param client vim.lsp.Client
--- @param ids string[]
--- @param label string what they are, for the message
function M.accept_together(client, ids, label)
  server().execute(client, 'remora.proposals.accept', { proposal_ids = ids }, function(results)
    results = results or {}
    local applied, lines = 0, {}
    for _, r in ipairs(results) do
      if r.applied then
        applied = applied + 1
        table.insert(lines, string.format('  %s applied', r.proposal_id))
      else
        table.insert(lines, string.format('  %s not applied: %s', r.proposal_id, r.reason or '?'))
      end
    end
    local head = string.format('accepted %s: %d of %d applied', label, applied, #results)
    server().notify(head .. '\n' .. table.concat(lines, '\n'), applied == #results and vim.log.levels.INFO or vim.log.levels.WARN)
    if M.is_current() then
      M.refresh(true)
    end
  end)
end

--- The pending proposals of graph run `run` ({proposals: node → id}).
local function pending_of(run, pending)
  local ids = {}
  for _, id in pairs(type(run.proposals) == 'table' and run.proposals or {}) do
    if pending[id] then
      table.insert(ids, id)
    end
  end
  table.sort(ids)
  return ids
end

--- `:RemoraProposals accept-all [graph_run_id]`: accept a graph run's pending
--- proposals together (without an id: the latest run that has some; several
--- are offered with `vim.ui.select`).
--- @param graph_run_id string?
function M.accept_all(graph_run_id)
  server().project_client(function(client)
    server().execute(client, 'remora.proposals.list', { status = 'pending' }, function(listed)
      local pending = {}
      for _, p in ipairs(listed or {}) do
        pending[p.id] = true
      end
      server().execute(client, 'remora.graph.runs', { limit = 50 }, function(runs)
        local candidates = {}
        for _, run in ipairs(runs or {}) do
          local ids = pending_of(run, pending)
          if (graph_run_id == nil and #ids > 0) or run.graph_run_id == graph_run_id then
            table.insert(candidates, { run = run, ids = ids })
          end
        end
        local function go(choice)
          if not choice then
            return
          end
          local label = string.format('graph %s (%s)', choice.run.name, choice.run.graph_run_id)
          if #choice.ids == 0 then
            return warn(label .. ' has no pending proposal')
          end
          M.accept_together(client, choice.ids, label)
        end
        if #candidates == 0 then
          return warn(graph_run_id and ('no graph run ' .. graph_run_id .. ' among the latest') or 'no graph run has pending proposals')
        elseif #candidates == 1 then
          return go(candidates[1])
        end
        vim.ui.select(candidates, {
          prompt = 'Accept the proposals of which graph run?',
          format_item = function(c)
            return string.format('%s %s (%s, %s) · %d pending', c.run.graph_run_id, c.run.name, c.run.status, require('remora.format').when(c.run.started_at), #c.ids)
          end,
        }, go)
      end)
    end)
  end)
end

--- A `remora/event` arrived: refresh the list when it is Remora's and a
--- proposal changed (coalesced for a moment).
--- @param event table
function M.on_event(event)
  if not FOLLOWED[event.type] or not M.is_current() then
    return
  end
  state.pending = state.pending + 1
  local mark = state.pending
  vim.defer_fn(function()
    if mark == state.pending and M.is_current() then
      M.refresh(true)
    end
  end, 150)
end

return M
