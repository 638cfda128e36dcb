--- :RemoraHistory: a node's whole conversation in a scratch buffer
--- (`remora://history/<node id>`), oldest first, texts in full: what you
--- asked, what the agent answered, the questions it asked you and your
--- answers, what it asked other agents and what they answered, its proposals
--- and what became of them (its status now and what was checked; a pending
--- one is accepted or rejected from there with :RemoraAccept / :RemoraReject,
--- which act on the conversation's node). While the buffer is shown it follows new
--- messages (`remora/event`), keeping the cursor at the end if it was there.
local M = {}

local api = vim.api

--- node id → { buf, client_id, card, generation }
local open = {}

local FOLLOWED = {
  human_chat = true,
  agent_message = true,
  agent_completed = true,
  agent_failed = true,
  agent_cancelled = true,
  run_interrupted = true,
  agent_blocked = true,
  agent_resumed = true,
  rewrite_proposed = true,
  rewrite_applied = true,
  rewrite_rejected = true,
  rewrite_stale = true,
  proposal_checked = true,
}

--- Proposals whose status and checks are fetched for a conversation (the latest).
local MAX_PROPOSALS = 30

--- The buffer lines of a conversation.
--- @param card table
--- @param entries table[]
--- @param proposals? table<string, table> proposal id → {status, checks} now
--- @return string[] lines
--- @return integer[] header rows (0-based)
function M.lines(card, entries, proposals)
  local format = require('remora.format')
  local me = card.qualified_name or card.id
  local lines = { string.format('# %s (%s): conversation, oldest first', me, card.id) }
  local headers = { 0 }
  if #entries == 0 then
    table.insert(lines, 'Nothing yet: ask with :RemoraAsk.')
  end
  for _, entry in ipairs(entries) do
    table.insert(lines, '')
    table.insert(lines, '── ' .. format.entry_header(entry, me))
    table.insert(headers, #lines - 1)
    vim.list_extend(lines, format.entry_text(entry, (proposals or {})[entry.proposal_id or '']))
  end
  return lines, headers
end

local function render(node_id, entries, proposals)
  local view = open[node_id]
  if not view or not api.nvim_buf_is_valid(view.buf) then
    return
  end
  local lines, headers = M.lines(view.card, entries or {}, proposals)
  local buf = view.buf
  local wins = vim.fn.win_findbuf(buf)
  local at_end = {}
  for _, win in ipairs(wins) do
    at_end[win] = api.nvim_win_get_cursor(win)[1] >= api.nvim_buf_line_count(buf)
  end
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  local ns = api.nvim_create_namespace('remora_history')
  api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for _, row in ipairs(headers) do
    api.nvim_buf_set_extmark(buf, ns, row, 0, { line_hl_group = row == 0 and 'Title' or 'RemoraHistoryHeader' })
  end
  for _, win in ipairs(wins) do
    if at_end[win] then
      api.nvim_win_set_cursor(win, { #lines, 0 })
    end
  end
end

--- Fetch the conversation again and show it.
--- @param node_id string
function M.refresh(node_id)
  local view = open[node_id]
  local client = view and vim.lsp.get_client_by_id(view.client_id)
  if not client then
    return
  end
  view.generation = view.generation + 1
  local generation = view.generation
  local limit = require('remora.config').options.history_limit
  local server = require('remora.server')
  server.execute(client, 'remora.agent.history', { node_id = node_id, limit = limit }, function(entries)
    if not open[node_id] or open[node_id].generation ~= generation then
      return
    end
    entries = entries or {}
    -- Each proposal's status and checks as they stand now (checks finish
    -- after the proposal is made).
    local ids = {}
    for i = #entries, 1, -1 do
      local id = entries[i].kind == 'proposal' and entries[i].proposal_id
      if type(id) == 'string' and not vim.list_contains(ids, id) and #ids < MAX_PROPOSALS then
        table.insert(ids, id)
      end
    end
    local proposals, waiting = {}, #ids
    local function done()
      if open[node_id] and open[node_id].generation == generation then
        render(node_id, entries, proposals)
      end
    end
    if waiting == 0 then
      return done()
    end
    for _, id in ipairs(ids) do
      local function got(diff)
        if type(diff) == 'table' then
          proposals[id] = { status = diff.status, checks = diff.checks }
        end
        waiting = waiting - 1
        if waiting == 0 then
          done()
        end
      end
      server.execute(client, 'remora.proposal.diff', { proposal_id = id }, got, function()
        got(nil)
      end)
    end
  end)
end

--- The node of the conversation shown in `bufnr` (nil: not a conversation).
--- @param bufnr integer
--- @return table? card
--- @return vim.lsp.Client? client
function M.current(bufnr)
  for _, view in pairs(open) do
    if view.buf == bufnr then
      return view.card, vim.lsp.get_client_by_id(view.client_id)
    end
  end
  return nil, nil
end

--- Open (or bring back) the conversation of the node of `card`.
--- @param card table
--- @param client vim.lsp.Client
function M.open(card, client)
  local name = 'remora://history/' .. card.id
  local buf = require('remora.scratch').show(name, { '# ' .. (card.qualified_name or card.id) .. ': loading…' }, 'remora')
  vim.wo[0][0].wrap = true
  local height = math.floor(vim.o.lines / 2)
  if api.nvim_win_get_height(0) < height then
    vim.cmd('resize ' .. height)
  end
  local view = open[card.id]
  if not view or view.buf ~= buf then
    open[card.id] = { buf = buf, client_id = client.id, card = card, generation = 0 }
    api.nvim_create_autocmd('BufWipeout', {
      buffer = buf,
      once = true,
      callback = function()
        open[card.id] = nil
      end,
    })
  end
  M.refresh(card.id)
end

--- A `remora/event` arrived: follow it in the conversations it concerns
--- (refreshes are coalesced for a moment).
--- @param event table
function M.on_event(event)
  if not FOLLOWED[event.type] then
    return
  end
  for node_id, view in pairs(open) do
    local concerned = event.agent_id == node_id
      or event.node_id == node_id
      or event.to_agent == node_id
      or event.from_agent == node_id
    if concerned and api.nvim_buf_is_valid(view.buf) and #vim.fn.win_findbuf(view.buf) > 0 then
      view.pending = (view.pending or 0) + 1
      local mark = view.pending
      vim.defer_fn(function()
        if open[node_id] and open[node_id].pending == mark then
          M.refresh(node_id)
        end
      end, 80)
    end
  end
end

return M
