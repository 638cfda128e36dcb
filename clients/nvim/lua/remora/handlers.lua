--- What the server sends that Neovim does not handle by itself:
---
--- - `remora/event` (every persisted event): kept as the runs under way,
---   shown in the panel, announced for new proposals and failures, and
---   re-emitted as the `User RemoraEvent` autocmd (`args.data` is the event)
---   for statuslines and user scripts;
--- - the `remora/askUser {question_id, question}` request, answered with
---   `vim.ui.input` (questions with options arrive as
---   `window/showMessageRequest`, which Neovim answers with `vim.ui.select`);
--- - `workspace/codeLens/refresh`.
local M = {}

local END_EVENTS = {
  agent_completed = true,
  agent_failed = true,
  agent_cancelled = true,
  run_interrupted = true,
}

--- run id → { agent_id, name?, client_id, started }
--- Runs asked for from this editor (before they start) and every run that
--- has started and not ended.
--- @type table<string, table>
M.runs = {}

--- agent id → qualified name, learnt from node cards (for messages)
local names = {}

--- Remember a node's name for messages about its agent.
--- @param card table
function M.learn(card)
  if card and card.id and card.qualified_name then
    names[card.id] = card.qualified_name
  end
end

--- Whether the name of `agent_id` is known.
--- @param agent_id string
--- @return boolean
function M.known(agent_id)
  return names[agent_id] ~= nil
end

--- The name of an agent for messages.
--- @param agent_id string?
--- @return string
function M.name(agent_id)
  return agent_id and (names[agent_id] or agent_id) or 'an agent'
end

--- A run this editor asked for (it has a run id before it starts).
--- @param run_id string
--- @param card table the node card of its agent
--- @param client_id integer
function M.track(run_id, card, client_id)
  M.learn(card)
  if run_id and not M.runs[run_id] then
    M.runs[run_id] = { agent_id = card.id, client_id = client_id, started = false }
  end
end

--- Runs not ended yet, optionally of one agent.
--- @param agent_id? string
--- @return { run_id: string, agent_id: string, client_id: integer, started: boolean }[]
function M.open_runs(agent_id)
  local found = {}
  for run_id, run in pairs(M.runs) do
    if agent_id == nil or run.agent_id == agent_id then
      table.insert(found, vim.tbl_extend('force', { run_id = run_id }, run))
    end
  end
  return found
end

local function announce(e)
  local notify = require('remora.config').options.notify
  local server = require('remora.server')
  if e.type == 'rewrite_proposed' and notify.proposals then
    server.notify(
      string.format('%s proposes a change (:RemoraDiff, :RemoraAccept, :RemoraReject)', M.name(e.node_id))
    )
  elseif e.type == 'agent_failed' and notify.failures then
    server.notify(
      string.format('%s failed: %s', M.name(e.agent_id), require('remora.format').one_line(e.error)),
      vim.log.levels.WARN
    )
  end
end

--- Handler of the `remora/event` notification.
--- @param event table the event's JSON
--- @param ctx lsp.HandlerContext
function M.event(_, event, ctx)
  if type(event) ~= 'table' then
    return
  end
  local run_id = event.run_id
  if type(run_id) == 'string' then
    if event.type == 'agent_started' then
      M.runs[run_id] = { agent_id = event.agent_id, client_id = ctx.client_id, started = true }
    elseif END_EVENTS[event.type] then
      M.runs[run_id] = nil
    elseif event.type == 'trigger_refused' and M.runs[run_id] and not M.runs[run_id].started then
      M.runs[run_id] = nil -- a run asked for that the cascade rules refused
    end
  end
  announce(event)
  require('remora.tokens').on_event(event)
  require('remora.panel').on_event(event, ctx.client_id)
  require('remora.history').on_event(event)
  require('remora.runs').on_event(event)
  require('remora.graph').on_event(event, ctx.client_id)
  require('remora.proposals').on_event(event)
  require('remora.blame').on_event(event)
  vim.api.nvim_exec_autocmds('User', { pattern = 'RemoraEvent', modeline = false, data = event })
end

--- Handler of the `remora/askUser` request: `{answer}` from `vim.ui.input`
--- (`{answer: null}` when the person cancels).
--- @param params { question_id: string, question: string }
--- @return table
function M.ask_user(_, params, _)
  local question = type(params) == 'table' and params.question or '?'
  local co, is_main = coroutine.running()
  if not co or is_main then
    -- Not in a coroutine (an older rpc layer): ask synchronously.
    local answer = vim.fn.input('Remora asks: ' .. question .. ' ')
    return { answer = answer ~= '' and answer or vim.NIL }
  end
  vim.ui.input({ prompt = 'Remora asks: ' .. question .. ' ' }, function(answer)
    -- Resume later: a synchronous vim.ui.input answers before the yield.
    vim.schedule(function()
      coroutine.resume(co, answer)
    end)
  end)
  local answer = coroutine.yield()
  if type(answer) ~= 'string' or answer == '' then
    return { answer = vim.NIL }
  end
  return { answer = answer }
end

--- Handler of `window/showMessageRequest` for Remora: an agent's question
--- with options (`ask_user`), chosen with `vim.ui.select`; dismissing it
--- leaves the question open (answer later with :RemoraAsk). The server's
--- own questions (trust, a key's host) already start with "Remora: " and are
--- shown as they are.
--- @param params lsp.ShowMessageRequestParams
function M.show_message_request(_, params, _)
  local actions = type(params) == 'table' and params.actions or {}
  local question = type(params) == 'table' and tostring(params.message) or '?'
  local co, is_main = coroutine.running()
  local opts = {
    kind = 'remora_question',
    prompt = question:sub(1, 8) == 'Remora: ' and question or ('Remora asks: ' .. question),
    format_item = function(action)
      return (tostring(action.title):gsub('\n', ' '))
    end,
  }
  if not co or is_main then
    local choice
    vim.ui.select(actions, opts, function(picked)
      choice = picked
    end)
    return choice or vim.NIL
  end
  vim.ui.select(actions, opts, function(choice)
    vim.schedule(function()
      coroutine.resume(co, choice or vim.NIL)
    end)
  end)
  return coroutine.yield()
end

--- Server processes that ended badly, reported once per Neovim session.
local told_exit = false

--- `on_exit` of the Remora client: a server that crashed (or could not run)
--- is reported once, with where to look.
--- @param code integer
--- @param signal integer
function M.on_exit(code, signal, _)
  if (code == 0 and (signal == 0 or signal == 15)) or told_exit or vim.v.exiting ~= vim.NIL then
    return
  end
  told_exit = true
  vim.schedule(function()
    require('remora.server').notify(
      string.format(
        'the server stopped (exit code %d%s): see :LspLog and :checkhealth remora',
        code,
        signal ~= 0 and (', signal ' .. signal) or ''
      ),
      vim.log.levels.ERROR
    )
  end)
end

--- Handler of `workspace/codeLens/refresh`.
--- @param ctx lsp.HandlerContext
function M.codelens_refresh(_, _, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if client then
    require('remora.lenses').refresh_client(client)
  end
  return vim.NIL
end

return M
