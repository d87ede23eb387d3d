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
