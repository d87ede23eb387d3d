'use strict';
// libuv installs Node's SIGCHLD handler without SA_ONSTACK, and the
// library's children (language servers) signal the library's own threads,
// where such a handler would run on a goroutine's small stack and corrupt
// the memory below it. The binding keeps the handler installed and the
// library gives it SA_ONSTACK; a handler libuv installs anew gets it from
// the next blocking call.

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const { once } = require('node:events');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test } = require('node:test');
const koffi = require('koffi');
const { idebridge } = require('./support');

const SA_ONSTACK = 0x08000000;
const linux = process.platform === 'linux';

/** Returns SIGCHLD's handler address and flags (glibc's struct sigaction). */
function sigchld() {
  const libc = koffi.load('libc.so.6');
  const sigaction = libc.func('int sigaction(int, void *, void *)');
  const buf = Buffer.alloc(152); // handler, 128-byte mask, int flags, restorer
  assert.equal(sigaction(17, null, buf), 0);
  return { handler: buf.readBigUInt64LE(0), flags: buf.readInt32LE(136) };
}

async function child(args) {
  const c = spawn(args[0], args.slice(1), { stdio: 'ignore' });
  await once(c, 'spawn');
  return c;
}

test('SIGCHLD runs on the signal stack, with and without children', { skip: !linux && 'glibc layout' }, async () => {
  assert.equal(sigchld().handler, 0n, 'nothing handles SIGCHLD before the library loads');
  idebridge.version();
  assert.equal(process.listenerCount('SIGCHLD'), 1);
  for (let i = 0; i < 2; i++) {
    let s = sigchld();
    assert.notEqual(s.handler, 0n);
    assert.ok(s.flags & SA_ONSTACK, `flags ${s.flags.toString(16)}`);
    const c = await child(['true']);
    await once(c, 'exit');
    s = sigchld();
    assert.notEqual(s.handler, 0n, 'the handler stays when the last child has exited');
    assert.ok(s.flags & SA_ONSTACK);
  }
});

test('a handler libuv installs anew gets SA_ONSTACK from the next blocking call', { skip: !linux && 'glibc layout' }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idebridge-sigchld-'));
  process.removeAllListeners('SIGCHLD');
  try {
    assert.equal(sigchld().handler, 0n, 'without the listener or children libuv removes its handler');
    const c = await child(['sleep', '30']);
    try {
      assert.equal(sigchld().flags & SA_ONSTACK, 0, 'libuv installs its handler without SA_ONSTACK');
      assert.deepEqual(await idebridge.discover({ env: { CLAUDE_CONFIG_DIR: dir } }), []);
      assert.ok(sigchld().flags & SA_ONSTACK);
    } finally {
      c.kill();
      await once(c, 'exit');
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
