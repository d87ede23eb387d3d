'use strict';
// The LSP manager with a real gopls through the Node binding.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test } = require('node:test');
const { setTimeout: sleep } = require('node:timers/promises');
const { idebridge, checkLeaks, findGopls } = require('./support');

checkLeaks();

const BROKEN = 'package main\n\nfunc main() {\n\tundefinedThing()\n}\n';
const FIXED = 'package main\n\nfunc main() {\n}\n';

function goModule() {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'idebridge-lsp-')));
  fs.writeFileSync(path.join(dir, 'go.mod'), 'module example.com/m\n\ngo 1.22\n');
  fs.writeFileSync(path.join(dir, 'main.go'), BROKEN);
  return dir;
}

test('gopls round trip', async () => {
  const dir = goModule();
  const mainGo = path.join(dir, 'main.go');
  const mgr = new idebridge.LSPManager({ gopls: { command: findGopls(), extensionToLanguage: { '.go': 'go' } } }, dir);
  let pid;
  try {
    await mgr.open(mainGo);
    const result = await mgr.settle(mainGo, { timeoutMs: 30000 });
    assert.equal(result.server, 'gopls');
    assert.equal(result.path, mainGo);
    // gopls may publish a file's first type errors after the progress
    // settle saw ended: settle and drain until they show (30 s at most).
    let att = null;
    for (const deadline = Date.now() + 30000; Date.now() < deadline;) {
      mgr.settleSync(mainGo, 2000);
      const a = mgr.drain();
      if (a && JSON.stringify(a).includes('undefined: undefinedThing')) {
        att = a;
        break;
      }
      await sleep(100);
    }
    assert.ok(att, 'no attachment reported the undefined name');
    assert.deepEqual(att.servers, ['gopls']);
    assert.match(idebridge.renderAttachment(att, { projectDir: dir }), /main\.go:[\s\S]*undefined: undefinedThing/);
    const servers = mgr.servers();
    assert.deepEqual(servers.map((s) => s.name), ['gopls']);
    pid = servers[0].pid;
    assert.ok(pid > 0);

    mgr.changeSync(mainGo, FIXED);
    await mgr.settle(mainGo, { timeoutMs: 30000 });
    assert.ok(!JSON.stringify(mgr.drain()).includes('undefinedThing'));
    await mgr.save(mainGo);
    mgr.closeFileSync(mainGo);
    await assert.rejects(mgr.settle(mainGo, { timeoutMs: 1000 }), idebridge.NotFoundError);
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'x');
    assert.throws(() => mgr.openSync(path.join(dir, 'notes.txt')), (e) => e instanceof idebridge.NotFoundError && /no language server/.test(e.message));
  } finally {
    await mgr.shutdown({ timeoutMs: 10000 });
    fs.rmSync(dir, { recursive: true, force: true });
  }
  assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' });
  assert.throws(() => mgr.drain(), idebridge.ClosedError);
});

test('config errors and idempotent shutdown', async () => {
  const dir = goModule();
  try {
    assert.throws(() => new idebridge.LSPManager({ x: { extensionToLanguage: { '.go': 'go' } } }, dir),
      (e) => e instanceof idebridge.ArgumentError && /command/.test(e.message));
    assert.throws(() => new idebridge.LSPManager('{not json', dir), idebridge.ArgumentError);
    const mgr = new idebridge.LSPManager({}, dir, { maxOpenDocuments: 3 });
    mgr.shutdownSync(5000);
    mgr.shutdownSync();
    mgr.close();
    await mgr.shutdown();
    assert.equal(mgr.handle, 0n);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// Freshness read from Node: settle's freshness and fresh flag for a real
// server that takes its time, and for one that never publishes.
const REPO = path.resolve(__dirname, '..', '..', '..');

function npmServer(name) {
  const dirs = [process.env.LSP_BIN, path.join(REPO, 'tools', 'lsp', 'node_modules', '.bin')].filter(Boolean);
  for (const d of dirs) {
    const p = path.join(d, name);
    if (fs.existsSync(p)) return p;
  }
  throw new Error(`${name} not found in ${dirs.join(', ')}: run \`make lsp-servers\``);
}

test('pyright: fresh only once it answered, exact columns', async () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'idebridge-fresh-')));
  fs.cpSync(path.join(REPO, 'lsp', 'testdata', 'conformance', 'python'), dir, { recursive: true });
  const broken = path.join(dir, 'broken.py');
  const clean = path.join(dir, 'clean.py');
  const mgr = new idebridge.LSPManager({ pyright: { command: npmServer('pyright-langserver'), args: ['--stdio'], extensionToLanguage: { '.py': 'python' } } },
    dir, { settleTimeoutMs: 120000 });
  try {
    await mgr.open(broken);
    await mgr.open(clean);
    for (const p of [broken, clean]) {
      const res = await mgr.settle(p);
      assert.equal(res.fresh, true, JSON.stringify(res));
      assert.ok(['pulled', 'published', 'quiet', 'progress-ended'].includes(res.freshness), res.freshness);
    }
    const att = mgr.drain();
    assert.ok(att);
    assert.deepEqual(att.notes || [], []);
    assert.deepEqual(att.files.map((f) => f.path), [broken]);
    const got = att.files[0].diagnostics.map((d) => [d.range.start.line, d.range.start.character]).sort();
    assert.deepEqual(got, [[1, 21], [2, 11]]); // characters: the emoji is one, not two UTF-16 units
  } finally {
    await mgr.shutdown({ timeoutMs: 10000 });
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a server that never publishes: timed out, noted', async () => {
  const { execFileSync } = require('node:child_process');
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'idebridge-mute-')));
  const bin = path.join(dir, 'scriptls');
  execFileSync('go', ['build', '-o', bin, './lsp/testdata/scriptls'], { cwd: REPO });
  const file = path.join(dir, 'a.s');
  fs.writeFileSync(file, 'ERROR\n');
  const mgr = new idebridge.LSPManager({ mute: { command: bin, args: ['-never-publish'], extensionToLanguage: { '.s': 's' } } },
    dir, { settleTimeoutMs: 700 });
  try {
    await mgr.open(file);
    const res = await mgr.settle(file);
    assert.equal(res.freshness, 'timed-out');
    assert.equal(res.fresh, false);
    const att = mgr.drain();
    assert.ok(att, 'silence must not read as no errors');
    assert.deepEqual(att.files, []);
    assert.match(att.notes[0], /a\.s: diagnostics unknown: mute has not reported any for it/);
    assert.throws(() => new idebridge.LSPManager({}, dir, { maxOpenDocuments: -1 }),
      (e) => e instanceof idebridge.ArgumentError && /MaxOpenDocuments is negative/.test(e.message));
  } finally {
    await mgr.shutdown({ timeoutMs: 10000 });
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
