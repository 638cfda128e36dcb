--- `workspace/applyEdit` from Remora: all or nothing (DESIGN §15).
---
--- Neovim 0.11 applies a workspace edit change by change: it checks the
--- version of the first document only (a later one that changed since is
--- edited anyway), and its CreateFile truncates a file that exists although
--- the server asked never to overwrite. A change set is one edit across
--- several files, accepted whole or not at all, so before handing the edit to
--- Neovim's own handler this refuses all of it, saying why, when any document
--- it edits changed since the version it names or any file it creates exists.
local M = {}

local api = vim.api

--- Why `edit` cannot be applied as a whole now, or nil.
--- @param edit lsp.WorkspaceEdit
--- @return string?
function M.refusal(edit)
  local creating = {}
  for _, change in ipairs(type(edit) == 'table' and edit.documentChanges or {}) do
    if change.kind == 'create' then
      local options = change.options or {}
      local fname = vim.uri_to_fname(change.uri)
      if vim.uv.fs_stat(fname) and not (options.overwrite or options.ignoreIfExists) then
        return string.format('%s exists already: nothing applied (it is never overwritten)', vim.fn.fnamemodify(fname, ':.'))
      end
      creating[change.uri] = true
    elseif change.kind == nil and type(change.textDocument) == 'table' then
      local document = change.textDocument
      local bufnr = vim.fn.bufnr(vim.uri_to_fname(document.uri))
      local version = document.version
      local now = bufnr > 0 and api.nvim_buf_is_loaded(bufnr) and vim.lsp.util.buf_versions[bufnr] or nil
      if not creating[document.uri] and type(version) == 'number' and version > 0 and now and now > version then
        return string.format(
          '%s changed since (version %d, the edit is for %d): nothing applied',
          vim.fn.fnamemodify(vim.uri_to_fname(document.uri), ':.'),
          now,
          version
        )
      end
    end
  end
  return nil
end

--- The handler: refuse the whole edit, or let Neovim's handler apply it.
--- @param err lsp.ResponseError?
--- @param params lsp.ApplyWorkspaceEditParams
--- @param ctx lsp.HandlerContext
--- @return lsp.ApplyWorkspaceEditResult
function M.handler(err, params, ctx)
  local reason = M.refusal(params and params.edit)
  if reason then
    require('remora.server').notify(reason, vim.log.levels.WARN)
    return { applied = false, failureReason = reason }
  end
  return vim.lsp.handlers['workspace/applyEdit'](err, params, ctx)
end

return M
