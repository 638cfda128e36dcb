--- New files and change sets (DESIGN §15): how :RemoraProposals words them,
--- and a set's view — the set's summary and checks, then each member's file,
--- what it needs and its diff — with keys to accept all of it (`A`), accept
--- only the member under the cursor (`a`, or `3a` for member 3), reject it
--- with feedback (`R`), reject only the member under the cursor with
--- feedback (`r`, or `3r`: the rest stays pending; refused, naming them, when
--- other members need it) and close (`q`). Members are numbered from 1, as
--- shown.
local M = {}

local api = vim.api

local function server()
  return require('remora.server')
end

local function warn(message)
  server().notify(message, vim.log.levels.WARN)
end

local function plural(n, noun)
  return string.format('%d %s%s', n, noun, n == 1 and '' or 's')
end

--- "2 definitions in 2 files, 1 new file" (as the server words it).
--- @param members table[]
--- @return string
function M.counts(members)
  local definitions, files, created = 0, {}, 0
  for _, m in ipairs(members or {}) do
    if m.kind == 'new_file' then
      created = created + 1
    else
      definitions = definitions + 1
      files[m.path or '?'] = true
    end
  end
  local said = {}
  if definitions > 0 then
    table.insert(said, string.format('%s in %s', plural(definitions, 'definition'), plural(vim.tbl_count(files), 'file')))
  end
  if created > 0 then
    table.insert(said, plural(created, 'new file'))
  end
  return table.concat(said, ', ')
end

--- The set's summary: the agent's first line.
local function summary(p)
  local text = p.summary ~= vim.NIL and p.summary or p.reasoning
  text = type(text) == 'string' and vim.trim(text) or ''
  return (text:match('^[^\n]*'))
end

--- "Change set: add currency (2 definitions in 2 files, 1 new file)".
--- @param p table a listed proposal (or a diff answer) of kind change_set
--- @return string
function M.title(p)
  local said, counts = summary(p), M.counts(p.members)
  return 'Change set' .. (said ~= '' and (': ' .. said) or '') .. (counts ~= '' and (' (' .. counts .. ')') or '')
end

--- Lines added and removed by a unified diff.
local function sizes(diff)
  local added, removed = 0, 0
  for _, line in ipairs(vim.split(type(diff) == 'string' and diff or '', '\n', { plain = true })) do
    if line:match('^%+') and not line:match('^%+%+%+') then
      added = added + 1
    elseif line:match('^%-') and not line:match('^%-%-%-') then
      removed = removed + 1
    end
  end
  return added, removed
end

--- "create tests/test_x.py (+24)".
--- @param p table a new_file proposal
--- @return string
function M.new_file_title(p)
  local added = sizes(p.diff)
  return string.format('create %s (+%d)', p.file_path or '?', added)
end

--- A member's file and the definition it rewrites or adds.
--- @param m table
--- @return string
function M.member_label(m)
  local path = m.path or '?'
  if m.kind == 'new_file' then
    return path
  end
  local name = type(m.new_source) == 'string' and m.new_source:match('^%s*async%s+def%s+([%w_]+)')
    or type(m.new_source) == 'string' and (m.new_source:match('^%s*def%s+([%w_]+)') or m.new_source:match('^%s*class%s+([%w_]+)'))
  return name and (path .. ' · ' .. name) or path
end

--- The members member `i` (1-based) needs, 1-based.
--- @param p table
--- @param i integer
--- @return integer[]
function M.needs(p, i)
  local found = {}
  for _, pair in ipairs(type(p.depends_on) == 'table' and p.depends_on or {}) do
    if type(pair) == 'table' and pair[1] == i - 1 and type(pair[2]) == 'number' then
      table.insert(found, pair[2] + 1)
    end
  end
  table.sort(found)
  return found
end

