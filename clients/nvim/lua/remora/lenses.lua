--- Keeping the "remora · <status> · N pending proposals" code lenses current.
---
--- Neovim 0.11 shows lenses only when asked for: they are asked for when a
--- buffer attaches, when indexing ends, after edits and saves, and whenever the server sends `workspace/codeLens/refresh` (it does
--- when an agent starts or ends a turn and when a proposal is made or decided).
local M = {}

local DELAY_MS = 80

--- bufnr → generation of the latest refresh asked for (older timers do nothing)
local generations = {}
--- bufnr → number of the latest codeLens request (older answers are dropped)
local requests = {}

--- Ask for Remora's lenses of `bufnr` now. Unlike `vim.lsp.codelens.refresh`,
--- which skips a buffer while a request for it is in flight (and so can miss
--- the last change), every call sends a request and only the newest answer is
--- shown, through Neovim's own handler.
--- @param bufnr integer
local function request(bufnr)
  local client = require('remora.server').client(bufnr)
  if not client or not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  local number = (requests[bufnr] or 0) + 1
  requests[bufnr] = number
  local params = { textDocument = vim.lsp.util.make_text_document_params(bufnr) }
  client:request('textDocument/codeLens', params, function(err, result, ctx)
    if requests[bufnr] ~= number or not vim.api.nvim_buf_is_loaded(bufnr) then
      return
    end
    vim.lsp.codelens.on_codelens(err, result, ctx)
  end, bufnr)
end

--- Ask for the lenses of `bufnr` soon (several calls in a row ask once).
--- @param bufnr integer
function M.refresh(bufnr)
  if not require('remora.config').options.codelens then
    return
  end
  local generation = (generations[bufnr] or 0) + 1
  generations[bufnr] = generation
  vim.defer_fn(function()
    if generations[bufnr] ~= generation then
      return
    end
    generations[bufnr] = nil
    request(bufnr)
  end, DELAY_MS)
end

--- Refresh the lenses of every buffer `client` is attached to.
--- @param client vim.lsp.Client
function M.refresh_client(client)
  for bufnr in pairs(client.attached_buffers or {}) do
    M.refresh(bufnr)
  end
end

return M
