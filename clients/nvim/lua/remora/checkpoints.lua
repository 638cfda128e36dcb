--- :RemoraCheckpoint create [label] | list | restore [cp_…]: snapshots of
--- every agent's state (chat history, memory, overlays, pending proposals).
---
--- Restoring asks first, naming what changes: the agents' state goes back to
--- the checkpoint and the proposals made since are withdrawn; your files are
--- never written (choosing "Restore and propose files back" also proposes each
--- changed file back as it was: proposals you review and accept). After it, the files that changed since the checkpoint are
--- listed (`files_differing`), so you know what the agents will find.
--- `list` shows `remora://checkpoints` (`r` restores the one under the
--- cursor, `R` refreshes, `q` closes).
local M = {}

local api = vim.api

local NAME = 'remora://checkpoints'

local state = { buf = nil, rows = {}, client_id = nil }

local function server()
  return require('remora.server')
end

local function warn(message)
  server().notify(message, vim.log.levels.WARN)
end

--- "cp_… 2026-11-27 08:10 label (git abc1234)" of a checkpoint.
--- @param cp table a CheckpointRow
--- @return string
function M.describe(cp)
  local label = cp.label ~= vim.NIL and cp.label or ''
  local head = cp.git_head ~= vim.NIL and type(cp.git_head) == 'string' and (' git ' .. cp.git_head:sub(1, 10)) or ''
  return vim.trim(string.format('%s  %s  %s%s', cp.checkpoint_id, require('remora.format').when(cp.created_at), label, head))
end

--- :RemoraCheckpoint create [label]
--- @param label string?
function M.create(label)
  server().project_client(function(client)
    local argument = { label = label ~= '' and label or nil }
    server().execute(client, 'remora.checkpoint.create', argument, function(result)
      local id = result and result.checkpoint_id or '?'
      server().notify(string.format('checkpoint %s taken%s', id, label and label ~= '' and (': ' .. label) or ''))
      if state.buf and api.nvim_buf_is_valid(state.buf) then
        M.refresh()
      end
    end)
  end)
end

--- The question asked before restoring `cp`.
--- @param cp table
--- @return string
function M.question(cp)
  return string.format(
    "Restore checkpoint %s? Every agent's chat history, memory, overlays and pending proposals go back to then; proposals made since are withdrawn. Your files are not changed.",
    M.describe(cp)
  )
end

--- Restore `cp` once the person confirms.
--- @param client vim.lsp.Client
--- @param cp table a CheckpointRow
local function confirm_restore(client, cp)
  local choices = { 'Restore', 'Restore and propose files back', 'Cancel' }
  vim.ui.select(choices, { prompt = M.question(cp), kind = 'remora_confirm' }, function(choice)
    if choice ~= choices[1] and choice ~= choices[2] then
      return server().notify('checkpoint not restored')
    end
    local argument = { checkpoint_id = cp.checkpoint_id, files = choice == choices[2] or nil }
    server().execute(client, 'remora.checkpoint.restore', argument, function(result)
      local files = type(result) == 'table' and type(result.files_differing) == 'table' and result.files_differing or {}
      local text = string.format("restored %s: the agents' state is back", cp.checkpoint_id)
      if #files == 0 then
        text = text .. '; no file changed since'
      else
        text = text .. string.format('; %d file%s changed since (not touched):\n  %s', #files, #files == 1 and '' or 's', table.concat(files, '\n  '))
      end
      local proposed = type(result) == 'table' and type(result.proposal_ids) == 'table' and result.proposal_ids
      if proposed then
        text = text .. (#proposed == 0 and '\nno file to propose back'
          or string.format('\nproposed back (review in :RemoraProposals): %s', table.concat(proposed, ', ')))
        for _, skipped in ipairs(result.not_restored or {}) do
          text = text .. string.format('\n  not restored %s: %s', skipped.path, skipped.reason)
        end
      end
      server().notify(text)
    end)
  end)
end

--- `callback(client, checkpoints)` with the project's checkpoints.
local function with_list(callback)
  server().project_client(function(client)
    server().execute(client, 'remora.checkpoint.list', {}, function(list)
      callback(client, list or {})
    end)
  end)
end

--- :RemoraCheckpoint restore [checkpoint_id] (without one: pick one).
--- @param checkpoint_id string?
function M.restore(checkpoint_id)
  with_list(function(client, list)
    if #list == 0 then
      return warn('no checkpoint yet: :RemoraCheckpoint create')
    end
    if checkpoint_id and checkpoint_id ~= '' then
      for _, cp in ipairs(list) do
        if cp.checkpoint_id == checkpoint_id then
          return confirm_restore(client, cp)
        end
      end
      return warn('no checkpoint ' .. checkpoint_id)
    end
    vim.ui.select(list, { prompt = 'Restore which checkpoint?', format_item = M.describe }, function(cp)
      if cp then
        confirm_restore(client, cp)
      end
    end)
  end)
end

--- The list's lines.
--- @param list table[]
--- @return string[] lines, table<integer, table> rows
function M.lines(list)
  local lines = { '# Remora checkpoints, newest first  ([r] restore  [R] refresh  [q] close)' }
  local rows = {}
  for _, cp in ipairs(list) do
    table.insert(lines, M.describe(cp))
    rows[#lines] = cp
  end
  if #list == 0 then
    table.insert(lines, 'None yet: :RemoraCheckpoint create [label] (one is taken before every graph run).')
  end
  return lines, rows
end

--- Fetch the checkpoints again into the list buffer.
function M.refresh()
  local client = state.client_id and vim.lsp.get_client_by_id(state.client_id)
  if not client then
    return
  end
  server().execute(client, 'remora.checkpoint.list', {}, function(list)
    local buf = state.buf
    if not buf or not api.nvim_buf_is_valid(buf) then
      return
    end
    local lines, rows = M.lines(list or {})
    state.rows = rows
    vim.bo[buf].modifiable = true
    api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    vim.bo[buf].modifiable = false
    vim.bo[buf].modified = false
  end)
end

--- :RemoraCheckpoint list
function M.list()
  server().project_client(function(client)
    state.client_id = client.id
    local buf = require('remora.scratch').show(NAME, { '# Remora checkpoints: loading…' }, 'remora')
    if state.buf ~= buf then
      state.buf = buf
      vim.keymap.set('n', 'r', function()
        local cp = state.rows[api.nvim_win_get_cursor(0)[1]]
        local owner = vim.lsp.get_client_by_id(state.client_id)
        if not cp or not owner then
          return warn('no checkpoint on this line')
        end
        confirm_restore(owner, cp)
      end, { buffer = buf, nowait = true, silent = true, desc = 'Remora: restore this checkpoint' })
      vim.keymap.set('n', 'R', M.refresh, { buffer = buf, nowait = true, silent = true, desc = 'Remora: refresh' })
      api.nvim_create_autocmd('BufWipeout', {
        buffer = buf,
        once = true,
        callback = function()
          state.buf, state.rows = nil, {}
        end,
      })
    end
    M.refresh()
  end)
end

--- :RemoraCheckpoint {sub} [arg]
--- @param sub string
--- @param arg string?
function M.command(sub, arg)
  if sub == 'create' then
    M.create(arg)
  elseif sub == 'list' then
    M.list()
  elseif sub == 'restore' then
    M.restore(arg)
  else
    warn('RemoraCheckpoint takes create [label], list or restore [cp_…]')
  end
end

return M
