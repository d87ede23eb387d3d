'use strict';
// Zero configuration through the Node binding: an LSP manager gets the
// language servers of the Claude Code plugins the user has installed and
// enabled, from a Claude Code configuration directory built by the test.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test } = require('node:test');
const { idebridge, checkLeaks, findGopls } = require('./support');

checkLeaks();

function write(p, text) {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, text);
}

test('loadClaudeCode gives the enabled plugins\' servers', async () => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'idebridge-plugins-')));
  const project = path.join(base, 'project');
  write(path.join(project, 'go.mod'), 'module example.com/m\n\ngo 1.22\n');
  const config = path.join(base, 'config');
  const market = path.join(config, 'plugins', 'marketplaces', 'local');
  write(path.join(market, '.claude-plugin', 'marketplace.json'), JSON.stringify({
    name: 'local',
    plugins: [{ name: 'go-tools', source: './go-tools', strict: false,
      lspServers: { gopls: { command: findGopls(), extensionToLanguage: { '.go': 'go' } } } }],
  }));
  const install = path.join(config, 'plugins', 'cache', 'local', 'go-tools', '1.0.0');
  write(path.join(install, 'README.md'), 'go tools\n');
  write(path.join(config, 'plugins', 'installed_plugins.json'), JSON.stringify({
    version: 2, plugins: { 'go-tools@local': [{ scope: 'user', installPath: install, version: '1.0.0' }] } }));
  write(path.join(config, 'settings.json'), JSON.stringify({ enabledPlugins: { 'go-tools@local': true } }));

  const mgr = new idebridge.LSPManager({}, project);
  try {
    const env = { ...process.env, CLAUDE_CONFIG_DIR: config };
    const report = await mgr.loadClaudeCode({ env });
    assert.equal(report.configDir, config);
    assert.equal(report.projectDir, project);
    assert.deepEqual(report.servers.map((s) => s.name), ['plugin:go-tools:gopls']);
    assert.equal(report.servers[0].resolved, findGopls());
    assert.deepEqual(report.errors, []);
    assert.equal(report.plugins[0].id, 'go-tools@local');
    assert.deepEqual(mgr.servers().map((s) => s.name), ['plugin:go-tools:gopls']);

    write(path.join(project, '.claude', 'settings.local.json'), JSON.stringify({ enabledPlugins: { 'go-tools@local': false } }));
    // The project's own settings count only in a trusted project.
    assert.deepEqual((await mgr.loadClaudeCode({ env, timeoutMs: 10000 })).trust.ignored.map((i) => i.entries), [1]);
    const off = await mgr.loadClaudeCode({ env, timeoutMs: 10000, trustProject: true });
    assert.deepEqual(off.servers, []);
    assert.match(off.plugins[0].reason, /^disabled in local settings/);
    await assert.rejects(mgr.loadClaudeCode({ env: { CLAUDE_CONFIG_DIR: 1 } }), idebridge.ArgumentError);
    assert.throws(() => mgr.loadClaudeCodeSync({ env: { CLAUDE_CONFIG_DIR: 1 } }), idebridge.ArgumentError);
    assert.deepEqual(mgr.loadClaudeCodeSync({ env, trustProject: true }).servers, []);
  } finally {
    await mgr.shutdown({ timeoutMs: 10000 });
    fs.rmSync(base, { recursive: true, force: true });
  }
});
