--- Remora for Neovim (>= 0.11): a client for the Remora language server, in
--- which every Python definition is an AI agent.
---
--- Requiring this module does nothing. `setup(opts)` checks the version,
--- merges the options, creates the user commands and autocmds and (unless
--- `enable = false`) calls `vim.lsp.enable('remora')`. Without `setup()`, the
--- server configured by `lsp/remora.lua` still works and the commands appear
--- when it first attaches.
local M = {}

local api = vim.api

local ready = false

--- Whether this Neovim is recent enough.
--- @return boolean
function M.supported()
  return vim.fn.has('nvim-0.11') == 1
end

--- Create the commands and the global autocmds once.
local function ensure()
  if ready then
    return
  end
  ready = true
  require('remora.commands').create()
  local group = api.nvim_create_augroup('remora', { clear = true })
  api.nvim_create_autocmd('LspProgress', {
    group = group,
    desc = 'Remora: keep run progress for the statusline and :RemoraCancel',
    callback = function(args)
      require('remora.progress').on_progress(args)
    end,
  })
  api.nvim_create_autocmd('LspAttach', {
    group = group,
    desc = 'Remora: buffer autocmds when the server attaches',
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == require('remora.server').NAME then
        M.attach(client, args.buf)
      end
    end,
  })
  api.nvim_create_autocmd('LspDetach', {
    group = group,
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == require('remora.server').NAME then
        pcall(api.nvim_del_augroup_by_name, 'remora_buffer_' .. args.buf)
        if vim.tbl_count(client.attached_buffers or {}) <= 1 then
          require('remora.progress').forget(client.id)
        end
      end
    end,
  })
end

--- Set the plugin up.
--- @param opts? remora.Options|table
function M.setup(opts)
  if not M.supported() then
    vim.notify('Remora needs Neovim 0.11 or newer', vim.log.levels.ERROR)
    return
  end
  local config = require('remora.config')
  local valid, problem = pcall(config.set, opts)
  if not valid then
    local reason = tostring(problem):gsub('^.-:%d+: ', '')
    vim.notify('Remora: invalid option, using the defaults: ' .. reason, vim.log.levels.ERROR)
    -- Keep the server's configuration: without it nothing works at all.
    config.set({ lsp = type(opts) == 'table' and type(opts.lsp) == 'table' and opts.lsp or nil })
  end
  local options = config.options
  if next(options.lsp) ~= nil then
    vim.lsp.config('remora', options.lsp)
  end
  ensure()
  if options.enable then
    vim.lsp.enable('remora')
  end
end

--- What to do when the server attaches to a buffer (idempotent; called from
--- `lsp/remora.lua`'s `on_attach` and from `LspAttach`).
--- @param _client vim.lsp.Client
--- @param bufnr integer
function M.attach(_client, bufnr)
  if not M.supported() then
    return
  end
  ensure()
  local name = 'remora_buffer_' .. bufnr
  local exists = pcall(api.nvim_get_autocmds, { group = name })
  if exists then
    return
  end
  local group = api.nvim_create_augroup(name, { clear = true })
  local lenses = require('remora.lenses')
  local panel = require('remora.panel')
  api.nvim_create_autocmd({ 'CursorMoved', 'BufEnter', 'TextChanged', 'InsertLeave' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      panel.follow_soon()
    end,
  })
  api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'BufWritePost', 'TextChanged' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      lenses.refresh(bufnr)
    end,
  })
  lenses.refresh(bufnr)
  panel.follow_soon()
end

--- A statusline component: Remora's work under way ('' when idle), e.g.
--- `vim.o.statusline = "%f %=%{v:lua.require'remora'.statusline()}"`.
--- @return string
function M.statusline()
  return require('remora.progress').statusline()
end

--- :RemoraAsk [message]
M.ask = function(message)
  require('remora.commands').ask(message)
end
--- :RemoraAccept
M.accept = function()
  require('remora.commands').accept()
end
--- :RemoraReject [feedback]
M.reject = function(feedback)
  require('remora.commands').reject(feedback)
end
--- :RemoraDiff
M.diff = function()
  require('remora.commands').diff()
end
--- :RemoraCancel
M.cancel = function()
  require('remora.commands').cancel()
end
--- :RemoraEvents [limit]
M.events = function(limit)
  require('remora.commands').events(limit)
end
--- :RemoraPanel
M.panel = function()
  require('remora.panel').toggle()
end

return M
