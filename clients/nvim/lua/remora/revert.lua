--- :RemoraRevert [pr_…|gr_…]: a way back from accepted work, as a proposal.
---
--- Without an id, the proposal that wrote the line under the cursor
--- (`remora.attribution`, as :RemoraBlame shows it) is reverted; a `gr_…` id
--- reverts everything a graph run changed (one proposal per file). Nothing is
--- written here: the revert is a proposal, and you choose Accept (several
--- files are accepted together), Show diff or Later (it waits in
--- :RemoraProposals). Lines edited after the accept are never overwritten:
--- each refused part is named with its lines.
local M = {}

local api = vim.api

local function server()
  return require('remora.server')
end

local function warn(message)
  server().notify(message, vim.log.levels.WARN)
end

--- "path line N" / "path lines A–B (pr_…)" of a refused part.
--- @param part table
--- @return string
function M.refused_text(part)
  local lines = part.first_line == part.last_line and string.format('line %d', part.first_line)
    or string.format('lines %d-%d', part.first_line, part.last_line)
  return string.format('%s %s (%s)', part.path, lines, part.proposal_id)
end

--- Say what the revert proposed and refused; offer to accept it.
--- @param client vim.lsp.Client
--- @param result table a Reverted answer
--- @param what string what was reverted, for the messages
local function offer(client, result, what)
  local ids = type(result) == 'table' and result.proposal_ids or {}
  local refused = type(result) == 'table' and result.refused or {}
  if #refused > 0 then
    local parts = {}
    for _, part in ipairs(refused) do
      table.insert(parts, '  ' .. M.refused_text(part))
    end
    warn('left as they are (edited after the accept; revert them by hand):\n' .. table.concat(parts, '\n'))
  end
  if #ids == 0 then
    return warn(string.format('nothing of %s could be reverted', what))
  end
  server().notify(string.format('revert of %s proposed: %s', what, table.concat(ids, ', ')))
  local choices = { #ids == 1 and 'Accept' or 'Accept all', 'Show diff', 'Later' }
  local prompt = string.format('Revert %s (%d file%s): accept now?', what, #ids, #ids == 1 and '' or 's')
  vim.ui.select(choices, { prompt = prompt, kind = 'remora_confirm' }, function(choice)
    if choice == 'Show diff' then
      require('remora.actions').show_diff(client, ids[1], what)
    elseif choice == 'Accept' or choice == 'Accept all' then
      require('remora.proposals').accept_together(client, ids, 'the revert of ' .. what)
    else
      server().notify('the revert waits in :RemoraProposals')
    end
  end)
end

--- Revert the proposal that wrote the cursor's line.
--- @param client vim.lsp.Client
local function at_cursor(client)
  local bufnr = api.nvim_get_current_buf()
  local row = api.nvim_win_get_cursor(0)[1] - 1
  server().execute(client, 'remora.attribution', { uri = vim.uri_from_bufnr(bufnr) }, function(ranges)
    for _, range in ipairs(type(ranges) == 'table' and ranges or {}) do
      if row >= range.range.start.line and row < range.range['end'].line then
        return M.revert(client, range.proposal_id)
      end
    end
    warn('no accepted proposal wrote this line: :RemoraRevert pr_… or gr_…')
  end, nil, bufnr)
end

--- Propose reverting `target` (a proposal or a graph run).
--- @param client vim.lsp.Client
--- @param target string
function M.revert(client, target)
  if target:match('^gr_') then
    server().execute(client, 'remora.graph.revert', { graph_run_id = target }, function(result)
      offer(client, result, 'graph run ' .. target)
    end)
  else
    server().execute(client, 'remora.proposal.revert', { proposal_id = target }, function(result)
      offer(client, result, target)
    end)
  end
end

--- :RemoraRevert [pr_…|gr_…]
--- @param target string?
function M.command(target)
  if target and target ~= '' then
    return server().project_client(function(client)
      M.revert(client, target)
    end)
  end
  local client = server().client()
  if not client then
    return warn(':RemoraRevert without an id reverts the line under the cursor of a project file')
  end
  at_cursor(client)
end

return M