--- Why accepting only `chosen` (1-based) would leave code inconsistent, or nil.
--- @param p table
--- @param chosen integer[]
--- @return string?
function M.missing(p, chosen)
  local kept, said = {}, {}
  for _, i in ipairs(chosen) do
    kept[i] = true
  end
  for _, i in ipairs(chosen) do
    for _, j in ipairs(M.needs(p, i)) do
      if not kept[j] then
        table.insert(said, string.format('%d. %s needs %d. %s', i, M.member_label(p.members[i] or {}), j, M.member_label(p.members[j] or {})))
      end
    end
  end
  return #said > 0 and table.concat(said, '; ') or nil
end

--- A member's heading: "## 1. pkg/service.py · order (+2 −2, needs 2, 3)".
local function heading(p, i)
  local m = p.members[i]
  local added, removed = sizes(m.diff)
  local size = m.kind == 'new_file' and string.format('new file, +%d', added) or string.format('+%d −%d', added, removed)
  local needed = M.needs(p, i)
  if #needed > 0 then
    size = size .. ', needs ' .. table.concat(vim.tbl_map(tostring, needed), ', ')
  end
  return string.format('## %d. %s (%s)', i, M.member_label(m), size)
end

--- The lines of a set's view, and the first line of each member's section.
--- @param p table the diff answer (kind change_set, members, depends_on, …)
--- @param proposal_id string
--- @return string[] lines, integer[] starts
function M.lines(p, proposal_id)
  local lines = {
    string.format('# %s · %s (%s)', M.title(p), proposal_id, p.status or '?'),
  }
  if p.status == 'stale' then
    table.insert(lines, '# stale: a file changed since the set was made; nothing of it was applied (ask the agent again)')
  end
  local checks = require('remora.format').checks(p.checks)
  if checks ~= '' then
    table.insert(lines, '# checks: ' .. checks)
  end
  if type(p.depends_on) == 'table' and #p.depends_on > 0 then
    table.insert(lines, '# members that need others are accepted together with them')
  end
  table.insert(lines, '# A accept all · a accept the member under the cursor ([N]a: member N) · R reject with feedback · r reject only the member under the cursor ([N]r) · q close')
  local starts = {}
  for i, m in ipairs(p.members or {}) do
    table.insert(lines, '')
    starts[i] = #lines + 1
    table.insert(lines, heading(p, i))
    vim.list_extend(lines, vim.split(m.diff or '', '\n', { plain = true, trimempty = true }))
  end
  return lines, starts
end

--- The member (1-based) whose section holds `row`.
local function member_at(starts, row)
  local found
  for i, start in ipairs(starts) do
    if row >= start then
      found = i
    end
  end
  return found
end

--- Accept `members` (1-based; nil: all) of set `proposal_id`; `done(applied)` after.
--- @param client vim.lsp.Client
--- @param p table
--- @param proposal_id string
--- @param members integer[]?
--- @param done fun(applied: boolean)?
function M.accept(client, p, proposal_id, members, done)
  local argument = { proposal_id = proposal_id }
  if members then
    local missing = M.missing(p, members)
    if missing then
      return warn(string.format('not accepted: %s (accept them together, or all: A)', missing))
    end
    argument.members = vim.tbl_map(function(i)
      return i - 1
    end, members)
  end
  server().execute(client, 'remora.proposal.accept', argument, function(result)
    if result and result.applied then
      if members then
        local kept = vim.tbl_map(function(i)
          return p.members[i]
        end, members)
        server().notify(string.format('accepted %s of %s; the other members are dropped', M.counts(kept), proposal_id))
      else
        server().notify(string.format('applied %s (%s)', M.title(p), proposal_id))
      end
    else
      warn(string.format('nothing applied: %s', result and result.reason or 'unknown reason'))
    end
    if done then
      done(result and result.applied or false)
    end
  end)
end

--- Reject set `proposal_id` with feedback (asked when not given).
--- @param client vim.lsp.Client
--- @param proposal_id string
--- @param feedback string?
--- @param done fun()?
function M.reject(client, proposal_id, feedback, done)
  local function send(text)
    if type(text) ~= 'string' or text == '' then
      return -- the person cancelled the prompt
    end
    server().execute(client, 'remora.proposal.reject', { proposal_id = proposal_id, feedback = text }, function()
      server().notify(string.format('rejected %s; the agent that made it tries again', proposal_id))
      if done then
        done()
      end
    end)
  end
  if feedback and feedback ~= '' then
    return send(feedback)
  end
  vim.ui.input({ prompt = 'What should the set do differently? ' }, send)
