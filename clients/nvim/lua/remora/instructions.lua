--- A person's standing instructions for a node's agent
--- (`remora.node.instructions.set`): kept by the server in the agent's memory,
--- put in every later prompt of its agent, shown on its card (the panel).
---
--- :RemoraInstructions {text} gives the node under the cursor these
--- instructions. Without text it opens `remora://instructions/<id>`, an
--- editable buffer holding the current ones: `:w` sends what it holds (empty:
--- no instructions), `q` closes without sending.
local M = {}

local api = vim.api

local function server()
  return require('remora.server')
end

--- Send `text` as `card`'s instructions, then tell the person.
--- @param card table
--- @param client vim.lsp.Client
--- @param text string
--- @param after? fun(result: table)
function M.set(card, client, text, after)
  local argument = { node_id = card.id, text = text }
  server().execute(client, 'remora.node.instructions.set', argument, function(result)
    local name = card.qualified_name or card.id
    if result and result.instructions then
      server().notify(string.format("%s's agent follows your instructions from its next run", name))
    else
      server().notify(string.format("%s's agent has no standing instructions", name))
    end
    require('remora.panel').refresh()
    if after then
      after(result)
    end
  end)
end

--- The editable buffer of `card`'s instructions; `:w` sends them.
local function edit(card, client)
  local name = 'remora://instructions/' .. card.id
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    buf = api.nvim_create_buf(false, false)
    api.nvim_buf_set_name(buf, name)
    vim.bo[buf].buftype = 'acwrite'
    vim.bo[buf].bufhidden = 'wipe'
    vim.bo[buf].swapfile = false
    vim.bo[buf].filetype = 'markdown'
    vim.keymap.set('n', 'q', '<cmd>close<cr>', { buffer = buf, nowait = true, silent = true })
    api.nvim_create_autocmd('BufWriteCmd', {
      buffer = buf,
      callback = function()
        local text = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
        M.set(card, client, text, function()
          if api.nvim_buf_is_valid(buf) then
            vim.bo[buf].modified = false
          end
        end)
      end,
    })
  end
  local current = type(card.instructions) == 'string' and card.instructions or ''
  api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(current, '\n', { plain = true }))
  vim.bo[buf].modified = false
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd('belowright 6split')
    api.nvim_win_set_buf(api.nvim_get_current_win(), buf)
  else
    api.nvim_set_current_win(win)
  end
  server().notify(string.format('instructions for %s: edit, then :w to send them (q: close)', card.qualified_name or card.id))
  return buf
end

--- :RemoraInstructions [text]
--- @param text string '' opens the buffer
function M.command(text)
  require('remora.commands').with_node(function(card, client)
    if vim.trim(text) ~= '' then
      M.set(card, client, text)
    else
      edit(card, client)
    end
  end)
end

return M
