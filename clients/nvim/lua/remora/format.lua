--- Text for people: node cards, proposals and events as buffer lines.
--- Pure functions (no editor state), shared by the panel and the scratch views.
local M = {}

local MAX_WIDTH = 160

--- One line: newlines folded, long text cut.
--- @param text any
--- @param width? integer
--- @return string
function M.one_line(text, width)
  if text == nil or text == vim.NIL then
    return ''
  end
  local line = tostring(text):gsub('%s*\n%s*', ' ⏎ ')
  width = width or MAX_WIDTH
  if vim.fn.strchars(line) > width then
    line = vim.fn.strcharpart(line, 0, width - 1) .. '…'
  end
  return line
end

--- "Name (rm_xxxxxxxx)" of a node reference.
--- @param node table? a node reference (id, qualified_name, ...)
--- @return string
function M.ref(node)
  if not node or node == vim.NIL then
    return '—'
  end
  return string.format('%s (%s)', node.qualified_name or node.name or '?', node.id or '?')
end

--- Qualified names of a list of node references, at most `max`.
--- @param nodes table[]?
--- @param max? integer
--- @return string
function M.refs(nodes, max)
  if not nodes or nodes == vim.NIL or #nodes == 0 then
    return '—'
  end
  max = max or 6
  local names = {}
  for i, node in ipairs(nodes) do
    if i > max then
      table.insert(names, string.format('… (+%d)', #nodes - max))
      break
    end
    table.insert(names, node.qualified_name or node.name or node.id)
  end
  return table.concat(names, ', ')
end

local function field(e, key)
  local value = e[key]
  if value == nil or value == vim.NIL then
    return ''
  end
  return tostring(value)
end

--- What to show after an event's type.
local DETAILS = {
  human_chat = function(e)
    return field(e, 'message')
  end,
  agent_message = function(e)
    local from = e.from_name ~= nil and e.from_name ~= vim.NIL and e.from_name ~= '' and e.from_name or field(e, 'from_agent')
    local to = e.to_name ~= nil and e.to_name ~= vim.NIL and e.to_name ~= '' and e.to_name or field(e, 'to_agent')
    return from .. ' → ' .. to .. ': ' .. field(e, 'message')
  end,
  agent_completed = function(e)
    return field(e, 'result')
  end,
  agent_failed = function(e)
    return field(e, 'error')
  end,
  agent_cancelled = function(e)
    return field(e, 'reason')
  end,
  agent_blocked = function(e)
    return field(e, 'question')
  end,
  agent_resumed = function(e)
    return field(e, 'outcome') .. ': ' .. field(e, 'answer')
  end,
  model_request = function(e)
    local attempt = tonumber(e.attempt) or 1
    return field(e, 'model') .. (attempt > 1 and (' (attempt ' .. attempt .. ')') or '')
  end,
  model_response = function(e)
    local usage = type(e.usage) == 'table' and e.usage or {}
    return string.format('%s in, %s out', usage.input_tokens or '?', usage.output_tokens or '?')
  end,
  tool_called = function(e)
    return field(e, 'tool')
  end,
  tool_result = function(e)
    return field(e, 'tool') .. (e.ok and ' ok ' or ' failed ') .. field(e, 'summary')
  end,
  rewrite_proposed = function(e)
    return field(e, 'proposal_id')
  end,
  rewrite_applied = function(e)
    return field(e, 'proposal_id')
  end,
  rewrite_rejected = function(e)
    local part = type(e.members) == 'table' and #e.members > 0 and 'member of ' or ''
    return part .. field(e, 'proposal_id') .. ' ' .. field(e, 'feedback')
  end,
  rewrite_stale = function(e)
    return field(e, 'proposal_id') .. ' ' .. field(e, 'reason')
  end,
  rewrite_not_applied = function(e)
    return field(e, 'proposal_id') .. ' ' .. field(e, 'reason')
  end,
  content_changed = function(e)
    return field(e, 'change') .. ' ' .. field(e, 'path')
  end,
  trigger_refused = function(e)
    -- One refusal may name many agents (a cascade's budget spent).
    local ids = type(e.agent_ids) == 'table' and #e.agent_ids or 0
    local others = ids > 1 and (' (and ' .. (ids - 1) .. ' others)') or ''
    return field(e, 'rule') .. others .. ': ' .. field(e, 'reason')
  end,
  limit_reached = function(e)
    return field(e, 'limit') .. ': ' .. field(e, 'reason')
  end,
  topology_changed = function(e)
    local function count(key)
      return type(e[key]) == 'table' and #e[key] or 0
    end
    return string.format('%s +%d -%d', field(e, 'path'), count('added'), count('removed'))
  end,
  agent_started = function(e)
    return field(e, 'run_id')
  end,
  run_interrupted = function(e)
    return field(e, 'run_id') .. ' (the server stopped during it)'
  end,
  proposal_checked = function(e)
    return field(e, 'proposal_id') .. ' ' .. M.checks({ type(e.check) == 'table' and e.check or nil })
  end,
  checkpoint_created = function(e)
    return field(e, 'checkpoint_id')
  end,
  checkpoint_restored = function(e)
    return field(e, 'checkpoint_id')
  end,
  graph_started = function(e)
    return string.format('%s %s (%s nodes)', field(e, 'graph_run_id'), field(e, 'name'), field(e, 'node_count'))
  end,
  graph_step_finished = function(e)
    return string.format('%s %s %s %s', field(e, 'graph_run_id'), field(e, 'step'), field(e, 'outcome'), field(e, 'proposal_id'))
  end,
  graph_completed = function(e)
    return field(e, 'graph_run_id') .. ' ' .. field(e, 'outcome')
  end,
}

--- One line for an event: "HH:MM:SS type detail".
--- @param e table the event's JSON
--- @param width? integer
--- @return string
function M.event(e)
  local time = tonumber(e.timestamp) and os.date('%H:%M:%S', math.floor(e.timestamp)) or '--:--:--'
  local detail = DETAILS[e.type] and DETAILS[e.type](e) or ''
  return M.one_line(string.format('%s %-18s %s', time, e.type or '?', detail))
end

--- "2026-11-27 08:10" of a timestamp (seconds), or '?'.
--- @param timestamp any
--- @return string
function M.when(timestamp)
  return tonumber(timestamp) and os.date('%Y-%m-%d %H:%M', math.floor(timestamp)) or '?'
end

local CHECK_MARKS = { passed = '✓', failed = '✗', running = '…' }

--- What was checked of a proposal, on one line: "docstring-only ✓ (code
--- unchanged except docstrings), tests … running"; '' when nothing was.
--- @param checks table[]? {name, ok, detail, status}
--- @return string
function M.checks(checks)
  if type(checks) ~= 'table' or #checks == 0 then
    return ''
  end
  local parts = {}
  for _, check in ipairs(checks) do
    local status = type(check.status) == 'string' and check.status ~= '' and check.status
      or (check.ok == true and 'passed' or check.ok == false and 'failed' or 'not_checked')
    local text = tostring(check.name or '?') .. ' ' .. (CHECK_MARKS[status] or status:gsub('_', ' '))
    local detail = check.detail ~= vim.NIL and check.detail or ''
    if detail ~= '' then
      text = text .. ' (' .. M.one_line(detail, 60) .. ')'
    end
    table.insert(parts, text)
  end
  return table.concat(parts, ', ')
end

--- The newest pending proposal of a card (or nil).
--- @param card table?
--- @return table?
function M.pending(card)
  local newest
  for _, proposal in ipairs(card and card.proposals or {}) do
    if proposal.status == 'pending' and (not newest or (proposal.created_at or 0) >= (newest.created_at or 0)) then
      newest = proposal
    end
  end
  return newest
end

--- Lines and highlights of a proposal: id, reasoning, unified diff.
--- @param proposal table
--- @param lines string[] appended to
--- @param highlights table[] {row, group} appended to
function M.proposal(proposal, lines, highlights)
  table.insert(lines, string.format('Pending proposal %s', proposal.id))
  table.insert(highlights, { #lines - 1, 'Title' })
  local reasoning = proposal.reasoning
  if type(reasoning) == 'string' and reasoning ~= '' then
    table.insert(lines, '  ' .. M.one_line(reasoning))
    table.insert(highlights, { #lines - 1, 'Comment' })
  end
  local checks = M.checks(proposal.checks)
  if checks ~= '' then
    table.insert(lines, '  checks: ' .. checks)
    table.insert(highlights, { #lines - 1, 'Comment' })
  end
  for _, line in ipairs(vim.split(proposal.diff or '', '\n', { plain = true, trimempty = true })) do
    table.insert(lines, line)
    local first = line:sub(1, 1)
    if line:sub(1, 3) == '+++' or line:sub(1, 3) == '---' then
      table.insert(highlights, { #lines - 1, 'Comment' })
    elseif first == '+' then
      table.insert(highlights, { #lines - 1, 'Added' })
    elseif first == '-' then
      table.insert(highlights, { #lines - 1, 'Removed' })
    elseif first == '@' then
      table.insert(highlights, { #lines - 1, 'Special' })
    end
  end
end

--- "name (rm_…)" of a conversation party ({id, name}).
local function party(p)
  if type(p) ~= 'table' then
    return '?'
  end
  local name = p.name ~= vim.NIL and p.name or nil
  return name and string.format('%s (%s)', name, p.id) or tostring(p.id)
end

local KIND_TITLES = {
  message = 'message',
  request = 'asks',
  reply = 'answers',
  answer = 'answer',
  failure = 'failed',
  cancelled = 'cancelled',
  interrupted = 'interrupted',
  question = 'asks you',
  answer_given = 'answered',
  timed_out = 'no answer in time',
  proposal = 'proposes',
  accepted = 'accepted',
  rejected = 'rejected',
  stale = 'stale',
}

--- The header line of a conversation entry: "HH:MM:SS who · what · run".
--- @param entry table an entry of remora.agent.history
--- @param me string the node's name
--- @return string
function M.entry_header(entry, me)
  local time = tonumber(entry.timestamp) and os.date('%H:%M:%S', math.floor(entry.timestamp)) or '--:--:--'
  local who
  if entry.role == 'person' then
    who = 'you'
  elseif entry.role == 'node' then
    who = party(entry.from) .. ' → ' .. me
  elseif type(entry.to) == 'table' then
    who = me .. ' → ' .. party(entry.to)
  else
    who = me
  end
  local what = KIND_TITLES[entry.kind] or tostring(entry.kind)
  if entry.kind == 'answer_given' and entry.outcome == 'timed_out' then
    what = KIND_TITLES.timed_out
  elseif entry.kind == 'answer_given' and entry.outcome == 'cancelled' then
    what = 'question withdrawn'
  end
  local run = type(entry.run_id) == 'string' and (' · ' .. entry.run_id) or ''
  local woke = ''
  if type(entry.woken_by) == 'table' then
    local by = entry.woken_by
    local event = type(by.event_type) == 'string' and (': ' .. by.event_type) or ''
    woke = string.format(' · woken by %s%s', by.text or by.id or '?', event)
  end
  return string.format('%s %s · %s%s%s', time, who, what, run, woke)
end

--- The text lines of a conversation entry, whole (options listed after a question).
--- @param entry table
--- @return string[]
--- @param proposal? table the proposal of a `proposal` entry as it stands
--- now ({status, checks}), when known
function M.entry_text(entry, proposal)
  local lines = vim.split(tostring(entry.text or ''), '\n', { plain = true })
  if type(entry.options) == 'table' and #entry.options > 0 then
    table.insert(lines, 'options: ' .. table.concat(entry.options, ' | '))
  end
  if entry.kind == 'proposal' and type(entry.proposal_id) == 'string' then
    local status = proposal and proposal.status or nil
    local line = entry.proposal_id .. (status and (' · ' .. status) or '')
    local checks = proposal and M.checks(proposal.checks) or ''
    if checks ~= '' then
      line = line .. ' · checks: ' .. checks
    end
    if status == 'pending' then
      line = line .. ' · :RemoraAccept :RemoraReject :RemoraDiff'
    elseif status == 'accepted' then
      line = line .. ' · :RemoraRevert ' .. entry.proposal_id
    end
    table.insert(lines, 1, line) -- first: the panel shows a diff's first lines only

  end
  return lines
end

--- The proposal `proposal_id` among a card's proposals (or nil).
--- @param card table
--- @param proposal_id any
--- @return table?
function M.proposal_of(card, proposal_id)
  for _, proposal in ipairs(type(card.proposals) == 'table' and card.proposals or {}) do
    if proposal.id == proposal_id then
      return proposal
    end
  end
  return nil
end

--- One line for a run of remora.runs.list.
--- @param run table
--- @return string
function M.run(run)
  local node = type(run.node) == 'table' and run.node or {}
  local started = tonumber(run.started_at) and os.date('%H:%M:%S', math.floor(run.started_at)) or '--:--:--'
  local trigger = type(run.trigger) == 'table' and M.trigger(run.trigger) or '?'
  local outcome = run.outcome ~= vim.NIL and run.outcome or ''
  if run.reason == 'limit_reached' then
    outcome = 'limit reached: ' .. outcome
  end
  return M.one_line(
    string.format(
      '%-16s %-11s %s  %-24s %-14s %s  %s',
      run.id ~= vim.NIL and run.id or '(no id yet)',
      run.status or '?',
      started,
      node.name ~= vim.NIL and node.name or node.id or '?',
      M.cost(run.usage),
      trigger,
      M.one_line(outcome, 60)
    )
  )
end

--- What woke a run: "person", "change of pkg/a.py [changes of its code]".
--- @param trigger table a run's trigger (remora.runs.list)
--- @return string
function M.trigger(trigger)
  local fired = type(trigger.subscription) == 'table' and trigger.subscription or nil
  if fired then
    return string.format('%s [%s]', trigger.text or '?', fired.text or fired.id)
  end
  return trigger.text or '?'
end

--- "4.2s", "3m05s", "1h02m".
--- @param seconds number
--- @return string
function M.duration(seconds)
  if seconds >= 3600 then
    return string.format('%dh%02dm', math.floor(seconds / 3600), math.floor(seconds % 3600 / 60))
  elseif seconds >= 60 then
    return string.format('%dm%02ds', math.floor(seconds / 60), math.floor(seconds % 60))
  end
  return string.format('%.1fs', seconds)
end

--- A run's (or a node's) cost: "1.2k tok 4.2s" ('' for a queued run).
--- @param usage table? {tokens, seconds} as the server stored them
--- @return string
function M.cost(usage)
  if type(usage) ~= 'table' then
    return ''
  end
  local short = require('remora.tokens').short
  return string.format('%s tok %s', short(tonumber(usage.tokens) or 0), M.duration(tonumber(usage.seconds) or 0))
end

--- What wakes a node, in one line: its subscriptions' texts ("muted" first
--- when a person muted it).
--- @param card table a node card
--- @return string
function M.wakes(card)
  local texts = {}
  for _, sub in ipairs(type(card.subscriptions) == 'table' and card.subscriptions or {}) do
    table.insert(texts, sub.text or sub.id)
  end
  local line = #texts > 0 and table.concat(texts, '; ') or '—'
  return card.muted == true and ('muted (only your messages) · ' .. line) or line
end

--- Lines and highlights of a node card for the side panel.
--- @param card table a node card (remora.node.get / remora.node.at)
--- @param opts { events: integer, keys: remora.PanelKeys }
--- @return string[] lines
--- @return table[] highlights {row, group}
function M.card(card, opts)
  local lines, highlights = {}, {}
  local function add(line, group)
    table.insert(lines, line)
    if group then
      table.insert(highlights, { #lines - 1, group })
    end
  end
  local keys = opts.keys
  add(card.qualified_name or card.name or card.id, 'Title')
  add(string.format('  id       %s', card.id))
  add(string.format('  kind     %s', card.kind or '?'))
  add(string.format('  status   %s', card.agent_status or '?'))
  local where = card.file_path or ''
  if tonumber(card.start_line) then
    where = string.format('%s:%d-%d', where, card.start_line + 1, (tonumber(card.end_line) or card.start_line) + 1)
  end
  add(string.format('  file     %s', where))
  add(string.format('  parent   %s', M.ref(card.parent)))
  add(string.format('  callers  %s', M.refs(card.callers)))
  add(string.format('  callees  %s', M.refs(card.callees)))
  if type(card.usage) == 'table' then
    add(string.format('  cost     %d runs, %s', tonumber(card.usage.runs) or 0, M.cost(card.usage)))
  end
  if card.subscriptions ~= nil then
    add('  wakes    ' .. M.one_line(M.wakes(card)))
  end
  if type(card.instructions) == 'string' and card.instructions ~= '' then
    add('  instructions', 'Title')
    for _, line in ipairs(vim.split(card.instructions, '\n', { plain = true })) do
      add('    ' .. line)
    end
  end
  add('')
  local proposal = M.pending(card)
  if proposal then
    M.proposal(proposal, lines, highlights)
    add(
      string.format('  [%s] accept  [%s] reject  [%s] diff', keys.accept, keys.reject, keys.diff),
      'Comment'
    )
  else
    add('No pending proposal', 'Comment')
  end
  add('')
  if opts.run then
    add('Run ' .. opts.run, 'Title')
    add('')
  end
  local entries = type(card.conversation) == 'table' and card.conversation or {}
  if #entries > 0 then
    add('Conversation', 'Title')
    local me = card.qualified_name or card.id
    local first = math.max(1, #entries - (opts.conversation or 4) + 1)
    for i = first, #entries do
      local entry = entries[i]
      add('  ' .. M.entry_header(entry, me), 'Comment')
      local text = M.entry_text(entry, M.proposal_of(card, entry.proposal_id))
      for j, line in ipairs(text) do
        if j > 4 then
          add(string.format('    … (%d lines: :RemoraHistory)', #text))
          break
        end
        add('    ' .. M.one_line(line))
      end
    end
    add('')
  end
  add('Latest events', 'Title')
  local events = card.recent_events or {}
  if #events == 0 then
    add('  none yet', 'Comment')
  end
  for i, e in ipairs(events) do
    if i > opts.events then
      break
    end
    add('  ' .. M.event(e))
  end
  add('')
  add(
    string.format(
      '[%s] ask  [%s] cancel  [%s] refresh  [%s] close',
      keys.ask,
      keys.cancel,
      keys.refresh,
      keys.close
    ),
    'Comment'
  )
  add(
    string.format('[%s] history  [%s] runs', keys.history or 'h', keys.runs or 'p'),
    'Comment'
  )
  return lines, highlights
end

return M
