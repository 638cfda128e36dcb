--- Read-only scratch buffers for a proposal's diff and a node's events.
local M = {}

local api = vim.api

--- name → buffer
local buffers = {}

--- Show `lines` in the scratch buffer `name` (reused while it exists), in a
--- split below the current window, and return the buffer.
--- @param name string e.g. remora://diff/pr_…
--- @param lines string[]
--- @param filetype string
--- @return integer bufnr
function M.show(name, lines, filetype)
  local buf = buffers[name]
  if not (buf and api.nvim_buf_is_valid(buf)) then
    buf = api.nvim_create_buf(false, true)
    vim.bo[buf].bufhidden = 'wipe'
    vim.bo[buf].swapfile = false
    api.nvim_buf_set_name(buf, name)
    buffers[name] = buf
    vim.keymap.set('n', 'q', '<cmd>close<cr>', { buffer = buf, nowait = true, silent = true })
  end
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  vim.bo[buf].filetype = filetype
  local win = vim.fn.bufwinid(buf)
  if win == -1 and api.nvim_get_current_buf() == require('remora.panel').buffer() then
    -- Not in the narrow panel: below the window used before it.
    local previous = vim.fn.win_getid(vim.fn.winnr('#'))
    if previous ~= 0 then
      api.nvim_set_current_win(previous)
    end
  end
  if win == -1 then
    vim.cmd(string.format('belowright %dsplit', math.min(math.max(#lines + 1, 5), 20)))
    win = api.nvim_get_current_win()
    api.nvim_win_set_buf(win, buf)
  else
    api.nvim_set_current_win(win)
  end
  return buf
end

return M
