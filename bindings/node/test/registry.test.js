'use strict';
// The diagnostics registry, rendering and path conversion through the Node binding.

const assert = require('node:assert/strict');
const { test } = require('node:test');
const koffi = require('koffi');
const { idebridge, checkLeaks, readPublishes, readGolden } = require('./support');

checkLeaks();

function diag(line, message, severity = 1) {
  return { range: { start: { line, character: 0 }, end: { line, character: 1 } }, severity, message };
}

test('drain matches the Go API byte for byte', () => {
  const reg = new idebridge.Registry();
  try {
    for (const [server, params] of readPublishes()) reg.publish(server, params);
    // The raw bytes the C function returns, through a separate koffi
    // declaration, before any decoding.
    const lib = koffi.load(process.env.IDEBRIDGE_LIB);
    const drain = lib.func('int idb_registry_drain(uint64_t registry, _Out_ void **out)');
    const free = lib.func('void idb_free(void *p)');
    const out = [null];
    assert.equal(drain(reg.handle, out), idebridge.IDB_OK);
    const len = Number(lib.func('size_t strlen(void *s)')(out[0]));
    const raw = Buffer.from(koffi.decode(out[0], 'uint8_t', len));
    free(out[0]);
    assert.deepEqual(raw, readGolden('drain.golden.json'));
    assert.equal(reg.drain(), null, 'everything was delivered');
  } finally {
    reg.close();
  }
});

test('decoded drain and render', () => {
  const reg = new idebridge.Registry();
  let att;
  try {
    for (const [server, params] of readPublishes()) reg.publish(server, JSON.parse(params));
    att = reg.drain();
  } finally {
    reg.close();
  }
  assert.deepEqual(att, JSON.parse(readGolden('drain.golden.json').toString('utf8')));
  const text = idebridge.renderAttachment(att, { projectDir: '/p' });
  assert.deepEqual(Buffer.from(text, 'utf8'), readGolden('render.golden.txt'));
  const short = idebridge.renderAttachment(att, { projectDir: '/p', maxChars: 200, tag: 'diags' });
  assert.ok(short.startsWith('<diags>'), short);
  assert.ok([...short].length <= 200);
});

test('options, dedup, reset and versions', () => {
  const params = { uri: 'file:///a.go', version: 5, diagnostics: [diag(1, 'e1'), diag(2, 'e2'), diag(3, 'h', 4)] };
  const reg = new idebridge.Registry({ maxPerFile: 5, minSeverity: 'Warning' });
  try {
    reg.publish('srv', params);
    assert.deepEqual(reg.drain().files[0].diagnostics.map((d) => d.message), ['e1', 'e2']);
    reg.publish('srv', params);
    assert.equal(reg.drain(), null, 'an identical set is deduplicated');
    reg.reset('file:///a.go');
    reg.publish('srv', params);
    assert.notEqual(reg.drain(), null, 'reset(uri) forgets what was delivered');
    reg.reset();
    reg.setVersion('file:///a.go', 6);
    reg.publish('srv', params);
    assert.equal(reg.drain(), null, 'a publish for version 5 < 6 is stale');
    const stats = reg.stats();
    assert.equal(stats.stale, 1);
    assert.equal(stats.attachments, 2);
  } finally {
    reg.close();
  }
});

test('errors', () => {
  assert.throws(() => new idebridge.Registry({ minSeverity: 'loud' }), idebridge.ArgumentError);
  const reg = new idebridge.Registry();
  try {
    assert.throws(() => reg.publish('srv', { uri: 'file:///a', diagnostics: { message: 3 } }),
      (e) => e instanceof idebridge.ArgumentError && /malformed diagnostics/.test(e.message));
    assert.throws(() => new idebridge.Registry({ maxDocuments: -1 }),
      (e) => e instanceof idebridge.ArgumentError && /MaxDocuments is -1/.test(e.message));
    assert.throws(() => reg.publish('srv', '{not json'), idebridge.ArgumentError);
  } finally {
    reg.close();
  }
  assert.throws(() => idebridge.renderAttachment('{'), idebridge.ArgumentError);
});

test('invalid diagnostics are dropped and noted, the valid ones kept', () => {
  const reg = new idebridge.Registry();
  try {
    reg.publish('srv', {
      uri: 'file:///a.go',
      diagnostics: [diag(1, 'kept'), { ...diag(2, 'bad'), severity: 99 }, { message: 3 }],
    });
    const att = reg.drain();
    assert.deepEqual(att.files[0].diagnostics.map((d) => d.message), ['kept']);
    assert.deepEqual(att.notes, ['/a.go: 2 invalid diagnostics from srv were dropped ' +
      '(diagnostics[1].severity: number 99 is not a severity (1 to 4))']);
    assert.equal(reg.stats().invalid, 2);
  } finally {
    reg.close();
  }
});

test('the count not shown is true: the per-publish cap counts', () => {
  const reg = new idebridge.Registry();
  try {
    const diagnostics = [];
    for (let i = 0; i < 5000; i++) diagnostics.push(diag(i, 'e' + i));
    reg.publish('srv', { uri: 'file:///big.go', diagnostics });
    const att = reg.drain();
    assert.equal(att.files[0].diagnostics.length, 10);
    assert.equal(att.cut, 4990);
    assert.match(idebridge.renderAttachment(att), /… 4990 more not shown/);
  } finally {
    reg.close();
  }
});

test('closed, stale, random and wrong handles', () => {
  const reg = new idebridge.Registry();
  const h = reg.handle;
  assert.equal(typeof h, 'bigint');
  reg.close();
  reg.close(); // idempotent
  assert.equal(reg.handle, 0n);
  assert.throws(() => reg.drain(), idebridge.ClosedError);
  // Reach the C functions with bad handles through a raw declaration.
  const lib = koffi.load(process.env.IDEBRIDGE_LIB);
  const drain = lib.func('int idb_registry_drain(uint64_t registry, _Out_ void **out)');
  const free = lib.func('int idb_registry_free(uint64_t registry)');
  for (const bad of [0n, h, 1n, 12345n, 0xfedcba9876543210n, h ^ (1n << 60n)]) {
    assert.equal(drain(bad, [null]), idebridge.IDB_ERR_HANDLE, `drain(${bad})`);
    assert.equal(free(bad), idebridge.IDB_ERR_HANDLE, `free(${bad})`);
  }
});

test('Symbol.dispose closes where the runtime has it', () => {
  const before = idebridge.handleCount();
  const reg = new idebridge.Registry();
  if (typeof Symbol.dispose === 'symbol') {
    reg[Symbol.dispose]();
  } else {
    assert.equal(reg[Symbol.for('Symbol.dispose')], undefined);
    reg.close();
  }
  assert.equal(idebridge.handleCount(), before);
  assert.equal(reg.handle, 0n);
});

test('wsl path conversion', () => {
  assert.equal(idebridge.pathToLocal('C:\\Users\\me\\p\\main.go', { distro: 'Ubuntu' }), '/mnt/c/Users/me/p/main.go');
  assert.equal(idebridge.pathToLocal('\\\\wsl$\\Ubuntu\\home\\me\\x.go', { distro: 'Ubuntu' }), '/home/me/x.go');
  assert.equal(idebridge.pathToIde('/home/me/x.go', { distro: 'Ubuntu' }), '\\\\wsl$\\Ubuntu\\home\\me\\x.go');
  assert.equal(idebridge.pathToIde('/m/d/x', { mountRoot: '/m' }), 'D:\\x');
  assert.equal(idebridge.pathToLocal('relative'), 'relative');
  assert.throws(() => idebridge.pathToLocal(null), idebridge.ArgumentError);
});