end

--- Reject only member `n` (1-based) of set `proposal_id` with feedback (asked
--- when not given); the rest stays pending. `done(rejected)` after.
--- @param client vim.lsp.Client
--- @param p table
--- @param proposal_id string
--- @param n integer
--- @param feedback string?
--- @param done fun(rejected: boolean)?
function M.reject_member(client, p, proposal_id, n, feedback, done)
  local label = string.format('%d. %s', n, M.member_label(p.members[n] or {}))
  local function send(text)
    if type(text) ~= 'string' or text == '' then
      return -- the person cancelled the prompt
    end
    local argument = { proposal_id = proposal_id, members = { n - 1 }, feedback = text }
    server().execute(client, 'remora.proposal.reject', argument, function()
      server().notify(string.format('rejected %s of %s; the rest of the set stays pending', label, proposal_id))
      if done then
        done(true)
      end
    end, function(message)
      warn(string.format('not rejected: %s', message))
      if done then
        done(false)
      end
    end)
  end
  if feedback and feedback ~= '' then
    return send(feedback)
  end
  vim.ui.input({ prompt = string.format('Why reject %s? ', label) }, send)
end

--- Show set `proposal_id` (its diff answer `p`) in the scratch buffer
--- remora://set/<id>, with its keys.
--- @param client vim.lsp.Client
--- @param proposal_id string
--- @param p table
--- @return integer bufnr
function M.show(client, proposal_id, p)
  local lines, starts = M.lines(p, proposal_id)
  local buf = require('remora.scratch').show('remora://set/' .. proposal_id, lines, 'diff')
  local function refresh()
    if require('remora.proposals').is_current() then
      require('remora.proposals').refresh(true)
    end
  end
  --- Applied: the view closes; not: it shows the set as it is now (stale, say).
  local function closed_after(applied)
    refresh()
    if applied == false then
      return server().execute(client, 'remora.proposal.diff', { proposal_id = proposal_id }, function(now)
        if type(now) == 'table' and api.nvim_buf_is_valid(buf) then
          M.show(client, proposal_id, now)
        end
      end)
    end
    local win = vim.fn.bufwinid(buf)
    if win ~= -1 then
      api.nvim_win_close(win, true)
    end
  end
  local map = function(lhs, fn, desc)
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, silent = true, desc = desc })
  end
  map('A', function()
    M.accept(client, p, proposal_id, nil, closed_after)
  end, 'Remora: accept the whole change set')
  map('a', function()
    local n = vim.v.count > 0 and vim.v.count or member_at(starts, api.nvim_win_get_cursor(0)[1])
    if not n or not p.members[n] then
      return warn('no member there: move to a member, or give its number (2a)')
    end
    M.accept(client, p, proposal_id, { n }, closed_after)
  end, 'Remora: accept only this member of the change set')
  map('R', function()
    M.reject(client, proposal_id, nil, closed_after)
  end, 'Remora: reject the change set, with feedback')
  map('r', function()
    local n = vim.v.count > 0 and vim.v.count or member_at(starts, api.nvim_win_get_cursor(0)[1])
    if not n or not p.members[n] then
      return warn('no member there: move to a member, or give its number (2r)')
    end
    M.reject_member(client, p, proposal_id, n, nil, function()
      refresh()
      -- The set as it is now: without that member (or as it was, refused).
      server().execute(client, 'remora.proposal.diff', { proposal_id = proposal_id }, function(now)
        if type(now) == 'table' and api.nvim_buf_is_valid(buf) then
          M.show(client, proposal_id, now)
        end
      end)
    end)
  end, 'Remora: reject only this member of the change set, with feedback')
  return buf
end

return M
