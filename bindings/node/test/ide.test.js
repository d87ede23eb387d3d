'use strict';
// Discovery and a real IDE round trip through the Node binding.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { test, before, after } = require('node:test');
const { idebridge, checkLeaks, HeadlessIDE } = require('./support');

checkLeaks();

let ide;
before(async () => {
  ide = await HeadlessIDE.start();
});
after(async () => {
  await ide.close();
});

function connect(options = {}) {
  return idebridge.IDEClient.connectSync({ cwd: ide.workspace, env: ide.env(), timeoutMs: 10000, ...options });
}

function connectAsync(options = {}) {
  return idebridge.IDEClient.connect({ cwd: ide.workspace, env: ide.env(), timeoutMs: 10000, ...options });
}

test('discover', async () => {
  const cands = await idebridge.discover({ cwd: ide.workspace, env: ide.env() });
  assert.deepEqual(idebridge.discoverSync({ cwd: ide.workspace, env: ide.env() }), cands);
  assert.equal(cands.length, 1);
  const c = cands[0];
  assert.equal(c.valid, true, c.message);
  assert.equal(c.port, ide.port);
  assert.equal(c.transport, 'ws');
  assert.equal(c.path, ide.lockfile);
  assert.equal('authToken' in c, false);
  const elsewhere = await idebridge.discover({ cwd: '/', env: ide.env() });
  assert.equal(elsewhere[0].valid, false);
  assert.ok(elsewhere[0].reasons.includes('workspace_mismatch'));
});

test('round trip', async () => {
  const file = path.join(ide.workspace, 'main.go');
  fs.writeFileSync(file, 'package main\n');
  const client = await connectAsync({ port: ide.port });
  try {
    assert.equal(client.info().protocolVersion, '2024-11-05');
    const names = new Set((await client.tools()).map((t) => t.name));
    for (const n of ['openFile', 'openDiff', 'getWorkspaceFolders']) assert.ok(names.has(n), n);
    const folders = await client.call('getWorkspaceFolders');
    assert.ok(folders.content[0].text.replaceAll('\\/', '/').includes(ide.workspace));
    assert.deepEqual(client.callSync('getWorkspaceFolders', {}, 5000), folders);
    const res = await client.call('openDiff', { old_file_path: file, new_file_path: file, new_file_contents: 'package main // new\n', tab_name: 't' }, { timeoutMs: 10000 });
    assert.deepEqual(res.content.map((c) => c.text), ['FILE_SAVED', 'package main // new\n']);
    await assert.rejects(client.call('noSuchTool', {}), (e) => e instanceof idebridge.ToolError && /noSuchTool/.test(e.message) && e.code === -32601);
    assert.throws(() => client.callSync('noSuchTool', {}), (e) => e instanceof idebridge.ToolError && e.code === -32601 && e.function === 'idb_ide_call');
    await assert.rejects(client.call('openFile', '[1]'), idebridge.ArgumentError);
  } finally {
    client.close();
  }
});

test('notifications', async () => {
  const client = connect();
  try {
    assert.equal(client.nextNotificationSync(), null);
    assert.equal(await client.nextNotification({ timeoutMs: 20 }), null);
    const params = { text: 'héllo', filePath: '/x.go', selection: null };
    const next = client.nextNotification({ timeoutMs: 10000 });
    await ide.notify('selection_changed', params);
    assert.deepEqual(await next, { method: 'selection_changed', params });
  } finally {
    client.close();
  }
});

test('errors and closing', async () => {
  assert.throws(() => connect({ port: 1 }), (e) => e instanceof idebridge.NotFoundError && /no IDE lockfile for port 1/.test(e.message));
  await assert.rejects(connectAsync({ port: 1 }), (e) => e instanceof idebridge.NotFoundError && /no IDE lockfile for port 1/.test(e.message));
  assert.throws(() => connect({ cwd: '/' }), idebridge.NotFoundError);
  await assert.rejects(connectAsync({ cwd: '/', wait: true, timeoutMs: 300 }), idebridge.TimeoutError);
  assert.throws(() => new idebridge.IDEClient(), TypeError);
  const client = connect({ url: ide.url, authToken: ide.authToken });
  assert.equal(typeof client.handle, 'bigint');
  client.close();
  client.close();
  assert.throws(() => client.toolsSync(), idebridge.ClosedError);
  await assert.rejects(client.tools(), idebridge.ClosedError);
});

test('process.env is sent when env is omitted', () => {
  const saved = process.env.CLAUDE_CONFIG_DIR;
  process.env.CLAUDE_CONFIG_DIR = ide.configDir;
  try {
    const client = idebridge.IDEClient.connectSync({ cwd: ide.workspace, port: ide.port, timeoutMs: 10000 });
    client.close();
  } finally {
    if (saved === undefined) delete process.env.CLAUDE_CONFIG_DIR;
    else process.env.CLAUDE_CONFIG_DIR = saved;
  }
});
