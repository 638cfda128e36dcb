-- The scenarios the Python tests run, one per Neovim session. Each acts as a
-- person would (commands, cursor moves, prompts answered through a stubbed
-- vim.ui.input) and records what is on screen with `t.observe`; the Python
-- side asserts on it, on the events received and on what reached the model.
local S = {}

local api = vim.api

local DOCSTRING = [["""Order two b's."""]]
local RUN_MS = 60000

--- Answer vim.ui.input prompts with `answer(prompt)`, a little later (as a
--- person would), and record the prompts.
local function stub_input(t, answer)
  t.result.observed.prompts = {}
  vim.ui.input = function(opts, on_confirm)
    table.insert(t.result.observed.prompts, opts.prompt)
    vim.defer_fn(function()
      on_confirm(answer(opts.prompt))
    end, 20)
  end
end

--- Wait until the lens on `row` is settled (one resolved lens; Neovim shows
--- "Unresolved lens ..." next to it for a moment) and contains `needle`.
local function lens(t, row, needle, buf)
  return t.wait('the lens on line ' .. row .. ' to show ' .. needle, function()
    local text = t.virtual_text(row, buf)
    return text:match('^remora · %S+ · %d+ pending proposals?$')
      and text:find(needle, 1, true)
      and text
  end, RUN_MS)
end

--- The client attaches, the commands exist, the lenses show each agent's status.
function S.attach(t)
  local buf = t.open('pkg/service.py')
  t.observe('lens_helper', lens(t, t.cursor_to('def helper'), 'remora ·', buf))
  t.observe('lens_order', lens(t, t.cursor_to('def order'), 'remora ·', buf))
  local client = vim.lsp.get_clients({ name = 'remora', bufnr = buf })[1]
  t.observe('root_dir', client.root_dir)
  t.observe('commands', vim.tbl_keys(api.nvim_get_commands({})))
  -- The panel works too (whether or not setup() was called).
  t.cursor_to('def helper')
  vim.cmd('RemoraPanel')
  t.wait('the panel to show helper', function()
    return t.panel_title() == 'Service.helper'
  end, RUN_MS)
  t.observe('panel', t.panel())
end

--- :RemoraAsk → a proposal in the panel, the lens and :RemoraDiff;
--- :RemoraAccept → the buffer holds it and the server reports rewrite_applied.
function S.ask_accept(t)
  local buf = t.open('pkg/service.py')
  local source = api.nvim_get_current_win()
  local row = t.cursor_to('def helper')
  vim.cmd('RemoraPanel')
  t.wait('the panel to show helper', function()
    return t.panel_title() == 'Service.helper'
  end, RUN_MS)
  t.observe('panel_before', t.panel())
  lens(t, row, '0 pending', buf)

  vim.cmd('RemoraAsk Docstring please')
  t.wait('the proposal in the panel', function()
    return t.panel_has('Pending proposal pr_') and t.panel_has(DOCSTRING)
  end, RUN_MS)
  t.wait('the run to complete', function()
    return #t.events('agent_completed') > 0
  end, RUN_MS)
  t.wait('the panel to show the completed run', function()
    return t.panel_has('agent_completed')
  end, RUN_MS)
  t.observe('panel_with_proposal', t.panel())
  -- The proposal may show while the run still ends (a refresh in between):
  -- the lens settles on idle within a refresh.
  t.observe('lens_with_proposal', lens(t, row, 'idle · 1 pending proposal', buf))

  vim.cmd('RemoraDiff')
  local diff = t.wait('the diff window', function()
    return t.window_lines('^remora://diff/pr_')
  end, RUN_MS)
  t.observe('diff', diff)
  vim.cmd('close')
  api.nvim_set_current_win(source)

  vim.cmd('RemoraAccept')
  t.wait('the buffer to hold the proposal', function()
    return t.text(buf):find(DOCSTRING, 1, true)
  end, RUN_MS)
  t.wait('rewrite_applied', function()
    return #t.events('rewrite_applied') > 0
  end, RUN_MS)
  t.wait('the panel to drop the proposal', function()
    return t.panel_has('No pending proposal') and t.panel_has('rewrite_applied')
  end, RUN_MS)
  t.observe('buffer_after', t.text(buf))
  t.observe('panel_after', t.panel())

  vim.cmd('RemoraEvents')
  local events = t.wait('the events window', function()
    return t.window_lines('^remora://events/rm_')
  end, RUN_MS)
  t.observe('events_window', events)
  vim.cmd('close')
  api.nvim_set_current_win(source)
end

--- The panel follows the cursor, closes and reopens.
function S.panel(t)
  t.open('pkg/service.py')
  t.cursor_to('def helper')
  vim.cmd('RemoraPanel')
  t.wait('the panel to show helper', function()
    return t.panel_title() == 'Service.helper'
  end, RUN_MS)
  t.observe('helper', t.panel())
  t.cursor_to('return step()')
  t.wait('the panel to follow the cursor to run', function()
    return t.panel_title() == 'Service.run'
  end, RUN_MS)
  t.observe('run', t.panel())
  -- Close it with its own key, move, reopen: it shows the new node.
  local _, win = t.panel()
  api.nvim_set_current_win(win)
  api.nvim_feedkeys('q', 'x', false)
  t.wait('the panel to close', function()
    return t.panel() == nil
  end, 5000)
  t.cursor_to('def order')
  vim.cmd('RemoraPanel')
  t.wait('the reopened panel to show order', function()
    return t.panel_title() == 'order'
  end, RUN_MS)
  t.observe('order', t.panel())
  vim.cmd('RemoraPanel close')
  t.observe('closed', t.panel() == nil)
  vim.cmd('RemoraPanel')
  t.wait('the panel to open again', function()
    return t.panel_title() == 'order'
  end, RUN_MS)
end

--- :RemoraReject with feedback: the agent runs again with it.
function S.reject(t)
  local buf = t.open('pkg/service.py')
  t.cursor_to('def helper')
  vim.cmd('RemoraAsk Docstring please')
  t.wait('the proposal', function()
    return #t.events('rewrite_proposed') > 0 and #t.events('agent_completed') > 0
  end, RUN_MS)
  vim.cmd('RemoraReject use a one-line docstring')
  t.wait('rewrite_rejected', function()
    return #t.events('rewrite_rejected') > 0
  end, RUN_MS)
  t.wait('the second run to complete', function()
    return #t.events('agent_completed') >= 2
  end, RUN_MS)
  t.observe('buffer_after', t.text(buf))
end

--- :RemoraCancel ends a slow run; the statusline shows it while it lasts.
function S.cancel(t)
  t.open('pkg/service.py')
  t.cursor_to('def helper')
  vim.cmd('RemoraAsk Take your time')
  local status = t.wait('the run in the statusline', function()
    local text = require('remora').statusline()
    return text:find('Remora: Service.helper', 1, true) and text
  end, RUN_MS)
  t.observe('statusline_running', status)
  t.observe('lsp_status_running', vim.lsp.status())
  t.wait('the model to be asked', function()
    return #t.events('model_request') > 0
  end, RUN_MS)
  t.observe('cancel_at', vim.uv.hrtime() / 1e9)
  vim.cmd('RemoraCancel')
  t.wait('agent_cancelled', function()
    return #t.events('agent_cancelled') > 0
  end, 20000)
  t.observe('cancelled_at', vim.uv.hrtime() / 1e9)
  t.wait('the statusline to clear', function()
    return not require('remora').statusline():find('Service.helper', 1, true)
  end, 10000)
  t.observe('statusline_after', require('remora').statusline())
