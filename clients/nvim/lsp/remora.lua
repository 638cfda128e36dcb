-- The Remora language server as a `vim.lsp.Config` (Neovim >= 0.11).
--
-- Found by `vim.lsp.enable('remora')` on the runtimepath, so the server works
-- with or without `require('remora').setup()`. Override any field with
-- `vim.lsp.config('remora', { ... })` (e.g. `cmd`, `init_options`).
--
-- The handlers and `on_attach` only forward to the plugin's modules, which are
-- loaded the first time the server talks to this editor.

---@type vim.lsp.Config
return {
  cmd = { 'remora-lsp' },
  filetypes = { 'python' },
  root_markers = { 'remora.yaml', 'pyproject.toml', '.git' },
  -- Neovim 0.11 does not answer `workspace/codeLens/refresh` by itself: the
  -- handler below does, so the server refreshes lenses when an agent's status
  -- or its pending proposals change.
  capabilities = {
    workspace = { codeLens = { refreshSupport = true } },
  },
  handlers = {
    ['remora/event'] = function(...)
      return require('remora.handlers').event(...)
    end,
    ['remora/askUser'] = function(...)
      return require('remora.handlers').ask_user(...)
    end,
    ['workspace/codeLens/refresh'] = function(...)
      return require('remora.handlers').codelens_refresh(...)
    end,
    ['window/showMessageRequest'] = function(...)
      return require('remora.handlers').show_message_request(...)
    end,
    -- A change set is applied whole or not at all, a new file never over an
    -- existing one (Neovim's own handler checks only the first document).
    ['workspace/applyEdit'] = function(...)
      return require('remora.apply_edit').handler(...)
    end,
  },
  on_exit = function(...)
    return require('remora.handlers').on_exit(...)
  end,
  on_attach = function(client, bufnr)
    require('remora').attach(client, bufnr)
  end,
}
