-- Test init for headless Neovim (`nvim --headless --clean -u init.lua`).
--
-- Puts the plugin (clients/nvim) on the runtimepath, configures the server
-- from the environment the test sets, records what a person would see, and
-- runs one scenario of scenarios.lua once Neovim has started.
--
-- REMORA_REPO        the repository root
-- REMORA_TEST_SERVER the server command (argv[0])
-- REMORA_TEST_SETTINGS initializationOptions as JSON
-- REMORA_TEST_SETUP  'setup' (require('remora').setup) or 'plain' (vim.lsp.enable only)
-- REMORA_TEST_SCENARIO, REMORA_TEST_OUT, REMORA_TEST_ATTACH_MS: see driver.lua
local repo = assert(os.getenv('REMORA_REPO'), 'REMORA_REPO is not set')
vim.opt.runtimepath:prepend(repo .. '/clients/nvim')
package.path = repo .. '/tests/clients/nvim/?.lua;' .. package.path
vim.opt.swapfile = false
vim.opt.more = false

local driver = require('driver')
driver.record()

local lsp = {
  cmd = { assert(os.getenv('REMORA_TEST_SERVER')) },
  init_options = vim.json.decode(os.getenv('REMORA_TEST_SETTINGS') or '{}'),
}
if os.getenv('REMORA_TEST_SETUP') == 'plain' then
  vim.lsp.config('remora', lsp)
  vim.lsp.enable('remora')
else
  require('remora').setup({ lsp = lsp })
end

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  callback = function()
    -- Outside the autocmd: autocmds do not nest, and :edit must fire FileType.
    vim.schedule(function()
      driver.run(assert(os.getenv('REMORA_TEST_SCENARIO')))
    end)
  end,
})
