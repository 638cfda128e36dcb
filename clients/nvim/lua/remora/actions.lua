--- Server commands whose result a person should see, handled in Neovim
--- (`vim.lsp.commands`): without these, Neovim runs a lens's or a code
--- action's command on the server and drops the answer.
---
--- - `remora.node.get` (clicking a lens, `vim.lsp.codelens.run()`): the node
---   card, in the panel when it is open (or `card = 'panel'`), else in a float;
--- - `remora.proposal.diff` (the "Show diff" code action): the diff in a
---   scratch buffer, as `:RemoraDiff` shows it (a change set's: its view,
---   `sets.lua`, each member's diff with keys to accept or reject it).
local M = {}

local function server()
  return require('remora.server')
end

--- The first argument of a command (Remora commands take one object).
local function argument(command)
  local args = command and command.arguments
  return type(args) == 'table' and type(args[1]) == 'table' and args[1] or {}
end

--- The card as float lines: the panel's lines without its key hints.
--- @param card table
--- @return string[]
function M.card_lines(card)
  local options = require('remora.config').options.panel
  local lines = {}
  for _, line in ipairs((require('remora.format').card(card, options))) do
    -- The panel's key hints do not apply in a float.
    if not line:match('^%s*%[%S+%] ') then
      table.insert(lines, line)
    end
  end
  while lines[#lines] == '' do
    table.remove(lines)
  end
  local answer = type(card.last_answer) == 'table' and card.last_answer or nil
  if answer then
    table.insert(lines, '')
    table.insert(lines, 'Last answer')
    for _, line in ipairs(vim.split(answer.text or '', '\n', { plain = true })) do
      table.insert(lines, '  ' .. line)
    end
    if answer.truncated then
      table.insert(lines, string.format('  … %d lines in all: :RemoraHistory', answer.lines or 0))
    end
  end
  return lines
end

--- Show a node card in a float next to the cursor.
--- @param card table
--- @return integer bufnr, integer winnr
function M.float(card)
  local lines = M.card_lines(card)
  return vim.lsp.util.open_floating_preview(lines, 'remora', {
    border = 'rounded',
    focus_id = 'remora_card',
    max_width = 100,
    max_height = 40,
    title = ' Remora ',
  })
end

--- Show node `node_id`'s card: the panel when it is open, else a float.
--- @param client vim.lsp.Client
--- @param node_id string
function M.show_node(client, node_id)
  server().execute(client, 'remora.node.get', { node_id = node_id }, function(card)
    if not card then
      return
    end
    require('remora.handlers').learn(card)
    local panel = require('remora.panel')
    if require('remora.config').options.card == 'panel' and not panel.is_open() then
      panel.open()
    end
    if panel.is_open() then
      panel.show_card(card, client.id)
    else
      M.float(card)
    end
  end)
end

--- Handler of `remora.node.get` (a lens click).
--- @param command lsp.Command
--- @param ctx { client_id: integer, bufnr: integer }
function M.node_get(command, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local node_id = argument(command).node_id
  if client and type(node_id) == 'string' then
    M.show_node(client, node_id)
  end
end

--- Show proposal `proposal_id`'s diff in a scratch buffer.
--- @param client vim.lsp.Client
--- @param proposal_id string
--- @param owner? string the node's name, for the title
function M.show_diff(client, proposal_id, owner)
  server().execute(client, 'remora.proposal.diff', { proposal_id = proposal_id }, function(result)
    result = result or {}
    if result.kind == 'change_set' and type(result.members) == 'table' then
      return require('remora.sets').show(client, proposal_id, result)
    end
    local lines = {
      string.format('# %s: proposal %s (%s)', owner or 'Remora', proposal_id, result.status or '?'),
    }
    vim.list_extend(lines, vim.split(result.diff or '', '\n', { plain = true, trimempty = true }))
    require('remora.scratch').show('remora://diff/' .. proposal_id, lines, 'diff')
  end)
end

--- Handler of `remora.proposal.diff` (the "Show diff" code action).
--- @param command lsp.Command
--- @param ctx { client_id: integer, bufnr: integer }
function M.proposal_diff(command, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local proposal_id = argument(command).proposal_id
  if client and type(proposal_id) == 'string' then
    M.show_diff(client, proposal_id)
  end
end

--- Register the handlers (idempotent; never replaces a user's own).
function M.register()
  local commands = vim.lsp.commands
  commands['remora.node.get'] = commands['remora.node.get'] or M.node_get
  commands['remora.proposal.diff'] = commands['remora.proposal.diff'] or M.proposal_diff
end

return M
