'use strict';
// Version, errors and lockfile parsing through the Node binding.

const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test } = require('node:test');
const { idebridge, checkLeaks } = require('./support');

checkLeaks();

test('version', () => {
  assert.match(idebridge.version(), /^\d+\.\d+\.\d+/);
});

test('parseLockfile reads the JSON format', () => {
  const data = '{"workspaceFolders":["\\/home\\/me\\/p"],"pid":42,"ideName":"VS Code","transport":"ws"}';
  const lf = idebridge.parseLockfile('/tmp/ide/12345.lock', data);
  assert.equal(lf.port, 12345);
  assert.deepEqual(lf.workspaceFolders, ['/home/me/p']);
  assert.equal(lf.pid, 42);
  assert.equal(lf.transport, 'ws');
  assert.equal(lf.path, '/tmp/ide/12345.lock');
});

test('parseLockfile reads legacy bytes and Unicode', () => {
  const lf = idebridge.parseLockfile('80.lock', Buffer.from('/a\r\n\n/b \n'));
  assert.deepEqual(lf.workspaceFolders, ['/a', '/b']);
  assert.equal(lf.legacy, true);
  assert.equal(lf.transport, 'sse');
  const u = idebridge.parseLockfile('81.lock', JSON.stringify({ workspaceFolders: ['/home/zoë/프로젝트'] }));
  assert.deepEqual(u.workspaceFolders, ['/home/zoë/프로젝트']);
  // A view into a larger buffer passes only its own bytes.
  const big = new Uint8Array(Buffer.from('XX/c\nYY'));
  assert.deepEqual(idebridge.parseLockfile('82.lock', big.subarray(2, 5)).workspaceFolders, ['/c']);
});

test('errors carry the library message and status', () => {
  assert.throws(() => idebridge.parseLockfile('notes.txt', '{}'), (e) => {
    assert.ok(e instanceof idebridge.IdebridgeError);
    assert.equal(e.status, idebridge.IDB_ERROR);
    assert.equal(e.function, 'idb_parse_lockfile');
    // The message names what the user called; e.function keeps the C name.
    assert.match(e.message, /^parseLockfile: .*not a lockfile name/);
    return true;
  });
  assert.throws(() => idebridge.parseLockfile('1.lock', Buffer.from([0x2f, 0x61, 0, 1])), /binary/);
  assert.throws(() => idebridge.parseLockfile(null, '{}'), (e) => {
    assert.ok(e instanceof idebridge.ArgumentError);
    assert.equal(e.status, idebridge.IDB_ERR_ARGUMENT);
    assert.match(e.message, /name is NULL/);
    return true;
  });
});

test('the error classes derive from IdebridgeError', () => {
  for (const cls of [idebridge.HandleError, idebridge.TimeoutError, idebridge.NotFoundError,
    idebridge.ArgumentError, idebridge.ClosedError, idebridge.ToolError, idebridge.InternalError]) {
    assert.ok(new cls('x') instanceof idebridge.IdebridgeError, cls.name);
    assert.equal(new cls('x').name, cls.name);
  }
});

test('the library is found in the module\'s prebuilds', () => {
  const lib = process.env.IDEBRIDGE_LIB || path.resolve(__dirname, '..', '..', '..', 'build', 'libidebridge.so');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'idebridge-node-'));
  try {
    fs.copyFileSync(path.join(__dirname, '..', 'index.js'), path.join(tmp, 'index.js'));
    const pre = path.join(tmp, 'prebuilds', `${process.platform}-${process.arch}`);
    fs.mkdirSync(pre, { recursive: true });
    fs.copyFileSync(lib, path.join(pre, 'libidebridge.so'));
    fs.symlinkSync(path.join(__dirname, '..', 'node_modules'), path.join(tmp, 'node_modules'));
    const env = { ...process.env };
    delete env.IDEBRIDGE_LIB;
    const r = spawnSync(process.execPath, ['-e', 'console.log(require("./index.js").version())'], { cwd: tmp, env, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), idebridge.version());
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
