--- Why a node's agent wakes, and your say in it. :RemoraSubscriptions shows
--- the subscriptions of the node under the cursor (its two defaults and its
--- own, each with how many runs it fired lately and when last) in a scratch
--- buffer (`remora://subscriptions/<id>`): `m` mutes or unmutes the node, `d`
--- removes the subscription under the cursor (one of its own), `R`
--- refreshes, `q` closes. :RemoraMute [off] mutes the node (nothing wakes it
--- but your messages) or unmutes it.
local M = {}

local api = vim.api

local function server()
  return require('remora.server')
end

--- name → { card, client, rows } of a shown list
local shown = {}

--- The lines of a node's subscriptions (remora.subscriptions.list).
--- @param card table the node
--- @param found table { muted, subscriptions }
--- @return string[] lines, table<integer, table> rows line → subscription
function M.lines(card, found)
  local lines = {
    string.format('# %s (%s): what wakes its agent  ([m] mute/unmute  [d] remove  [R] refresh  [q] close)', card.qualified_name or card.id, card.id),
  }
  if found.muted == true then
    table.insert(lines, 'muted: nothing wakes it but your messages')
  end
  table.insert(lines, string.format('%-22s %-8s %5s  %-9s %s', 'subscription', 'kind', 'fired', 'last', 'wakes for'))
  local rows = {}
  for _, sub in ipairs(found.subscriptions or {}) do
    local last = sub.matched and sub.matched[1]
    table.insert(
      lines,
      string.format(
        '%-22s %-8s %5d  %-9s %s',
        sub.id,
        sub.default and 'default' or 'own',
        tonumber(sub.fired) or 0,
        last and os.date('%H:%M:%S', math.floor(last.at)) or '',
        sub.text or ''
      )
    )
    rows[#lines] = sub
  end
  return lines, rows
end

local function show(card, client)
  local name = 'remora://subscriptions/' .. card.id
  server().execute(client, 'remora.subscriptions.list', { node_id = card.id }, function(found)
    local lines, rows = M.lines(card, found or {})
    local buf = require('remora.scratch').show(name, lines, 'remora')
    local fresh = shown[name] == nil or shown[name].buf ~= buf
    shown[name] = { card = card, client = client, rows = rows, buf = buf, muted = found.muted == true }
    if fresh then
      M.keys(name, buf)
    end
  end)
end

--- Mute or unmute `card`'s node, then `after()`.
--- @param card table
--- @param client vim.lsp.Client
--- @param muted boolean
--- @param after? fun()
function M.set_muted(card, client, muted, after)
  local command = muted and 'remora.node.mute' or 'remora.node.unmute'
  server().execute(client, command, { node_id = card.id }, function(result)
    local name = card.qualified_name or card.id
    server().notify(string.format('%s is %s', name, result.muted and 'muted' or 'no longer muted'))
    if after then
      after()
    end
  end)
end

function M.keys(name, buf)
  local function map(lhs, fn, desc)
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, silent = true, desc = desc })
  end
  local function current()
    return shown[name]
  end
  map('R', function()
    show(current().card, current().client)
  end, 'Remora: refresh the subscriptions')
  map('m', function()
    local s = current()
    M.set_muted(s.card, s.client, not s.muted, function()
      show(s.card, s.client)
    end)
  end, 'Remora: mute or unmute the node')
  map('d', function()
    local s = current()
    local sub = s.rows[api.nvim_win_get_cursor(0)[1]]
    if not sub or sub.default then
      return server().notify('put the cursor on one of its own subscriptions', vim.log.levels.WARN)
    end
    server().execute(s.client, 'remora.subscriptions.remove', { node_id = s.card.id, subscription_id = sub.id }, function()
      show(s.card, s.client)
    end)
  end, 'Remora: remove the subscription under the cursor')
  api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function()
      shown[name] = nil
    end,
  })
end

--- :RemoraSubscriptions
function M.open()
  require('remora.commands').with_node(show)
end

--- :RemoraMute [off]
--- @param off boolean
function M.mute(off)
  require('remora.commands').with_node(function(card, client)
    M.set_muted(card, client, not off)
  end)
end

return M
