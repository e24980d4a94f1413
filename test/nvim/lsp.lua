-- Neovim (0.7+) headless as a third-party LSP client of the Plumber server: attach, ask for code
-- lenses, profile the pipeline $PLUMBER_PIPELINE (default `numbers`), ask for code actions on the
-- line marked "// the slow step", apply the first "Apply Plumber fix: …" quick fix, save. The Plumber settings ($PLUMBER_SETTINGS, JSON) go where a
-- Neovim user puts them: init_options (read at start) and settings (workspace/configuration).
-- Results go to $PLUMBER_OUT as JSON for the mocha test to check.
local server = os.getenv('PLUMBER_SERVER')
local file = os.getenv('PLUMBER_FILE')
local out = os.getenv('PLUMBER_OUT')
local pipeline = os.getenv('PLUMBER_PIPELINE') or 'numbers'
local settings = vim.fn.json_decode(os.getenv('PLUMBER_SETTINGS') or '{}')
local result = { steps = {} }

local function finish(err)
  if err then result.error = err end
  local f = io.open(out, 'w')
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd('qall!')
end

local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.bo[bufnr].filetype = 'typescript'
  local client_id = vim.lsp.start_client({
    name = 'plumber',
    cmd = { 'node', server, '--stdio' },
    root_dir = vim.fn.fnamemodify(file, ':h'),
    init_options = { trusted = true, settings = settings },
    settings = { plumber = settings },
  })
  assert(client_id, 'the server did not start')
  vim.lsp.buf_attach_client(bufnr, client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  assert(vim.wait(60000, function() return client.initialized end, 50), 'the server did not initialize within 60 s')
  table.insert(result.steps, 'initialized')
  local uri = vim.uri_from_bufnr(bufnr)

  local function lens_titles()
    local res = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeLens', { textDocument = { uri = uri } }, 60000)
    local titles = {}
    for _, r in pairs(res or {}) do
      for _, lens in ipairs(r.result or {}) do
        local resolved = client.request_sync('codeLens/resolve', lens, 60000, bufnr)
        table.insert(titles, resolved and resolved.result and resolved.result.command and resolved.result.command.title or '?')
      end
    end
    return titles
  end

  result.lensesBefore = lens_titles()
  -- Profile, plan and verify: several runs, slow on a busy machine; the limit only guards a hang.
  local profiled, why = client.request_sync('plumber/profile', { uri = uri, pipeline = pipeline }, 240000, bufnr)
  assert(profiled and profiled.result, 'plumber/profile failed: ' .. vim.inspect(profiled or why))
  result.profile = profiled.result
  result.lensesAfter = lens_titles()

  local line = nil
  for i, l in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if l:find('// the slow step', 1, true) then line = i - 1 end
  end
  assert(line, 'no line marked "// the slow step"')
  local params = {
    textDocument = { uri = uri },
    range = { start = { line = line, character = 4 }, ['end'] = { line = line, character = 4 } },
    context = { diagnostics = {} },
  }
  local actions = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeAction', params, 60000)
  result.actions = {}
  local chosen = nil
  for _, r in pairs(actions or {}) do
    for _, a in ipairs(r.result or {}) do
      table.insert(result.actions, a.title)
      if chosen == nil and a.edit and a.title:find('Apply Plumber fix: ', 1, true) == 1 then chosen = a end
    end
  end
  assert(chosen, 'no applicable quick fix among: ' .. vim.inspect(result.actions))
  result.applied = chosen.title
  vim.lsp.util.apply_workspace_edit(chosen.edit, 'utf-16')
  vim.cmd('write')
  result.text = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n')
  vim.lsp.stop_client(client_id)
end)

finish(not ok and tostring(err) or nil)
