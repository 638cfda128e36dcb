--- Options of the Remora plugin: defaults, validation and the current values.
local M = {}

--- @class remora.PanelKeys
--- @field accept string accept the pending proposal
--- @field reject string reject it (asks for feedback)
--- @field diff string open its diff
--- @field ask string ask the node's agent something
--- @field cancel string cancel the node's run
--- @field refresh string fetch the node card again
--- @field close string close the panel
--- @field history string open the node's conversation (:RemoraHistory)
--- @field runs string open the list of runs (:RemoraRuns)

--- @class remora.Options
--- @field enable boolean call `vim.lsp.enable('remora')` in setup()
--- @field lsp vim.lsp.Config|table fields merged into `vim.lsp.config('remora', ...)`
--- @field codelens boolean keep the "remora · <status>" lenses up to date
--- @field notify { proposals: boolean, failures: boolean } messages for new proposals and failed runs
--- @field panel { position: 'right'|'left', width: integer, follow: boolean, follow_delay_ms: integer, events: integer, conversation: integer, keys: remora.PanelKeys }
--- @field events_limit integer how many events :RemoraEvents lists
--- @field history_limit integer how many conversation entries :RemoraHistory shows
--- @field runs_limit integer how many runs :RemoraRuns lists
--- @field card 'float'|'panel' where a lens click shows the node card (the panel when it is open)
M.defaults = {
  enable = true,
  lsp = {},
  codelens = true,
  notify = { proposals = true, failures = true },
  panel = {
    position = 'right',
    width = 64,
    follow = true,
    follow_delay_ms = 120,
    events = 8,
    conversation = 4,
    keys = {
      accept = 'a',
      reject = 'r',
      diff = 'd',
      ask = 'i',
      cancel = 'c',
      refresh = 'R',
      close = 'q',
      history = 'h',
      runs = 'p',
    },
  },
  events_limit = 50,
  history_limit = 200,
  runs_limit = 100,
  card = 'float',
}

--- @type remora.Options
M.options = vim.deepcopy(M.defaults)

--- Merge `opts` over the defaults and keep the result in `M.options`.
--- Raises a readable error for options of the wrong type.
--- @param opts? table
--- @return remora.Options
function M.set(opts)
  opts = opts or {}
  vim.validate('opts', opts, 'table')
  vim.validate('enable', opts.enable, 'boolean', true)
  vim.validate('lsp', opts.lsp, 'table', true)
  vim.validate('codelens', opts.codelens, 'boolean', true)
  vim.validate('notify', opts.notify, 'table', true)
  vim.validate('panel', opts.panel, 'table', true)
  vim.validate('events_limit', opts.events_limit, 'number', true)
  vim.validate('history_limit', opts.history_limit, 'number', true)
  vim.validate('runs_limit', opts.runs_limit, 'number', true)
  vim.validate('card', opts.card, function(v)
    return v == nil or v == 'float' or v == 'panel'
  end, "'float' or 'panel'")
  if opts.panel then
    vim.validate('panel.position', opts.panel.position, function(v)
      return v == nil or v == 'right' or v == 'left'
    end, "'right' or 'left'")
    vim.validate('panel.width', opts.panel.width, 'number', true)
    vim.validate('panel.keys', opts.panel.keys, 'table', true)
  end
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  return M.options
end

return M
