--- :RemoraTrust [yes|no|forget]: whether the project's repository is trusted
--- and who decided, what it wants that needs trust (its Python code, its
--- bundles and tools, its own model server) and where your API key may go —
--- shown as a message (no argument); `yes` / `no` remembers your answer (the
--- project restarts with it); `forget` forgets every answer about the project
--- (its trust and every key host: untrusted until you answer again).
--- Neovim does not pass a workspace trust of its own, so the server asks
--- once when a repository wants something; this is how you change your mind.
local M = {}

M.WHO = {
  client = "your editor's workspace trust",
  person = 'your remembered answer',
  session = 'your answer in this session',
  undecided = 'nobody has answered: untrusted',
}

--- The message's lines for remora.trust.get's answer.
--- @param rows table[] { root, trusted, decided_by, wants, hosts }
--- @return string[]
function M.lines(rows)
  local lines = {}
  for _, row in ipairs(rows or {}) do
    table.insert(
      lines,
      string.format('%s: %s (%s)', row.root or '?', row.trusted == true and 'trusted' or 'not trusted', M.WHO[row.decided_by] or '?')
    )
    if type(row.wants) == 'string' and row.wants ~= '' then
      table.insert(lines, '  it wants to ' .. row.wants)
    end
    local hosts = vim.tbl_keys(type(row.hosts) == 'table' and row.hosts or {})
    table.sort(hosts)
    for _, host in ipairs(hosts) do
      table.insert(lines, string.format('  %s %s your API key', host, row.hosts[host] and 'may receive' or 'may not receive'))
    end
  end
  return lines
end

local CALLS = {
  [''] = { 'remora.trust.get', {} },
  yes = { 'remora.trust.set', { trusted = true } },
  no = { 'remora.trust.set', { trusted = false } },
  forget = { 'remora.trust.revoke', {} },
}

--- :RemoraTrust [yes|no|forget]
--- @param arg string
function M.command(arg)
  local server = require('remora.server')
  local call = CALLS[arg or '']
  if not call then
    return server.notify('RemoraTrust takes nothing, yes, no or forget', vim.log.levels.WARN)
  end
  server.project_client(function(client)
    server.execute(client, call[1], call[2], function(rows)
      local lines = M.lines(rows)
      if #lines == 0 then
        -- Single-file mode: no remora.yaml, pyproject.toml or .git above the file.
        return server.notify('no project folder here (no remora.yaml, pyproject.toml or .git above this file), so no repository to trust: its code never runs')
      end
      server.notify(table.concat(lines, '\n'))
    end)
  end)
end

return M
