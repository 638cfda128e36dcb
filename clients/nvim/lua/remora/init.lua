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

local told_missing = false

--- Say once per session when the server cannot start because its command is
--- not executable (Neovim only logs that, and nothing attaches).
--- @param bufnr integer
local function check_command(bufnr)
  if told_missing or not vim.lsp.is_enabled('remora') then
    return
  end
  local cfg = vim.lsp.config.remora
  local cmd = cfg and cfg.cmd
  if type(cmd) ~= 'table' or type(cmd[1]) ~= 'string' or vim.fn.executable(cmd[1]) == 1 then
    return
  end
  if cfg.filetypes and not vim.list_contains(cfg.filetypes, vim.bo[bufnr].filetype) then
    return
  end
  told_missing = true
  -- Scheduled: an error message inside the FileType autocmd would abort it.
  vim.schedule(function()
    require('remora.server').notify(
      string.format(
        "the server `%s` is not executable, so Remora is off: install it (pip install remora-lsp) or set lsp.cmd; see :checkhealth remora and :help remora-install",
        cmd[1]
      ),
      vim.log.levels.ERROR
    )
  end)
end

--- Define the highlight groups (linked by default; a colorscheme may set them).
local function highlights()
  local links = {
    RemoraHistoryHeader = 'Comment',
    RemoraRunActive = 'DiagnosticInfo',
    RemoraRunFailed = 'DiagnosticError',
    RemoraBlame = 'Comment',
    RemoraBlameSign = 'DiagnosticHint',
  }
  for group, link in pairs(links) do
    api.nvim_set_hl(0, group, { link = link, default = true })
  end
end

--- Create the commands and the global autocmds once.
local function ensure()
  if ready then
    return
  end
  ready = true
  require('remora.commands').create()
  require('remora.actions').register()
  highlights()
  local group = api.nvim_create_augroup('remora', { clear = true })
  api.nvim_create_autocmd('ColorScheme', { group = group, callback = highlights })
  api.nvim_create_autocmd('FileType', {
    group = group,
    desc = 'Remora: say once when the server cannot start',
    callback = function(args)
      check_command(args.buf)
    end,
  })
  api.nvim_create_autocmd('LspProgress', {
    group = group,
    desc = 'Remora: keep run progress for the statusline and :RemoraCancel',
    callback = function(args)
      require('remora.progress').on_progress(args)
      require('remora.panel').redraw()
    end,
  })
  api.nvim_create_autocmd('LspAttach', {
    group = group,
    desc = 'Remora: buffer autocmds when the server attaches',
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == require('remora.server').NAME then
        M.attach(client, args.buf)
        require('remora.tokens').attached(client)
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
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) and vim.bo[buf].filetype ~= '' then
      check_command(buf) -- buffers opened before setup()
    end
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

--- A statusline component: Remora's work under way and today's
--- model tokens ('' when idle before any model answer), e.g.
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
--- :RemoraHistory
M.history = function()
  require('remora.commands').history()
end
--- :RemoraRuns
M.runs = function()
  require('remora.runs').open()
end
--- :RemoraPanel
M.panel = function()
  require('remora.panel').toggle()
end
--- :RemoraProposals
M.proposals = function()
  require('remora.proposals').open()
end
--- :RemoraGraph run|status|cancel [arg]
M.graph = function(sub, arg)
  require('remora.graph').command(sub, arg)
end
--- :RemoraCheckpoint create|list|restore [arg]
M.checkpoint = function(sub, arg)
  require('remora.checkpoints').command(sub, arg)
end
--- :RemoraBlame [toggle|on|off|line]
M.blame = function(sub)
  require('remora.blame').command(sub or '')
end
--- The model tokens agents used today (stored): { input, output, cached, total }.
M.tokens = function()
  return require('remora.tokens').totals()
end

return M