end

--- An agent's ask_user question arrives as remora/askUser and is answered
--- through vim.ui.input; :RemoraAsk without a message prompts for one; a
--- question dismissed at the prompt is answered later with :RemoraAsk.
function S.ask_user(t)
  stub_input(t, function(prompt)
    if prompt:find('^Ask ') then
      return 'Pick a colour for me'
    elseif prompt:find('Which colour?', 1, true) then
      return 'blue'
    end
    return nil -- dismissed
  end)
  t.open('pkg/service.py')
  t.cursor_to('def helper')
  vim.cmd('RemoraAsk')
  t.wait('the second question', function()
    return #t.events('agent_blocked') >= 2
  end, RUN_MS)
  t.sleep(300) -- the dismissed prompt's empty answer reaches the server
  t.observe('blocked_lens', lens(t, t.cursor_to('def helper'), 'blocked'))
  vim.cmd('RemoraAsk navy')
  t.wait('the run to complete', function()
    return #t.events('agent_completed') > 0
  end, RUN_MS)
end

--- The panel's keys: `d` shows the diff, `r` rejects and prompts for feedback.
function S.reject_prompt(t)
  stub_input(t, function()
    return 'name the quantity'
  end)
  t.open('pkg/service.py')
  t.cursor_to('def helper')
  vim.cmd('RemoraPanel')
  vim.cmd('RemoraAsk Docstring please')
  t.wait('the proposal in the panel', function()
    return t.panel_has('Pending proposal pr_')
  end, RUN_MS)
  t.wait('the run to complete', function()
    return #t.events('agent_completed') > 0
  end, RUN_MS)
  local _, panel = t.panel()
  api.nvim_set_current_win(panel)
  api.nvim_feedkeys('d', 'x', false)
  t.observe('diff', t.wait('the diff window', function()
    return t.window_lines('^remora://diff/pr_')
  end, RUN_MS))
  vim.cmd('close')
  api.nvim_set_current_win(panel)
  api.nvim_feedkeys('r', 'x', false)
  t.wait('rewrite_rejected', function()
    return #t.events('rewrite_rejected') > 0
  end, RUN_MS)
  t.wait('the second run to complete', function()
    return #t.events('agent_completed') >= 2
  end, RUN_MS)
  t.wait('the panel to drop the proposal', function()
    return t.panel_has('No pending proposal') and t.panel_has('rewrite_rejected')
  end, RUN_MS)
end

--- :checkhealth remora, with the server attached (or failing to start).
function S.health(t)
  vim.cmd.edit('pkg/service.py')
  if os.getenv('REMORA_TEST_EXPECT_ATTACH') ~= '0' then
    t.wait('the server to attach', function()
      return #vim.lsp.get_clients({ name = 'remora' }) > 0
    end, RUN_MS)
  end
  vim.cmd('checkhealth remora')
  t.wait('the health report', function()
    return vim.bo.filetype == 'checkhealth' and t.text(0):find('remora', 1, true)
  end, 30000)
  t.observe('report', api.nvim_buf_get_lines(0, 0, -1, false))
end

-- ---- seeing the swarm (issue 15) ----------------------------------------------------

--- The lines of the first floating window, or nil.
local function float_lines()
  for _, win in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_config(win).relative ~= '' then
      return api.nvim_buf_get_lines(api.nvim_win_get_buf(win), 0, -1, false)
    end
  end
  return nil
end

--- Whether some line of `lines` contains `needle` (plain).
local function has(lines, needle)
  for _, line in ipairs(lines or {}) do
    if line:find(needle, 1, true) then
      return true
    end
  end
  return false
end

--- Record vim.ui.select calls and answer with `pick(items, formatted)`.
local function stub_select(t, pick)
  t.result.observed.selects = {}
  vim.ui.select = function(items, opts, on_choice)
    local shown = {}
    for _, item in ipairs(items) do
      table.insert(shown, opts.format_item and opts.format_item(item) or tostring(item))
    end
    table.insert(t.result.observed.selects, { prompt = opts.prompt, items = shown })
    vim.defer_fn(function()
      local index = pick(items, shown)
      on_choice(index and items[index] or nil, index)
    end, 20)
  end
end

--- Clicking a lens (vim.lsp.codelens.run) shows the node card in a float.
function S.lens_click(t)
  local buf = t.open('pkg/service.py')
  local row = t.cursor_to('def helper')
  lens(t, row, 'remora ·', buf)
  vim.lsp.codelens.run()
  t.observe('float', t.wait('the node card in a float', function()
    local lines = float_lines()
    return lines and lines[1] == 'Service.helper' and lines
  end, RUN_MS))
  -- With the panel open (not following the cursor), a lens click shows its
  -- node there.
  require('remora.config').options.panel.follow = false
  vim.cmd('RemoraPanel')
  t.wait('the panel to show helper', function()
    return t.panel_title() == 'Service.helper'
  end, RUN_MS)
  local order = t.cursor_to('def order')
  lens(t, order, 'remora ·', buf)
  vim.lsp.codelens.run()
  t.observe('panel', t.wait('the panel to show order', function()
    return t.panel_title() == 'order' and t.panel()
  end, RUN_MS))
end

--- The "Show diff" code action opens the proposal's diff.
function S.show_diff(t)
  t.open('pkg/service.py')
  t.cursor_to('def helper')
  vim.cmd('RemoraAsk Docstring please')
  t.wait('the proposal and the end of the run', function()
    return #t.events('rewrite_proposed') > 0 and #t.events('agent_completed') > 0
  end, RUN_MS)
  t.wait('the diagnostic', function()
    return #vim.diagnostic.get(0) > 0
  end, RUN_MS)
  vim.lsp.buf.code_action({
    filter = function(action)
      return action.title == 'Show diff'
    end,
    apply = true,
  })
  t.observe('diff', t.wait('the diff window', function()
    return t.window_lines('^remora://diff/pr_')
  end, RUN_MS))
end

--- :RemoraHistory follows the conversation while it grows; the panel shows
--- its last entries.
function S.history(t)
  t.open('pkg/service.py')
  local source = api.nvim_get_current_win()
  t.cursor_to('def helper')
  vim.cmd('RemoraHistory')
  t.observe('history_empty', t.wait('the empty conversation', function()
    local lines = t.window_lines('^remora://history/rm_')
    return lines and has(lines, 'Nothing yet') and lines
  end, RUN_MS))
  api.nvim_set_current_win(source)
  vim.cmd('RemoraPanel')
  t.wait('the panel to show helper', function()
    return t.panel_title() == 'Service.helper'
  end, RUN_MS)
  vim.cmd('RemoraAsk Ask order which sizes exist.')
  t.observe('history', t.wait('the history to follow the answer', function()
    local lines = t.window_lines('^remora://history/rm_')
    return lines and has(lines, 'order lists twelve sizes.') and has(lines, 'Size 12: 120 cm') and lines
  end, RUN_MS))
  t.observe('panel', t.wait('the panel to show the conversation', function()
    return t.panel_has('order lists twelve sizes.') and t.panel()
  end, RUN_MS))
