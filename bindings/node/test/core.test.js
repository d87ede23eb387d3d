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

test('a library of another build is refused at load, saying what it lacks and what to do', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'idebridge-node-'));
  try {
    const src = path.join(tmp, 'old.c');
    fs.writeFileSync(src, '#include <stdlib.h>\n' +
      'int idb_version(void **out) { *out = 0; return 0; }\n' +
      'void idb_free(void *p) { free(p); }\n' +
      'char *idb_last_error(void) { return 0; }\n');
    const old = path.join(tmp, 'libold.so');
    const cc = spawnSync('gcc', ['-shared', '-fPIC', '-o', old, src], { encoding: 'utf8' });
    assert.equal(cc.status, 0, cc.stderr);
    const run = (lib) => spawnSync(process.execPath, ['-e', 'require("./index.js").version()'],
      { cwd: path.join(__dirname, '..'), env: { ...process.env, IDEBRIDGE_LIB: lib }, encoding: 'utf8' });
    let r = run(old);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /IdebridgeError: \S+libold\.so is older than this package: it lacks (\d+) of the (\d+) functions the package calls \(idb_handle_count, /);
    const [, lacks, all] = r.stderr.match(/lacks (\d+) of the (\d+)/);
    assert.equal(Number(lacks), Number(all) - 3);
    assert.match(r.stderr, /IDEBRIDGE_LIB/);
    r = run('libm.so.6');
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /libm\.so\.6 is not libidebridge: it has no idb_version/);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