end

--- :RemoraCancel picks a run by id; :RemoraRuns lists queued and running runs,
--- `c` cancels the one under the cursor, <CR> jumps to its node.
function S.runs(t)
  local picked
  stub_select(t, function(_, shown)
    for i = #shown, 1, -1 do
      if shown[i]:find('(queued)', 1, true) then
        picked = shown[i]:match('^(run_%w+)')
        return i
      end
    end
  end)
  t.open('pkg/service.py')
  local source = api.nvim_get_current_win()
  t.cursor_to('def helper')
  vim.cmd('RemoraAsk Think slowly.')
  t.wait('the first run to start', function()
    return #t.events('model_request') > 0
  end, RUN_MS)
  vim.cmd('RemoraAsk And then this.')
  vim.cmd('RemoraAsk And this too.')
  t.wait('two runs asked for', function()
    return #require('remora.handlers').open_runs() == 3
  end, RUN_MS)
  vim.cmd('RemoraPanel')
  t.observe('panel_runs', t.wait("the panel to show the runs' state", function()
    local lines = t.panel() or {}
    for _, line in ipairs(lines) do
      local _, queued = line:gsub(' queued', '')
      if line:find('^Run run_') and line:find(' running', 1, true) and queued == 2 then
        return line
      end
    end
  end, RUN_MS))
  vim.cmd('RemoraPanel close')
  vim.cmd('RemoraCancel')
  t.wait('the picked queued run to be cancelled', function()
    return picked and #t.events('agent_cancelled', { run_id = picked }) == 1
  end, RUN_MS)
  t.observe('picked', picked)

  vim.cmd('RemoraRuns')
  local lines = t.wait('the runs list', function()
    local lines = t.window_lines('^remora://runs$')
    return lines and has(lines, ' queued ') and has(lines, ' running ') and has(lines, ' cancelled ') and lines
  end, RUN_MS)
  t.observe('runs_before', lines)
  local _, win = t.window_lines('^remora://runs$')
  api.nvim_set_current_win(win)
  t.cursor_to(' queued ')
  local queued = assert(api.nvim_get_current_line():match('^(run_%w+)'), 'no run on the line')
  t.observe('queued', queued)
  api.nvim_feedkeys('c', 'x', false)
  t.wait('the queued run to be cancelled', function()
    return #t.events('agent_cancelled', { run_id = queued }) == 1
  end, RUN_MS)
  t.cursor_to(' running ')
  local running = assert(api.nvim_get_current_line():match('^(run_%w+)'), 'no run on the line')
  t.observe('running', running)
  api.nvim_feedkeys('c', 'x', false)
  t.wait('the running run to be cancelled', function()
    return #t.events('agent_cancelled', { run_id = running }) == 1
  end, RUN_MS)
  t.observe('runs_after', t.wait('the list to follow', function()
    local lines = t.window_lines('^remora://runs$')
    return lines and not has(lines, ' queued ') and not has(lines, ' running ') and lines
  end, RUN_MS))
  _, win = t.window_lines('^remora://runs$')
  api.nvim_set_current_win(win)
  api.nvim_win_set_cursor(win, { 3, 0 })
  api.nvim_feedkeys(api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
  t.wait('the jump to the node', function()
    return api.nvim_buf_get_name(0):match('pkg/service%.py$')
  end, 5000)
  t.observe('jumped_to', api.nvim_get_current_line())
  t.observe('source_was', api.nvim_win_is_valid(source))
end

--- An agent's question with options is answered through vim.ui.select.
function S.select_question(t)
  stub_select(t, function(_, shown)
    return vim.fn.index(shown, 'cut') + 1
  end)
  t.open('pkg/service.py')
  t.cursor_to('def helper')
  vim.cmd('RemoraAsk Fix the precision.')
  t.wait('the run to complete', function()
    return #t.events('agent_completed') > 0
  end, RUN_MS)
end

--- A repository that wants trust: the server's question (vim.ui.select)
--- answered "Don't trust"; :RemoraTrust shows it, `yes` trusts, `forget`
--- forgets; a wrong argument is refused.
function S.trust(t)
  stub_select(t, function(_, shown)
    return vim.fn.index(shown, "Don't trust") + 1
  end)
  t.open('pkg/service.py')
  t.wait('the trust question', function()
    return #t.result.observed.selects > 0
  end, RUN_MS)
  -- The answer reached the server once it says why the project is untrusted.
  t.wait('the answer taken', function()
    local messages = api.nvim_exec2('messages', { output = true }).output
    return messages:find('is not trusted, so it may not', 1, true) ~= nil
  end, RUN_MS)
  local function after(argument, needle)
    local notes = #t.result.notifications
    vim.cmd('RemoraTrust ' .. argument)
    return t.wait(':RemoraTrust ' .. argument, function()
      for i = notes + 1, #t.result.notifications do
        local message = t.result.notifications[i].message
        if message:find(needle, 1, true) then
          return message
        end
      end
    end, RUN_MS)
  end
  t.observe('shown', after('', 'not trusted'))
  t.observe('trusted', after('yes', ': trusted'))
  t.observe('forgotten', after('forget', 'nobody has answered'))
  t.observe('refused', after('maybe', 'RemoraTrust takes'))
end

--- :RemoraTrust on a lone file (REMORA_TEST_FILE: no remora.yaml,
--- pyproject.toml or .git above it): Neovim starts the server without a
--- root, and the person is told there is no repository to trust.
function S.trust_lone_file(t)
  local buf = t.open(assert(os.getenv('REMORA_TEST_FILE')))
  local client = vim.lsp.get_clients({ name = 'remora', bufnr = buf })[1]
  t.observe('root_dir', client.root_dir or vim.NIL)
  local notes = #t.result.notifications
  vim.cmd('RemoraTrust')
  t.observe('shown', t.wait(':RemoraTrust answered', function()
    local said = {}
    for i = notes + 1, #t.result.notifications do
      table.insert(said, t.result.notifications[i].message)
    end
    return #said > 0 and said
  end, RUN_MS))
end

--- Open two Python files with a server that cannot run: one message.
function S.broken_server(t)
  vim.cmd.edit('pkg/service.py')
  t.sleep(1500)
  vim.cmd.edit('pkg/models.py')
  t.sleep(1500)
end

--- :help remora and every tag of doc/remora.txt resolve.
function S.help(t)
  local doc = os.getenv('REMORA_REPO') .. '/clients/nvim/doc/remora.txt'
  local copy = vim.fn.tempname()
  vim.fn.mkdir(copy .. '/doc', 'p')
  vim.fn.writefile(vim.fn.readfile(doc), copy .. '/doc/remora.txt')
  vim.cmd('helptags ' .. vim.fn.fnameescape(copy .. '/doc'))
  vim.opt.runtimepath:prepend(copy)
  vim.cmd('help remora')
  t.observe('help_buffer', vim.fn.fnamemodify(api.nvim_buf_get_name(0), ':t'))
  t.observe('help_line', api.nvim_get_current_line())
  local tags, failed = {}, {}
  for _, line in ipairs(vim.fn.readfile(doc)) do
    for tag in line:gmatch('%*([^%s*|]+)%*') do
      table.insert(tags, tag)
      local ok = pcall(vim.cmd.help, tag)
      if not ok or vim.fn.fnamemodify(api.nvim_buf_get_name(0), ':t') ~= 'remora.txt' then
        table.insert(failed, tag)
      end
    end
  end
  t.observe('tags', tags)
  t.observe('failed', failed)
  t.observe('commands', vim.tbl_keys(api.nvim_get_commands({})))
  t.observe('options', vim.tbl_keys(require('remora.config').defaults))
  t.observe('panel_keys', vim.tbl_keys(require('remora.config').defaults.panel.keys))
  t.observe('panel_options', vim.tbl_keys(require('remora.config').defaults.panel))
end

-- ---- the whole engine: graphs, proposals, blame, checkpoints (issue 26) ---------------

--- The quickfix list as shown: its title, each item's file, line and text,
--- and the lines of the quickfix window (nil when it is not open).
local function quickfix()
  local info = vim.fn.getqflist({ title = 0, items = 0 })
  local items = {}
  for _, item in ipairs(info.items) do
    table.insert(items, {
      file = vim.fn.fnamemodify(api.nvim_buf_get_name(item.bufnr), ':t'),
      lnum = item.lnum,
      text = item.text,
    })
  end
  local window
  for _, win in ipairs(api.nvim_list_wins()) do
    local buf = api.nvim_win_get_buf(win)
    if vim.bo[buf].buftype == 'quickfix' then
      window = api.nvim_buf_get_lines(buf, 0, -1, false)
    end
  end
  return { title = info.title, items = items, window = window }
end

--- The quickfix window (focused).
local function focus_quickfix()
  for _, win in ipairs(api.nvim_list_wins()) do
    if vim.bo[api.nvim_win_get_buf(win)].buftype == 'quickfix' then
      api.nvim_set_current_win(win)
      return win
    end
  end
  error('no quickfix window', 0)
end

--- The blame marks of `buf`: { row (1-based), sign, text }.
local function blame_marks(buf)
  local ns = api.nvim_create_namespace('remora_blame')
  local marks = {}
  for _, mark in ipairs(api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
    local details = mark[4]
    local text = {}
    for _, chunk in ipairs(details.virt_text or {}) do
      table.insert(text, chunk[1])
    end
    table.insert(marks, { row = mark[2] + 1, sign = vim.trim(details.sign_text or ''), text = table.concat(text) })
  end
  return marks
end

--- Whether a notification containing `needle` was shown; returns it.
local function notified(t, needle)
  for _, n in ipairs(t.result.notifications) do
    if n.message:find(needle, 1, true) then
      return n.message
    end
  end
  return nil
end

--- :RemoraGraph run (picked with vim.ui.select) → progress, the end
--- announced, :RemoraGraph status; :RemoraProposals in the quickfix list,
--- :RemoraReject and :RemoraAccept from its entries, accept-all for the rest;
--- :RemoraHistory of an accepted node; :RemoraBlame on, line, off; tokens.
function S.graph(t)
  stub_select(t, function(_, shown)
    for i, item in ipairs(shown) do
      if item:find('^doc%-inventory') then
        return i
      end
    end
  end)
  local buf = t.open('inventory/stock.py')
  local source = api.nvim_get_current_win()
  vim.cmd('RemoraGraph run')
  local statuslines = {}
  t.wait('the graph to complete', function()
    local line = require('remora').statusline()
    if line:find('doc-inventory', 1, true) and not vim.list_contains(statuslines, line) then
      table.insert(statuslines, line)
    end
    return #t.events('graph_completed') > 0
  end, RUN_MS)
  t.observe('statuslines', statuslines)
  t.observe('completed_note', t.wait('the end announced', function()
    return notified(t, 'Remora: graph doc-inventory (gr_')
  end, RUN_MS))
  t.observe('started_note', notified(t, 'started graph doc-inventory'))

  vim.cmd('RemoraGraph status')
  t.observe('status', t.wait('the status buffer', function()
    local lines = t.window_lines('^remora://graph/gr_')
    return lines and has(lines, 'step docs') and has(lines, 'pr_') and lines
  end, RUN_MS))
  vim.cmd('close')
  api.nvim_set_current_win(source)

  vim.cmd('RemoraProposals')
  t.observe('quickfix', t.wait('four proposals in the quickfix list', function()
    local qf = quickfix()
    return #qf.items == 4 and qf.window and qf
  end, RUN_MS))

  -- The diff of `mean`'s entry.
  focus_quickfix()
  t.cursor_to(' mean · ')
  vim.cmd('RemoraDiff')
  t.observe('diff', t.wait('the diff window', function()
    return t.window_lines('^remora://diff/pr_')
  end, RUN_MS))
  vim.cmd('close')

  -- Reject `total` from its entry, with feedback.
  focus_quickfix()
  t.cursor_to(' total · ')
  vim.cmd('RemoraReject keep it as it was')
  t.wait('rewrite_rejected', function()
    return #t.events('rewrite_rejected') > 0
  end, RUN_MS)
  t.wait('the retry to end', function()
    return #t.events('agent_completed', { agent_id = t.events('rewrite_rejected')[1].node_id }) >= 3
  end, RUN_MS)
  t.observe('after_reject', t.wait('three entries left', function()
    local qf = quickfix()
    return #qf.items == 3 and qf
  end, RUN_MS))

  -- Accept `count` from its entry.
  focus_quickfix()
  t.cursor_to(' count · ')
  vim.cmd('RemoraAccept')
  t.wait('rewrite_applied', function()
    return #t.events('rewrite_applied') == 1
  end, RUN_MS)
  t.observe('after_accept', t.wait('two entries left', function()
    local qf = quickfix()
    return #qf.items == 2 and qf
  end, RUN_MS))

  -- The graph run's other two together.
  vim.cmd('RemoraProposals accept-all')
  t.observe('accept_all_note', t.wait('the result of accept-all', function()
    return notified(t, 'accepted graph doc-inventory')
  end, RUN_MS))
  t.wait('three applied', function()
    return #t.events('rewrite_applied') == 3
  end, RUN_MS)
  t.observe('after_all', t.wait('an empty list', function()
    local qf = quickfix()
    return #qf.items == 0 and qf
  end, RUN_MS))
  t.observe('buffer', t.text(buf))

  -- The conversation of `count`: the graph's steps, its proposals, accepted.
  api.nvim_set_current_win(source)
  t.cursor_to('def count')
  vim.cmd('RemoraHistory')
  t.observe('history', t.wait('the conversation', function()
    local lines = t.window_lines('^remora://history/rm_')
    return lines and has(lines, '· accepted') and lines
  end, RUN_MS))
  vim.cmd('close')
  api.nvim_set_current_win(source)

  -- Blame: who wrote which line.
  vim.cmd('RemoraBlame')
  t.observe('blame', t.wait('the blame marks', function()
    local marks = blame_marks(buf)
    return #marks >= 6 and marks
  end, RUN_MS))
  t.cursor_to('def count(x: list)')
  vim.cmd('RemoraBlame line')
  t.observe('blame_float', t.wait('the blame float', function()
    local lines = float_lines()
    return lines and has(lines, 'Written by') and lines
  end, RUN_MS))
  -- An edited line no longer counts.
  api.nvim_set_current_win(source)
  t.cursor_to('Documented.')
  vim.cmd('normal! A # edited')
  vim.cmd('doautocmd TextChanged')
  t.observe('blame_edited', t.wait('the edited line to lose its mark', function()
    local marks = blame_marks(buf)
    for _, mark in ipairs(marks) do
      if mark.row == api.nvim_win_get_cursor(0)[1] then
        return false
      end
    end
    return #marks > 0 and marks
  end, RUN_MS))
  vim.cmd('RemoraBlame')
  t.observe('blame_hidden', blame_marks(buf))

  -- Today's tokens once the fetch after the last answer has come back (it
  -- follows each answer by 150 ms; on a busy machine, later): the scripted
  -- model reports 10 + 5 per answer.
  t.observe('tokens', t.wait("every answer's tokens", function()
    local tokens = require('remora').tokens()
    return tokens.total == 15 * #t.events('model_response') and tokens
  end, RUN_MS))
  t.observe('statusline', require('remora').statusline())
end

--- :RemoraGraph run NAME, then :RemoraGraph cancel while a step is slow.
function S.graph_cancel(t)
  t.open('inventory/stock.py')
  vim.cmd('RemoraGraph run doc-inventory')
  t.wait('the model to be asked', function()
    return #t.events('model_request') > 0
  end, RUN_MS)
  vim.cmd('RemoraGraph cancel')
  t.wait('graph_completed', function()
    return #t.events('graph_completed') > 0
  end, RUN_MS)
  t.observe('cancel_note', notified(t, 'cancelling graph run gr_'))
  t.observe('completed_note', t.wait('the end announced', function()
    return notified(t, 'Remora: graph doc-inventory (gr_')
  end, RUN_MS))
  vim.cmd('RemoraGraph status')
  t.observe('status', t.wait('the status buffer', function()
    local lines = t.window_lines('^remora://graph/gr_')
    return lines and lines[1]:find('cancelled', 1, true) and lines
  end, RUN_MS))
end

--- :RemoraCheckpoint create / list / restore (declined, then confirmed).
function S.checkpoint(t)
  local answers = { 'before-edit', 'Cancel', 'before-edit', 'Restore' }
  stub_select(t, function(_, shown)
    local want = table.remove(answers, 1)
    for i, item in ipairs(shown) do
      if item:find(want, 1, true) then
        return i
      end
    end
  end)
  local buf = t.open('pkg/service.py')
  -- Indexed first: a checkpoint records the files' hashes the index knows.
  lens(t, t.cursor_to('def order'), 'remora ·', buf)
  vim.cmd('RemoraCheckpoint create before-edit')
  t.observe('created_note', t.wait('the checkpoint', function()
    return #t.events('checkpoint_created') > 0 and notified(t, 'checkpoint cp_')
  end, RUN_MS))
  t.cursor_to('return order("b", 2)')
  vim.cmd('normal! A + 1')
  vim.cmd('write')
  vim.cmd('RemoraCheckpoint list')
  t.observe('list', t.wait('the list', function()
    local lines = t.window_lines('^remora://checkpoints$')
    return lines and has(lines, 'before-edit') and lines
  end, RUN_MS))
  vim.cmd('close')
  vim.cmd('RemoraCheckpoint restore')
  t.observe('declined_note', t.wait('the declined restore', function()
    return notified(t, 'checkpoint not restored')
  end, RUN_MS))
  vim.cmd('RemoraCheckpoint restore')
  t.observe('restored_note', t.wait('the restore', function()
    return #t.events('checkpoint_restored') > 0 and notified(t, 'restored cp_')
  end, RUN_MS))
  t.observe('buffer', t.text(buf))
end

--- :RemoraHistory and the panel show the whole conversation: a question and
--- its answer, an answer, a failure, a cancelled run.
function S.history_outcomes(t)
  stub_input(t, function(prompt)
    return prompt:find('Which colour?', 1, true) and 'blue' or nil
  end)
  t.open('pkg/service.py')
  local source = api.nvim_get_current_win()
  t.cursor_to('def helper')
  vim.cmd('RemoraPanel')
  t.wait('the panel to show helper', function()
    return t.panel_title() == 'Service.helper'
  end, RUN_MS)
  vim.cmd('RemoraAsk Pick a colour')
  t.wait('the answer', function()
    return #t.events('agent_completed') == 1
  end, RUN_MS)
  vim.cmd('RemoraAsk Now break')
  t.wait('the failure', function()
    return #t.events('agent_failed') == 1
  end, RUN_MS)
  vim.cmd('RemoraAsk Take your time')
  t.wait('the slow request', function()
    return #t.events('model_request') >= 4
  end, RUN_MS)
  vim.cmd('RemoraCancel')
  t.wait('the cancel', function()
    return #t.events('agent_cancelled') == 1
  end, RUN_MS)
  t.observe('panel', t.wait('the panel to show the cancelled run', function()
    return t.panel_has('Service.helper · cancelled') and t.panel()
  end, RUN_MS))
  api.nvim_set_current_win(source)
  vim.cmd('RemoraHistory')
  t.observe('history', t.wait('the conversation', function()
    local lines = t.window_lines('^remora://history/rm_')
    return lines and has(lines, 'Service.helper · cancelled') and lines
  end, RUN_MS))
end

--- A proposal in :RemoraHistory, pending with its checks, accepted from there.
function S.history_accept(t)
  local buf = t.open('pkg/service.py')
  t.cursor_to('def helper')
  vim.cmd('RemoraAsk Docstring please')
  t.wait('the proposal and the end of the run', function()
    return #t.events('rewrite_proposed') > 0 and #t.events('agent_completed') > 0
  end, RUN_MS)
  vim.cmd('RemoraHistory')
  t.observe('pending', t.wait('the pending proposal in the conversation', function()
    local lines = t.window_lines('^remora://history/rm_')
    return lines and has(lines, ' · pending · ') and lines
  end, RUN_MS))
  local _, win = t.window_lines('^remora://history/rm_')
  api.nvim_set_current_win(win)
  vim.cmd('RemoraAccept')
  t.observe('accepted', t.wait('the conversation to follow the accept', function()
    local lines = t.window_lines('^remora://history/rm_')
    return lines and has(lines, ' · accepted') and has(lines, 'you · accepted') and lines
  end, RUN_MS))
  t.observe('buffer', t.text(buf))
end

--- What it cost and why it woke: :RemoraAsk, then today's tokens in the
--- statusline, :RemoraRuns with each run's cost, :RemoraMute on order, its
--- card in the panel and :RemoraSubscriptions, :RemoraUsage.
function S.cost_wake(t)
  t.open('pkg/service.py')
  local source = api.nvim_get_current_win()
  t.cursor_to('def helper')
  vim.cmd('RemoraAsk Hello there')
  t.wait('the run to end', function()
    return #t.events('agent_completed') > 0
  end, RUN_MS)
  t.observe('statusline', t.wait("today's tokens in the statusline", function()
    local line = require('remora').statusline()
    return line:find('tokens today', 1, true) and line
  end, RUN_MS))
  t.observe('tokens', require('remora').tokens())
  vim.cmd('RemoraRuns')
  t.observe('runs', t.wait('the runs list', function()
    local lines = t.window_lines('^remora://runs$')
    return lines and has(lines, ' done ') and lines
  end, RUN_MS))
  vim.cmd('close')
  api.nvim_set_current_win(source)
  t.cursor_to('def helper')
  vim.cmd('RemoraHistory')
  t.observe('history', t.wait('the conversation', function()
    local lines = t.window_lines('^remora://history/rm_')
    return lines and has(lines, 'woken by') and lines
  end, RUN_MS))
  vim.cmd('close')
  api.nvim_set_current_win(source)

  t.cursor_to('def order')
  vim.cmd('RemoraMute')
  t.observe('muted_note', t.wait('the mute to be said', function()
    return notified(t, 'is muted')
  end, RUN_MS))
  vim.cmd('RemoraPanel')
  t.observe('panel', t.wait('the panel to show order muted', function()
    local lines = t.panel() or {}
    return t.panel_title() == 'order' and has(lines, 'muted') and lines
  end, RUN_MS))
  vim.cmd('RemoraPanel close')
  api.nvim_set_current_win(source)
  t.cursor_to('def order')
  vim.cmd('RemoraSubscriptions')
  t.observe('subscriptions', t.wait('the subscriptions', function()
    local lines = t.window_lines('^remora://subscriptions/rm_')
    return lines and has(lines, 'messages to it') and lines
  end, RUN_MS))
  vim.cmd('close')
  api.nvim_set_current_win(source)
  vim.cmd('RemoraUsage today')
  t.observe('usage', t.wait('the usage report', function()
    local lines = t.window_lines('^remora://usage$')
    return lines and has(lines, 'Service.helper') and lines
  end, RUN_MS))
end

--- :RemoraInstructions with text on order, then without: the buffer holds
--- the current ones, edited and written (:w) they are sent; the panel's card
--- shows them; :RemoraAsk runs the agent with them (the test reads its prompt).
function S.instructions(t)
  t.open('pkg/service.py')
  local source = api.nvim_get_current_win()
  t.cursor_to('def order')
  vim.cmd('RemoraInstructions Keep prices in integer cents.')
  t.observe('set_note', t.wait('the instructions set', function()
    return notified(t, 'follows your instructions')
  end, RUN_MS))
  t.cursor_to('def order')
  vim.cmd('RemoraInstructions')
  t.observe('editing', t.wait('the instructions buffer', function()
    local lines = t.window_lines('^remora://instructions/rm_')
    return lines and lines[1] ~= '' and lines
  end, RUN_MS))
  local buf = api.nvim_get_current_buf()
  api.nvim_buf_set_lines(buf, 0, -1, false, { 'Answer in French.', 'Be brief.' })
  local notes = #t.result.notifications
  vim.cmd('write')
  t.wait('the edited instructions sent', function()
    return #t.result.notifications > notes and notified(t, 'follows your instructions')
  end, RUN_MS)
  t.observe('modified_after_write', vim.bo[buf].modified)
  vim.cmd('close')
  api.nvim_set_current_win(source)
  t.cursor_to('def order')
  vim.cmd('RemoraPanel')
  t.observe('panel', t.wait('the panel to show the instructions', function()
    local lines = t.panel() or {}
    return t.panel_title() == 'order' and has(lines, 'Be brief.') and lines
  end, RUN_MS))
  vim.cmd('RemoraPanel close')
  api.nvim_set_current_win(source)
  t.cursor_to('def order')
  vim.cmd('RemoraAsk Hello there')
  t.wait('the run to end', function()
    return #t.events('agent_completed') > 0
  end, RUN_MS)
end

--- After a restart (a new session on the same project): the panel's card
--- still shows the instructions, and the next run carries them.
function S.instructions_kept(t)
  t.open('pkg/service.py')
  t.cursor_to('def order')
  vim.cmd('RemoraPanel')
  t.observe('panel', t.wait('the panel to show the instructions', function()
    local lines = t.panel() or {}
    return t.panel_title() == 'order' and has(lines, 'Be brief.') and lines
  end, RUN_MS))
end

--- :RemoraRevert on a line an agent wrote (accepted), then :RemoraRevert gr_…
--- for the rest of the graph run: each offered, accepted, the text back.
function S.revert(t)
  local answers = { 'doc-inventory', 'Accept', 'Later', 'Accept' }
  stub_select(t, function(_, shown)
    local want = table.remove(answers, 1)
    for i, item in ipairs(shown) do
      if item:find(want, 1, true) then
        return i
      end
    end
  end)
  local buf = t.open('inventory/stock.py')
  local source = api.nvim_get_current_win()
  vim.cmd('RemoraGraph run')
  t.wait('the graph to complete', function()
    return #t.events('graph_completed') > 0
  end, RUN_MS)
  local graph_run_id = t.events('graph_completed')[1].graph_run_id
  vim.cmd('RemoraProposals accept-all')
  t.wait('four applied', function()
    return #t.events('rewrite_applied') == 4
  end, RUN_MS)
  vim.cmd('cclose')
  api.nvim_set_current_win(source)
  t.observe('accepted', t.text(buf))

  -- The line under the cursor: count's docstring.
  t.cursor_to('Documented.')
  vim.cmd('RemoraRevert')
  t.observe('proposed_note', t.wait('the revert proposed', function()
    return notified(t, 'revert of pr_')
  end, RUN_MS))
  t.wait('the revert applied', function()
    return #t.events('rewrite_applied') == 5 and notified(t, 'accepted the revert of')
  end, RUN_MS)
  t.observe('after_one', t.text(buf))

  -- The graph run: proposed, left for later, then accepted from a second offer.
  vim.cmd('RemoraRevert ' .. graph_run_id)
  t.observe('later_note', t.wait('the revert left for later', function()
    return notified(t, 'the revert waits in :RemoraProposals')
  end, RUN_MS))
  vim.cmd('RemoraRevert ' .. graph_run_id)
  t.observe('graph_note', t.wait('the graph revert applied', function()
    return #t.events('rewrite_applied') == 6 and notified(t, 'accepted the revert of graph run')
  end, RUN_MS))
  t.observe('after_all', t.text(buf))
  t.observe('prompts', t.result.observed.selects)
end

--- A graph run a restart interrupted (the test killed the server first): its
--- end is announced with the way on; :RemoraGraph resume goes on with it.
function S.graph_resume(t)
  local buf = t.open('inventory/stock.py')
  t.observe('interrupted_note', t.wait('the interrupted run announced', function()
    return notified(t, 'go on with :RemoraGraph resume')
  end, RUN_MS))
  vim.cmd('RemoraGraph resume')
  t.observe('resumed_note', t.wait('the run going on', function()
    return notified(t, 'goes on: the steps that had finished are not run again')
  end, RUN_MS))
  t.observe('completed_note', t.wait('the end of the resumed run', function()
    return #t.events('graph_completed', { outcome = 'completed' }) > 0
      and notified(t, ') completed: ')
  end, RUN_MS))
  t.observe('buffer', t.text(buf))
end

-- ---- new files and change sets (issue 27 §1–§2) -------------------------------------

--- Ask `order`'s agent (in service.py) and wait for its run to end; the proposal.
local function ask_order(t, service, message)
  api.nvim_set_current_buf(service)
  t.cursor_to('def order')
  local before = #t.events('rewrite_proposed')
  vim.cmd('RemoraAsk ' .. message)
  local made = t.wait('the proposal of ' .. message, function()
    local all = t.events('rewrite_proposed')
    return #all > before and all[#all]
  end, RUN_MS)
  t.wait('the run of ' .. message, function()
    return #t.events('agent_completed', { run_id = made.run_id }) > 0
  end, RUN_MS)
  return made.proposal_id, made.node_id
end

--- The Remora quickfix entry of `proposal_id`, with the cursor on it.
local function to_entry(t, proposal_id)
  vim.cmd('RemoraProposals')
  t.wait('the entry of ' .. proposal_id .. ' in the quickfix window', function()
    local qf = quickfix()
    for _, item in ipairs(qf.items) do
      if item.text:find(proposal_id, 1, true) and qf.window then
        return true
      end
    end
  end, RUN_MS)
  focus_quickfix()
  t.cursor_to(proposal_id)
end

--- A new file accepted from :RemoraProposals (created, undone with `u`); a
--- change set listed as one entry, its view with each member's diff, a
--- member that needs others refused alone, all of it accepted with `A`; a set
--- rejected with feedback (`R`); a set whose document changed: nothing
--- applied; the apply-edit guard refusing a whole edit.
function S.sets(t)
  stub_input(t, function()
    return 'SETS_FEEDBACK keep the rates where they are'
  end)
  local service = t.open('pkg/service.py')
  local source = api.nvim_get_current_win()
  local client = vim.lsp.get_clients({ name = 'remora', bufnr = service })[1]
  t.observe('resource_operations', client.capabilities.workspace.workspaceEdit.resourceOperations)

  -- 1. A new file.
  local new_file = ask_order(t, service, 'SETS_NEW_FILE please')
  to_entry(t, new_file)
  t.observe('new_file_list', quickfix())
  t.observe('new_file_on_disk_before', vim.uv.fs_stat('tests/test_service.py') ~= nil)
  -- Accepted through its code action on `order` (the edit Neovim applies itself).
  vim.cmd('cclose')
  api.nvim_set_current_win(source)
  api.nvim_set_current_buf(service)
  t.cursor_to('def order')
  local titles = {}
  vim.lsp.buf.code_action({
    filter = function(action)
      table.insert(titles, action.title)
      return action.title:find('^Accept: create ') ~= nil
    end,
    apply = true,
  })
  t.wait('the new file accepted', function()
    return #t.events('rewrite_applied', { proposal_id = new_file }) > 0
  end, RUN_MS)
  t.observe('new_file_actions', titles)
  local created = vim.fn.bufnr('tests/test_service.py')
  t.observe('new_file_text', t.text(created))
  t.observe('new_file_disk', table.concat(vim.fn.readfile('tests/test_service.py'), '\n'))
  t.observe('new_file_modified', vim.bo[created].modified)
  api.nvim_set_current_win(source)
  api.nvim_set_current_buf(created)
  vim.cmd('normal! u')
  t.observe('new_file_undone', t.text(created))
  t.observe('new_file_exists_after_undo', vim.uv.fs_stat('tests/test_service.py') ~= nil)
  vim.cmd('normal! \18') -- <C-r>: redo
  t.observe('new_file_redone', t.text(created))
  api.nvim_set_current_buf(service)

  -- 2. A change set across three files, one of them new.
  local set_id = ask_order(t, service, 'SETS_CHANGE_SET please')
  to_entry(t, set_id)
  t.observe('set_list', quickfix())
  vim.cmd('RemoraDiff')
  t.wait('the set view', function()
    return t.window_lines('^remora://set/' .. set_id)
  end, RUN_MS)
  local view, win = t.window_lines('^remora://set/' .. set_id)
  t.observe('set_view', view)
  api.nvim_set_current_win(win)
  t.cursor_to('## 1. ')
  api.nvim_feedkeys('a', 'x', false)
  t.observe('member_alone_note', t.wait('the member refused alone', function()
    return notified(t, 'not accepted: 1. pkg/service.py · order needs')
  end, 5000))
  -- Rejecting the new module alone would leave order and make_item calling
  -- what is not there: refused by the server, naming them; nothing changes.
  api.nvim_set_current_win(win)
  t.cursor_to('## 3. ')
  -- The view is drawn again after the answer (set_lines: a new changedtick).
  local drawn = api.nvim_buf_get_changedtick(api.nvim_win_get_buf(win))
  api.nvim_feedkeys('r', 'x', false)
  t.observe('member_needed_note', t.wait('the member refused rejected alone', function()
    return notified(t, 'not rejected: ')
  end, RUN_MS))
  t.wait('the set view shown again, whole', function()
    local lines, shown = t.window_lines('^remora://set/' .. set_id)
    return lines
      and api.nvim_buf_get_changedtick(api.nvim_win_get_buf(shown)) > drawn
      and vim.tbl_contains(lines, '## 3. pkg/currency.py (new file, +5)')
  end, RUN_MS)
  win = select(2, t.window_lines('^remora://set/' .. set_id))
  local models = vim.fn.bufadd('pkg/models.py')
  vim.fn.bufload(models)
  t.observe('before', { service = t.text(service), models = t.text(models) })
  api.nvim_set_current_win(win)
  api.nvim_feedkeys('A', 'x', false)
  t.wait('the set accepted', function()
    return #t.events('rewrite_applied', { proposal_id = set_id }) > 0
  end, RUN_MS)
  local note = t.wait('the set said applied', function()
    return notified(t, 'applied Change set: add currency')
  end, RUN_MS)
  local currency = vim.fn.bufnr('pkg/currency.py')
  t.observe('after', {
    service = t.text(service),
    models = t.text(models),
    currency = currency > 0 and t.text(currency) or nil,
    currency_exists = vim.uv.fs_stat('pkg/currency.py') ~= nil,
    note = note,
  })

  -- 3. A set rejected with feedback from its view.
  local rejected, asker = ask_order(t, service, 'SETS_REJECT_SET please')
  to_entry(t, rejected)
  vim.cmd('RemoraDiff')
  t.wait('the rejected set view', function()
    return t.window_lines('^remora://set/' .. rejected)
  end, RUN_MS)
  local _, reject_win = t.window_lines('^remora://set/' .. rejected)
  api.nvim_set_current_win(reject_win)
  local runs = #t.events('agent_completed', { agent_id = asker })
  api.nvim_feedkeys('R', 'x', false)
  t.wait('the set rejected', function()
    return #t.events('rewrite_rejected', { proposal_id = rejected }) > 0
  end, RUN_MS)
  t.wait('the run with the feedback', function()
    return #t.events('agent_completed', { agent_id = asker }) > runs
  end, RUN_MS)

  -- 3b. One member rejected with feedback (`r` on its heading): the view
  -- shows the set without it; `A` then accepts the rest, the member's file
  -- never created.
  api.nvim_set_current_win(source)
  local partial, partial_asker = ask_order(t, service, 'SETS_MEMBER_SET please')
  to_entry(t, partial)
  vim.cmd('RemoraDiff')
  t.wait('the partly rejected set view', function()
    return t.window_lines('^remora://set/' .. partial)
  end, RUN_MS)
  local _, partial_win = t.window_lines('^remora://set/' .. partial)
  api.nvim_set_current_win(partial_win)
  t.cursor_to('## 3. ')
  local partial_runs = #t.events('agent_completed', { agent_id = partial_asker })
  api.nvim_feedkeys('r', 'x', false)
  t.observe('member_rejected_note', t.wait('the member said rejected', function()
    return notified(t, 'the rest of the set stays pending')
  end, RUN_MS))
  t.observe('member_rejected_event', t.wait('the member rejected', function()
    return t.events('rewrite_rejected', { proposal_id = partial })[1]
  end, RUN_MS))
  t.wait('the run with the member feedback', function()
    return #t.events('agent_completed', { agent_id = partial_asker }) > partial_runs
  end, RUN_MS)
  local rest_view = t.wait('the view without the member', function()
    local lines = t.window_lines('^remora://set/' .. partial)
    if not lines then
      return false
    end
    for _, line in ipairs(lines) do
      if line:find('^## 3%. ') then
        return false
      end
    end
    return lines
  end, RUN_MS)
  t.observe('member_rest_view', rest_view)
  t.observe('member_rates_exists_after_reject', vim.uv.fs_stat('pkg/audit_rates.py') ~= nil)
  local _, rest_win = t.window_lines('^remora://set/' .. partial)
  api.nvim_set_current_win(rest_win)
  api.nvim_feedkeys('A', 'x', false)
  t.wait('the rest accepted', function()
    return #t.events('rewrite_applied', { proposal_id = partial }) > 0
  end, RUN_MS)
  t.observe('member_rest_after', {
    service = t.text(service),
    models = t.text(models),
    rates_exists = vim.uv.fs_stat('pkg/audit_rates.py') ~= nil,
  })

  -- 4. A set whose document the person edits before accepting.
  api.nvim_set_current_win(source)
  local stale = ask_order(t, service, 'SETS_STALE_SET please')
  to_entry(t, stale)
  vim.cmd('RemoraDiff')
  t.wait('the stale set view', function()
    return t.window_lines('^remora://set/' .. stale)
  end, RUN_MS)
  local _, stale_win = t.window_lines('^remora://set/' .. stale)
  local service_before = t.text(service)
  api.nvim_buf_set_lines(models, 0, 0, false, { '# priced in euros' })
  t.observe('stale_event', t.wait('rewrite_stale', function()
    return t.events('rewrite_stale', { proposal_id = stale })[1]
  end, RUN_MS))
  api.nvim_set_current_win(stale_win)
  api.nvim_feedkeys('A', 'x', false)
  t.observe('stale_note', t.wait('nothing applied', function()
    return notified(t, 'nothing applied')
  end, RUN_MS))
  t.observe('stale_view', t.wait('the set view saying stale', function()
    local lines = t.window_lines('^remora://set/' .. stale)
    return lines and lines[1]:find('(stale)', 1, true) and lines
  end, RUN_MS))
  t.observe('stale_after', {
    service_unchanged = t.text(service) == service_before,
    models_first = api.nvim_buf_get_lines(models, 0, 1, false)[1],
    rates_exists = vim.uv.fs_stat('pkg/rates.py') ~= nil,
  })
  vim.cmd('RemoraProposals')
  t.observe('list_after', t.wait('the list without the stale set', function()
    local qf = quickfix()
    for _, item in ipairs(qf.items) do
      if item.text:find(stale, 1, true) then
        return false
      end
    end
    return qf
  end, RUN_MS))

  -- The guard: an edit whose second document changed since applies nothing;
  -- a CreateFile over an existing file is refused.
  local guard = require('remora.apply_edit')
  local uri = function(path)
    return vim.uri_from_fname(vim.fs.joinpath(vim.fn.getcwd(), path))
  end
  local service_text = t.text(service)
  local edit = {
    documentChanges = {
      { textDocument = { uri = uri('pkg/service.py'), version = vim.lsp.util.buf_versions[service] }, edits = { { range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } }, newText = '# X\n' } } },
      { textDocument = { uri = uri('pkg/models.py'), version = vim.lsp.util.buf_versions[models] - 1 }, edits = { { range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } }, newText = '# Y\n' } } },
    },
  }
  t.observe('guard_versions', guard.handler(nil, { edit = edit }, { client_id = client.id }))
  t.observe('guard_service_unchanged', t.text(service) == service_text)
  local create = { documentChanges = { { kind = 'create', uri = uri('pkg/currency.py'), options = { overwrite = false, ignoreIfExists = false } } } }
  t.observe('guard_create', guard.handler(nil, { edit = create }, { client_id = client.id }))
  t.observe('guard_currency_kept', currency > 0 and t.text(currency) or nil)
end

--- The code actions on `needle`'s line whose title starts with `prefix`;
--- with `pick`, the one starting with `pick` is run (as a person picks it
--- from `vim.lsp.buf.code_action()`).
local function code_actions(t, buf, needle, prefix, pick)
  api.nvim_set_current_buf(buf)
  t.cursor_to(needle)
  local titles, done = {}, false
  vim.lsp.buf.code_action({
    filter = function(action)
      if action.title:sub(1, #prefix) == prefix then
        table.insert(titles, action.title)
      end
      return pick ~= nil and action.title:sub(1, #pick) == pick
    end,
    apply = pick ~= nil,
  })
  if pick == nil then
    -- Nothing to apply: the menu would stay open; the titles came with it.
    vim.wait(RUN_MS, function()
      done = #titles > 0
      return done
    end, 50)
  end
  return titles
end

--- A change set's member rejected from its code action on its definition
--- line ("Reject member 1 of the change set (rewrite order) with
--- feedback…"): the feedback asked for, the set goes on without it; the new
--- module's action, needed by the others, shows the server's refusal.
function S.member_action(t)
  stub_input(t, function()
    return 'SETS_FEEDBACK keep the rates where they are'
  end)
  vim.ui.select = function(items, _, on_choice)
    on_choice(items[1], 1) -- the one action the filter kept
  end
  local service = t.open('pkg/service.py')
  local set_id, asker = ask_order(t, service, 'SETS_CHANGE_SET please')
  t.observe('before', code_actions(t, service, 'def order', 'Reject member '))
  local before_text = t.text(service)

  local messages = function()
    return api.nvim_exec2('messages', { output = true }).output
  end
  code_actions(t, service, 'def order', 'Reject member ', 'Reject member 3 ')
  t.observe('refused', t.wait('the refusal shown', function()
    for line in vim.gsplit(messages(), '\n', { plain = true }) do
      if line:find('is needed by', 1, true) then
        return line
      end
    end
  end, RUN_MS))
  t.observe('prompts_after_refusal', vim.deepcopy(t.result.observed.prompts))

  local runs = #t.events('agent_completed', { agent_id = asker })
  code_actions(t, service, 'def order', 'Reject member ', 'Reject member 1 ')
  t.observe('rejected', t.wait('the member rejected', function()
    return t.events('rewrite_rejected', { proposal_id = set_id })[1]
  end, RUN_MS))
  t.wait('the run with the feedback', function()
    return #t.events('agent_completed', { agent_id = asker }) > runs
  end, RUN_MS)
  t.observe('after', code_actions(t, service, 'def order', 'Reject member '))
  vim.cmd('RemoraProposals')
  t.observe('list', t.wait('the set listed without the member', function()
    for _, item in ipairs(quickfix().items) do
      if item.text:find(set_id, 1, true) and item.text:find('1 definition in 1 file', 1, true) then
        return item.text
      end
    end
  end, RUN_MS))
  t.observe('service_unchanged', t.text(service) == before_text)
end

return S
